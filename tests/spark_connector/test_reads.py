"""Rows read through the native connector equal Spark's own reading of the same Hive tables."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.spark_connector.conftest import service_plan
from tests.support.service import Server
from tests.support.spark_plans import preferred_hosts
from tests.support.spark_settings import spark_settings


def multiset(rows: list[Any]) -> Counter[str]:
    return Counter(repr(row.asDict(recursive=True)) for row in rows)


@pytest.mark.parametrize("table", ["pq", "orc", "txt", "csv", "ds", "ds_csv", "ds_json"])
def test_same_rows_as_spark_reading_the_table_itself(spark: Any, connected: str, written: str, table: str) -> None:
    ours = spark.sql(f"SELECT * FROM {connected}.{written}.{table}").collect()
    theirs = spark.sql(f"SELECT * FROM spark_catalog.{written}.{table}").collect()
    assert len(ours) > 0
    assert multiset(ours) == multiset(theirs)


def test_header_lines_are_skipped_in_every_file(spark: Any, connected: str, written: str) -> None:
    rows = spark.sql(f"SELECT id, name FROM {connected}.{written}.headed").collect()
    assert sorted((row.id, row.name) for row in rows) == [(1, "a"), (2, "b"), (3, "c")]


def test_hive_json_serde_tables_read_as_json_lines(spark: Any, connected: str, written: str) -> None:
    rows = spark.sql(f"SELECT id, name, point FROM {connected}.{written}.hive_json").collect()
    assert sorted((row.id, row.name, None if row.point is None else (row.point.x, list(row.point.tags))) for row in rows) == [
        (1, "a", (1.5, ["t"])), (2, None, None), (3, "c", None)]


def test_the_scan_is_the_connectors_with_spark_readers(spark: Any, connected: str, written: str) -> None:
    plan = spark.sql(f"SELECT id FROM {connected}.{written}.pq").select("id")._jdf.queryExecution().executedPlan().toString()
    assert "BatchScan" in plan and f"hms-catalog {connected}.{written}.pq" in plan
    assert "Reader: parquet" in plan


@pytest.mark.parametrize("where, partitions", [("dt = '2024-01-02'", 1), ("hr IN (1, 2)", 2), ("hr > 5", 0),
                                               ("dt = '2024-01-01' OR hr = 2", 2), ("NOT (dt = '2024-01-01')", 1)])
def test_partition_filters_prune_in_the_service_plan(spark: Any, connected: str, written: str, connector_service: Server,
                                                     where: str, partitions: int) -> None:
    query = f"SELECT id, dt, hr FROM {{}}.{written}.pq WHERE {where}"
    frame = spark.sql(query.format(connected))
    assert multiset(frame.collect()) == multiset(spark.sql(query.format("spark_catalog")).collect())
    plan = service_plan(connector_service, connected, written, "pq", where)
    assert plan.summary.partitions_scanned == partitions
    described = frame._jdf.queryExecution().executedPlan().toString()
    assert f"Splits: {len(plan.splits)} of {len(plan.splits)}," in described


def test_spark_partitions_are_packed_from_whole_splits_as_spark_packs_files(spark: Any, connected: str, written: str,
                                                                           connector_service: Server) -> None:
    plan = service_plan(connector_service, connected, written, "orc")
    assert len(plan.splits) >= 2
    frame = spark.sql(f"SELECT * FROM {connected}.{written}.orc")
    # small files: fewer tasks than files, as many as Spark's own reader of the same files makes
    theirs = spark.sql(f"SELECT * FROM spark_catalog.{written}.orc").rdd.getNumPartitions()
    assert frame.rdd.getNumPartitions() == theirs < len(plan.splits)
    with spark_settings(spark, {"spark.sql.files.maxPartitionBytes": "1", "spark.sql.files.openCostInBytes": "0"}):
        # partitions of one byte at most: each split alone, none cut
        assert spark.sql(f"SELECT * FROM {connected}.{written}.orc").rdd.getNumPartitions() == len(plan.splits)


def test_data_filters_reach_the_reader_and_rows_are_still_filtered(spark: Any, connected: str, written: str) -> None:
    frame = spark.sql(f"SELECT id FROM {connected}.{written}.pq WHERE big > 0")
    assert sorted(row.id for row in frame.collect()) == [1, 1]
    assert "GreaterThan(big,0)" in frame._jdf.queryExecution().executedPlan().toString()


def test_count_and_aggregates(spark: Any, connected: str, written: str) -> None:
    for table in ("pq", "orc", "txt"):
        ours = spark.sql(f"SELECT count(*) AS n, count(name) AS names, sum(big) AS total FROM {connected}.{written}.{table}").collect()
        theirs = spark.sql(f"SELECT count(*) AS n, count(name) AS names, sum(big) AS total FROM spark_catalog.{written}.{table}").collect()
        assert ours == theirs


def test_an_empty_partition_makes_no_group_as_in_sparks_own_scan(spark: Any, connected: str, written: str) -> None:
    """Aggregates answered from metadata, grouped by a partition column: a partition with no rows (added by
    ALTER TABLE .. ADD PARTITION) gives no group, and still counts 0 without a GROUP BY."""
    spark.sql(f"CREATE TABLE spark_catalog.{written}.gaps (id INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO spark_catalog.{written}.gaps PARTITION (p='full') VALUES (1), (2)")
    spark.sql(f"ALTER TABLE spark_catalog.{written}.gaps ADD PARTITION (p='empty')")
    for query in ("SELECT p, count(*), max(id) FROM {}.gaps GROUP BY p", "SELECT count(*) FROM {}.gaps",
                  "SELECT count(*) FROM {}.gaps WHERE p = 'empty'", "SELECT p, count(*) FROM {}.gaps WHERE p = 'empty' GROUP BY p"):
        ours = sorted(spark.sql(query.format(f"{connected}.{written}")).collect())
        assert ours == sorted(spark.sql(query.format(f"spark_catalog.{written}")).collect()), query


def test_joins_across_catalogs(spark: Any, connected: str, written: str) -> None:
    query = (f"SELECT a.id, a.dt, b.label FROM {{0}}.{written}.pq a JOIN spark_catalog.{written}.ds b ON a.id = b.id "
             f"WHERE a.hr = 1")
    assert multiset(spark.sql(query.format(connected)).collect()) == multiset(spark.sql(query.format("spark_catalog")).collect())


@pytest.mark.parametrize("table", ["big_pq", "big_orc", "big_txt"])
def test_splits_starting_mid_file_give_the_same_rows(spark: Any, small_splits: str, large_files: str, table: str) -> None:
    fingerprint = "SELECT count(*), sum(id), sum(CAST(xxhash64(id, label, score) AS DECIMAL(38, 0))) FROM {}"
    with spark_settings(spark, {"spark.sql.files.maxPartitionBytes": "65536", "spark.sql.files.openCostInBytes": "0"}):
        frame = spark.sql(f"SELECT * FROM {small_splits}.{large_files}.{table}")
        assert frame.rdd.getNumPartitions() >= 4  # each 64 KiB split read by a task of its own
        ours = spark.sql(fingerprint.format(f"{small_splits}.{large_files}.{table}")).collect()
    theirs = spark.sql(fingerprint.format(f"spark_catalog.{large_files}.{table}")).collect()
    assert ours == theirs and ours[0][0] == 60_000
    # packed again under the default settings, the same rows
    assert spark.sql(fingerprint.format(f"{small_splits}.{large_files}.{table}")).collect() == theirs


def test_each_partition_carries_its_splits_hosts_and_prefers_them_as_spark_does(spark: Any, connected: str, written: str,
                                                                                connector_service: Server) -> None:
    """The splits' hosts reach Spark's file partitions; Spark prefers them but ``localhost``, where local
    files are placed (tests/spark_connector/test_locality.py), as for its own files."""
    plan = service_plan(connector_service, connected, written, "pq")
    frame = spark.sql(f"SELECT * FROM {connected}.{written}.pq")
    scan = frame._jdf.queryExecution().executedPlan().collectLeaves().head()
    inputs = scan.inputPartitions()  # Spark's FilePartitions, as the connector packed them
    carried = {host for i in range(inputs.size()) for file in inputs.apply(i).files() for host in file.locations()}
    preferred = preferred_hosts(spark, scan.inputRDD())
    hosts = {host for split in plan.splits for host in split.hosts}
    assert carried == hosts == {"localhost"}  # the written table is on local disk
    assert preferred == hosts - {"localhost"}


@pytest.fixture(scope="module")
def edge_tables(spark: Any, written: str) -> str:
    """Typed partition keys with a NULL (Hive's default partition), an empty table, mixed-case columns, a view."""
    spark.sql(f"CREATE TABLE {written}.typed (v STRING, Mixed_Case INT) PARTITIONED BY (day DATE, amount DECIMAL(6,2), flag BOOLEAN) "
              "STORED AS PARQUET")
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    spark.sql(f"INSERT INTO {written}.typed PARTITION (day, amount, flag) VALUES "
              "('a', 1, DATE'2024-02-29', 1.50, true), ('b', 2, NULL, NULL, NULL), ('c', NULL, DATE'1970-01-01', -0.01, false)")
    spark.sql(f"CREATE TABLE {written}.empty (id INT) PARTITIONED BY (p STRING) STORED AS ORC")
    spark.sql(f"CREATE VIEW {written}.a_view AS SELECT id FROM {written}.pq")
    return written


def test_typed_partition_values_and_the_default_partition(spark: Any, connected: str, edge_tables: str) -> None:
    query = "SELECT * FROM {}." + edge_tables + ".typed"
    ours = spark.sql(query.format(connected)).collect()
    assert multiset(ours) == multiset(spark.sql(query.format("spark_catalog")).collect()) and len(ours) == 3
    for where in ("day IS NULL", "day = DATE'2024-02-29'", "amount < 0", "flag"):
        filtered = f"SELECT v FROM {{}}.{edge_tables}.typed WHERE {where}"
        assert multiset(spark.sql(filtered.format(connected)).collect()) == multiset(spark.sql(filtered.format("spark_catalog")).collect())


def test_an_empty_table_reads_no_rows(spark: Any, connected: str, edge_tables: str) -> None:
    assert spark.sql(f"SELECT count(*) FROM {connected}.{edge_tables}.empty").collect()[0][0] == 0
    assert spark.sql(f"SELECT * FROM {connected}.{edge_tables}.empty").collect() == []


def test_a_table_that_cannot_be_read_says_why(spark: Any, connected: str, edge_tables: str) -> None:
    with pytest.raises(Exception, match="cannot be read: it is"):
        spark.sql(f"SELECT * FROM {connected}.{edge_tables}.a_view").collect()


def test_gzip_text_files_are_read_whole(spark: Any, connected: str, small_splits: str, written: str,
                                        tmp_path_factory: pytest.TempPathFactory) -> None:
    import gzip

    folder = tmp_path_factory.mktemp("gzipped")
    with gzip.open(folder / "part-0.csv.gz", "wt") as out:  # larger than a 64 KiB split once compressed
        out.writelines(f"{i},{'x' * (i % 50)}{i * 7919 % 100003}\n" for i in range(40_000))
    spark.sql(f"CREATE EXTERNAL TABLE {written}.gzipped (id INT, label STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
              f"STORED AS TEXTFILE LOCATION '{folder.as_uri()}'")
    totals = "SELECT count(*), sum(id), count(DISTINCT label) FROM {}." + written + ".gzipped"
    for catalog in (connected, small_splits):
        assert spark.sql(totals.format(catalog)).collect() == spark.sql(totals.format("spark_catalog")).collect()
