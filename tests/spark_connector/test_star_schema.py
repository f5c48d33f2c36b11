"""Star joins through the connector as Spark runs them on its own tables: runtime partition pruning from the
dimension side, the same join strategies (statistics), aggregates answered from footers, pushed limits."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.spark_connector.conftest import CATALOG, heard
from tests.support.service import Server
from tests.support.spark_plans import executed_text, join_strategies, plan_nodes, scan_metrics
from tests.support.spark_settings import spark_settings

STAR = f"star{os.getpid()}"
DAYS = 60  # two months of 30 days, one partition of one file each
JOIN = ("SELECT d.d_moy, i.i_category, sum(s.s_amount) AS amount, count(*) AS n FROM {c}." + STAR + ".sales s "
        "JOIN {c}." + STAR + ".dates d ON s.s_date_sk = d.d_date_sk JOIN {c}." + STAR + ".items i ON s.s_item_sk = i.i_item_sk "
        "WHERE d.d_moy = 2 AND d.d_year = 2000 GROUP BY d.d_moy, i.i_category")


def multiset(rows: list[Any]) -> Counter[str]:
    return Counter(repr(row.asDict(recursive=True)) for row in rows)


@pytest.fixture(scope="module")
def star(spark: Any, connected: str) -> Iterator[str]:
    spark.sql(f"DROP DATABASE IF EXISTS {STAR} CASCADE")
    spark.sql(f"CREATE DATABASE {STAR}")
    spark.sql(f"CREATE TABLE {STAR}.dates (d_date_sk INT, d_year INT, d_moy INT, d_date DATE) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {STAR}.dates SELECT 2451545 + id, 2000, 1 + CAST(id DIV 30 AS INT), "
              f"date_add(DATE'2000-01-01', CAST(id AS INT)) FROM range({DAYS})")
    spark.sql(f"CREATE TABLE {STAR}.items (i_item_sk INT, i_category STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {STAR}.items SELECT id, concat('cat', id % 4) FROM range(20)")
    spark.sql(f"CREATE TABLE {STAR}.sales (s_item_sk INT, s_qty INT, s_amount DECIMAL(7,2), s_note STRING) "
              "PARTITIONED BY (s_date_sk INT) STORED AS PARQUET")
    with spark_settings(spark, {"hive.exec.dynamic.partition.mode": "nonstrict"}):
        spark.sql(f"INSERT INTO {STAR}.sales PARTITION (s_date_sk) SELECT CAST(id % 20 AS INT), CAST(id % 7 AS INT), "
                  f"CAST(id % 1000 AS DECIMAL(7,2)) / 10, IF(id % 5 = 0, NULL, 'n'), CAST(2451545 + id % {DAYS} AS INT) "
                  f"FROM range({DAYS * 40}) DISTRIBUTE BY 5")
    yield STAR
    spark.sql(f"DROP DATABASE IF EXISTS {STAR} CASCADE")


def test_the_dimension_side_prunes_fact_partitions_at_run_time(spark: Any, connected: str, star: str) -> None:
    ours = spark.sql(JOIN.format(c=connected))
    theirs = spark.sql(JOIN.format(c="spark_catalog"))
    assert multiset(ours.collect()) == multiset(theirs.collect())
    text = executed_text(ours)
    scan = next(line for line in text.splitlines() if "BatchScan" in line and ".sales" in line)
    assert "dynamicpruningexpression" in scan, scan
    assert "dynamicpruningexpression" in executed_text(theirs)  # Spark's own tables prune the same way
    metrics = scan_metrics(ours, f"{connected}.{star}.sales")
    # month 2 is 30 of the 60 daily partitions: the other 30 files are never opened
    assert (metrics["numFiles"], metrics["skippedFiles"], metrics["numPartitions"]) == (30, 30, 30)
    assert metrics["skippedBytes"] > 0
    assert scan_metrics(theirs, f"{star}.sales")["numFiles"] == 30


def test_each_scan_makes_its_reader_factory_and_partitions_once_however_often_spark_plans_it(
        spark: Any, connected: str, star: str) -> None:
    """Spark plans one scan into more than one BatchScanExec (adaptive execution plans the query's stages again),
    and each asks the scan for its reader factory, which broadcasts the scan's Hadoop configuration, and for its
    input partitions. One scan answers all of them with the same ones: made for each, the broadcasts were about
    half of TPC-DS q83's physical planning."""
    frame = spark.sql(JOIN.format(c=connected))
    frame.collect()
    execution = frame._jdf.queryExecution()
    identity = spark._jvm.System.identityHashCode
    copies: dict[int, list[Any]] = {}
    for plan in (execution.sparkPlan(), execution.executedPlan()):
        for node in plan_nodes(plan):
            if node.getClass().getSimpleName() == "BatchScanExec":
                copies.setdefault(identity(node.scan()), []).append(node)
    copied = [nodes for nodes in copies.values() if len({identity(node) for node in nodes}) > 1]
    assert copied, "no scan of the query was planned in two plan nodes"
    for nodes in copied:
        assert len({identity(node.readerFactory()) for node in nodes}) == 1
        partitions = [node.inputPartitions() for node in nodes]
        assert len({tuple(identity(p.apply(i)) for i in range(p.size())) for p in partitions}) == 1


@pytest.mark.parametrize("cbo", ["false", "true"])
def test_spark_chooses_the_same_join_strategies_with_and_without_cbo(spark: Any, connected: str, star: str, cbo: str) -> None:
    with spark_settings(spark, {"spark.sql.cbo.enabled": cbo, "spark.sql.cbo.joinReorder.enabled": cbo}):
        ours = join_strategies(spark.sql(JOIN.format(c=connected)))
        theirs = join_strategies(spark.sql(JOIN.format(c="spark_catalog")))
    assert ours == theirs and "BroadcastHashJoinExec" in ours


def test_statistics_spark_analysed_reach_the_optimizer(spark: Any, connected: str, star: str, connector_service: Server) -> None:
    spark.sql(f"ANALYZE TABLE {star}.dates COMPUTE STATISTICS FOR ALL COLUMNS")
    client = connector_service.client()
    try:
        client.refresh(CATALOG, star, "dates")
    finally:
        client.close()
    with spark_settings(spark, {"spark.sql.cbo.enabled": "true"}):
        # The driver hears of the refresh on the service's change feed, a moment after the refresh answered (on a
        # loaded machine, after the first plan): until then it plans with the table as it had it.
        ours = heard(lambda: spark.sql(f"SELECT * FROM {connected}.{star}.dates")._jdf.queryExecution().optimizedPlan().stats(),
                     lambda stats: stats.rowCount().isDefined(), "the driver's catalog did not follow the service's change feed")
        theirs = spark.sql(f"SELECT * FROM spark_catalog.{star}.dates")._jdf.queryExecution().optimizedPlan().stats()
        assert str(ours.rowCount().get()) == str(theirs.rowCount().get()) == str(DAYS)
        attribute = next(a for a in _seq(ours.attributeStats().keys().toSeq()) if a.name() == "d_moy")
        assert str(ours.attributeStats().apply(attribute).distinctCount().get()) == "2"
    # without analysis, a partitioned fact table still reports the size of what the query reads
    facts = spark.sql(f"SELECT * FROM {connected}.{star}.sales WHERE s_date_sk < 2451555")._jdf.queryExecution()
    assert 0 < int(str(facts.optimizedPlan().stats().sizeInBytes())) < 10 * 1024 * 1024


BLOOM = ("SELECT i.i_category, count(*) AS n FROM {c}." + STAR + ".sales s JOIN {c}." + STAR + ".items i "
         "ON s.s_item_sk = i.i_item_sk WHERE i.i_category = 'cat1'{where} GROUP BY i.i_category")


@pytest.mark.parametrize(("where", "injected"), [("", False), (" AND s.s_date_sk < 2451555", True)])
def test_bloom_filters_go_where_spark_puts_them_on_its_own_tables(spark: Any, connected: str, star: str, where: str,
                                                                  injected: bool) -> None:
    """Spark's runtime-filter rule puts a bloom filter on a shuffle join's large side, and counts a table of
    unknown size (a partitioned table read whole, never analysed) as no size: a filtered read of the same
    table is sized by its files. The connector's scan draws the filter exactly when Spark's own does (a
    filter on one side only cost TPC-DS q24 the reuse of a shuffle)."""
    settings = {"spark.sql.autoBroadcastJoinThreshold": "-1",  # a shuffle join, as between two large tables
                "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold": "1"}
    with spark_settings(spark, settings):
        ours = spark.sql(BLOOM.format(c=connected, where=where))
        theirs = spark.sql(BLOOM.format(c="spark_catalog", where=where))
        assert multiset(ours.collect()) == multiset(theirs.collect())
        filtered = ["might_contain" in str(frame._jdf.queryExecution().optimizedPlan().toString()) for frame in (ours, theirs)]
    assert filtered == [injected, injected]


def _seq(scala_seq: Any) -> list[Any]:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


AGGREGATES = ("SELECT count(*) AS n, count(s_note) AS notes, min(s_qty) AS low, max(s_qty) AS high, min(s_date_sk) AS first, "
              "max(s_date_sk) AS last FROM {c}." + STAR + ".sales")


@pytest.mark.parametrize("suffix", ["", " WHERE s_date_sk >= 2451580", " WHERE s_date_sk IN (2451545, 2451546, 7)",
                                    " GROUP BY s_date_sk"])
def test_aggregates_are_answered_from_parquet_footers(spark: Any, connected: str, star: str, suffix: str) -> None:
    ours = spark.sql(AGGREGATES.format(c=connected) + suffix)
    theirs = spark.sql(AGGREGATES.format(c="spark_catalog") + suffix)
    assert multiset(ours.collect()) == multiset(theirs.collect())
    text = executed_text(ours)
    assert "LocalTableScan" in text and "BatchScan" not in text, text


def test_aggregates_metadata_cannot_answer_are_scanned(spark: Any, connected: str, star: str) -> None:
    spark.sql(f"CREATE TABLE {star}.lines (s_qty INT, s_note STRING) STORED AS TEXTFILE")
    spark.sql(f"INSERT INTO {star}.lines VALUES (1, 'a'), (NULL, 'b'), (3, NULL)")
    for query in (f"SELECT count(*), max(s_qty) FROM {{c}}.{star}.lines",  # text files keep no counts
                  f"SELECT max(s_note) FROM {{c}}.{star}.sales",  # string extremes may be truncated
                  f"SELECT count(*) FROM {{c}}.{star}.sales WHERE s_qty > 2"):  # a filter on rows
        ours = spark.sql(query.format(c=connected))
        assert ours.collect() == spark.sql(query.format(c="spark_catalog")).collect()
        assert "BatchScan" in executed_text(ours)


def test_a_limit_without_order_is_pushed_into_the_scan(spark: Any, connected: str, star: str) -> None:
    frame = spark.sql(f"SELECT * FROM {connected}.{star}.sales LIMIT 7")
    assert len(frame.collect()) == 7
    assert "PushedLimit: 7" in executed_text(frame)


def test_filters_on_data_columns_skip_parquet_row_groups(spark: Any, connected: str, star: str,
                                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("row_groups")
    pq.write_table(pa.table({"id": pa.array(range(100_000), pa.int64())}), folder / "data.parquet", row_group_size=10_000)
    spark.sql(f"CREATE EXTERNAL TABLE {star}.grouped (id BIGINT) STORED AS PARQUET LOCATION '{folder.as_uri()}'")
    query = f"SELECT id FROM {{}}.{star}.grouped WHERE id BETWEEN 12345 AND 12350"
    ours = spark.sql(query.format(connected))
    assert sorted(r.id for r in ours.collect()) == list(range(12345, 12351))
    read = scan_metrics(ours, f"{connected}.{star}.grouped")["numOutputRows"]
    theirs = spark.sql(query.format("spark_catalog"))
    theirs.collect()
    # one row group of ten read, as Spark's own reader of the same file reads
    assert read == scan_metrics(theirs, f"{star}.grouped")["numOutputRows"] == 10_000


@pytest.fixture(scope="module")
def iceberg_sales(star: str, iceberg_catalog: Any) -> str:
    """The fact table again as Iceberg tables written by pyiceberg: by day key (identity), and by item (bucket)."""
    import decimal

    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import BucketTransform, IdentityTransform
    from pyiceberg.types import DecimalType, IntegerType, NestedField

    schema = Schema(NestedField(1, "s_item_sk", IntegerType()), NestedField(2, "s_qty", IntegerType()),
                    NestedField(3, "s_amount", DecimalType(7, 2)), NestedField(4, "s_date_sk", IntegerType()))
    rows = pa.Table.from_pylist([
        {"s_item_sk": i % 20, "s_qty": i % 7, "s_amount": decimal.Decimal(i % 1000) / 10, "s_date_sk": 2451545 + i % DAYS}
        for i in range(DAYS * 40)], schema=schema.as_arrow())
    for name, field in (("by_day", PartitionField(4, 1000, IdentityTransform(), "s_date_sk")),
                        ("by_item", PartitionField(1, 1000, BucketTransform(16), "s_item_sk_bucket"))):
        table = iceberg_catalog.create_table(f"{star}.{name}", schema, partition_spec=PartitionSpec(field))
        table.append(rows)
    return star


def _bucket(value: int) -> int:
    from pyiceberg.transforms import BucketTransform
    from pyiceberg.types import IntegerType

    return int(BucketTransform(16).transform(IntegerType())(value))


# identity: 30 of 60 day files; bucket[16]: the buckets of the 15 items outside 'cat1' that no 'cat1' item shares
BUCKETS_SKIPPED = len({_bucket(i) for i in range(20)} - {_bucket(i) for i in range(20) if i % 4 == 1})


@pytest.mark.parametrize("table, join, where, skipped", [
    ("by_day", "s.s_date_sk = d.d_date_sk", "d.d_moy = 2", 30),
    ("by_item", "s.s_item_sk = i.i_item_sk", "i.i_category = 'cat1'", BUCKETS_SKIPPED),
])
def test_iceberg_tables_are_pruned_at_run_time_through_partition_transforms(spark: Any, connected: str, iceberg_sales: str,
                                                                            table: str, join: str, where: str, skipped: int) -> None:
    query = ("SELECT i.i_category, d.d_moy, sum(s.s_amount) AS amount, count(*) AS n FROM {c}." + iceberg_sales + ".{t} s "
             "JOIN {c}." + iceberg_sales + ".dates d ON s.s_date_sk = d.d_date_sk JOIN {c}." + iceberg_sales + ".items i "
             "ON s.s_item_sk = i.i_item_sk WHERE " + where + " GROUP BY 1, 2")
    ours = spark.sql(query.format(c=connected, t=table))
    assert multiset(ours.collect()) == multiset(spark.sql(query.format(c="spark_catalog", t="sales")).collect())
    scan = next(line for line in executed_text(ours).splitlines() if "BatchScan" in line and f".{table}" in line)
    assert "dynamicpruningexpression" in scan, scan
    assert skipped > 0 and scan_metrics(ours, f"{connected}.{iceberg_sales}.{table}")["skippedFiles"] == skipped


def test_iceberg_aggregates_are_answered_from_manifests(spark: Any, connected: str, iceberg_sales: str) -> None:
    query = "SELECT count(*), min(s_qty), max(s_date_sk), count(s_amount) FROM {}"
    ours = spark.sql(query.format(f"{connected}.{iceberg_sales}.by_day"))
    assert ours.collect() == spark.sql(query.format(f"spark_catalog.{iceberg_sales}.sales")).collect()
    assert "LocalTableScan" in executed_text(ours) and "BatchScan" not in executed_text(ours)
