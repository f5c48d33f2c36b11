"""Spark's own Hive support (PySpark's built-in Hive 2.3 client, no connector) with the endpoint as its metastore.

The same statements run on the session's Spark, whose metastore is the embedded one directly, give the
answers the endpoint's must equal; changes made through the endpoint are catalog events (source
``thrift``) that the direct side and a connector session see without REFRESH.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.cache.versions import ChangeSource
from tests.service.thrift.conftest import Endpoint
from tests.support.spark_hive_client import SparkHiveClient, SparkHiveError

pytestmark = pytest.mark.slow


class _Through:
    def __init__(self, endpoint: Endpoint, spark: SparkHiveClient, database: str, other: str) -> None:
        self.endpoint = endpoint
        self.spark = spark
        self.database = database  # in the primary catalog: the same name both ways
        self.other = other  # a database of catalog `other`: other__<name> through the endpoint

    def thrift_changes(self, since: int) -> list[str]:
        log = self.endpoint.manager.catalog("hive").versions.changes(since)
        return [f"{change.kind.value} {change.object}" for change in log.changes if change.source is ChangeSource.THRIFT]


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return [tuple(str(value) if value is not None else None for value in row) for row in frame.collect()]


def _strings(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [tuple(str(value) if value is not None else None for value in row) for row in rows]


@pytest.fixture(scope="module")
def through(tmp_path_factory: pytest.TempPathFactory, metastore: Any, spark: Any) -> Iterator[_Through]:
    root = tmp_path_factory.mktemp("spark-through-thrift")
    database, other = f"thr_{root.name[-6:].strip('0123456789') or 'a'}{id(root) % 10_000}", f"oth_{id(root) % 10_000}"
    spark.sql(f"CREATE DATABASE {database}")
    spark.sql(f"CREATE DATABASE {other}")
    spark.sql(f"CREATE TABLE {database}.sales (id INT, customer INT, amount DOUBLE) PARTITIONED BY (dt STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {database}.sales PARTITION (dt) VALUES (1, 1, 10.0, '2026-01-01'), (2, 2, 20.0, '2026-01-01'), "
              "(3, 1, 30.0, '2026-01-02'), (4, 3, 40.0, '2026-01-03')")
    spark.sql(f"CREATE TABLE {other}.customers (id INT, name STRING) STORED AS ORC")
    spark.sql(f"INSERT INTO {other}.customers VALUES (1, 'Ada'), (2, 'Grace'), (3, 'Edsger')")
    home = root / "home"
    home.mkdir()
    endpoint = Endpoint(home, metastore.uri)
    _write_lake(root / "lake")
    endpoint.manager.create("lake", {"type": "filesystem", "root": (root / "lake").as_uri()})
    client = SparkHiveClient(endpoint.endpoint.uri, Path(metastore.warehouse), root / "spark",
                             {"spark.hadoop.hive.exec.dynamic.partition.mode": "nonstrict"})
    try:
        yield _Through(endpoint, client, database, other)
    finally:
        client.close()
        endpoint.close()
        spark.sql(f"DROP DATABASE IF EXISTS {database} CASCADE")
        spark.sql(f"DROP DATABASE IF EXISTS {other} CASCADE")


def _write_lake(root: Path) -> None:
    """A folder lake as writers leave one: Hive-style partition folders of Parquet, a CSV file with a header."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for day, ids in (("2024-01-01", [1, 2]), ("2024-01-02", [3])):
        folder = root / "raw" / "events" / f"day={day}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "kind": [f"k{i}" for i in ids]}), folder / "part-0.parquet")
    people = root / "raw" / "people"
    people.mkdir(parents=True)
    (people / "people.csv").write_text("id,name\n1,Ada\n2,Grace\n")


def test_a_folder_catalog_s_tables_read_in_spark_s_own_hive_support(through: _Through) -> None:
    assert "lake__raw" in {row[0] for row in through.spark.sql("SHOW DATABASES")}
    assert {row[1] for row in through.spark.sql("SHOW TABLES IN lake__raw")} >= {"events", "people"}
    rows = through.spark.sql("SELECT id, kind, CAST(day AS STRING) FROM lake__raw.events WHERE day = DATE '2024-01-02'")
    assert _strings(rows) == [("3", "k3", "2024-01-02")]
    assert _strings(through.spark.sql("SELECT count(*) FROM lake__raw.events")) == [("3",)]
    assert _strings(through.spark.sql("SELECT id, name FROM lake__raw.people ORDER BY id")) == [("1", "Ada"), ("2", "Grace")]


def test_spark_lists_the_databases_of_both_catalogs(through: _Through) -> None:
    names = {row[0] for row in through.spark.sql("SHOW DATABASES")}
    assert through.database in names
    assert f"other__{through.other}" in names
    assert through.other in names  # the same metastore is also the primary's: its own name there too


def test_describe_and_a_pruned_select_answer_as_the_metastore_does(through: _Through, spark: Any) -> None:
    table = f"{through.database}.sales"
    assert _strings(through.spark.sql(f"DESCRIBE {table}")) == _rows(spark.sql(f"DESCRIBE {table}"))
    query = f"SELECT id, amount FROM {table} WHERE dt = '2026-01-02' ORDER BY id"
    assert _strings(through.spark.sql(query)) == _rows(spark.sql(query)) == [("3", "30.0")]
    plan = "\n".join(str(row[0]) for row in through.spark.sql(f"EXPLAIN EXTENDED {query}"))
    assert "dt=2026-01-02" in plan or "PartitionFilters" in plan, plan


def test_a_join_across_two_catalogs_runs_with_the_one_uri(through: _Through, spark: Any) -> None:
    join = ("SELECT c.name, sum(s.amount) FROM {sales} s JOIN {customers} c ON s.customer = c.id "
            "GROUP BY c.name ORDER BY c.name")
    federated = through.spark.sql(join.format(sales=f"{through.database}.sales", customers=f"other__{through.other}.customers"))
    direct = spark.sql(join.format(sales=f"{through.database}.sales", customers=f"{through.other}.customers"))
    assert _strings(federated) == _rows(direct) == [("Ada", "40.0"), ("Edsger", "40.0"), ("Grace", "20.0")]


def test_changes_through_the_endpoint_are_catalog_events_seen_directly(through: _Through, spark: Any) -> None:
    db = through.database
    before = through.endpoint.manager.catalog("hive").versions.current
    through.spark.sql(f"CREATE TABLE {db}.events (id INT, kind STRING) PARTITIONED BY (day STRING) STORED AS TEXTFILE")
    through.spark.sql(f"CREATE TABLE {db}.flat (id INT, label STRING) USING parquet")
    through.spark.sql(f"INSERT INTO {db}.events PARTITION (day) VALUES (1, 'a', 'd1'), (2, 'b', 'd2')")
    through.spark.sql(f"INSERT INTO {db}.flat VALUES (1, 'x'), (2, 'y')")
    through.spark.sql(f"INSERT OVERWRITE TABLE {db}.events PARTITION (day = 'd1') VALUES (10, 'z')")
    through.spark.sql(f"ALTER TABLE {db}.flat ADD COLUMNS (extra STRING)")
    assert _rows(spark.sql(f"SELECT id, kind, day FROM {db}.events ORDER BY id")) == [("2", "b", "d2"), ("10", "z", "d1")]
    assert _rows(spark.sql(f"SELECT * FROM {db}.flat ORDER BY id")) == [("1", "x", None), ("2", "y", None)]
    changes = through.thrift_changes(before)
    assert f"added table {db}.events" in changes and f"added table {db}.flat" in changes, changes
    assert any(change.startswith(f"changed partitions {db}.events") for change in changes), changes
    assert f"changed table {db}.flat" in changes, changes
    # the endpoint's own answers are fresh without REFRESH: the new column, the overwritten partition
    assert [row[0] for row in through.spark.sql(f"DESCRIBE {db}.flat")][:3] == ["id", "label", "extra"]
    assert _strings(through.spark.sql(f"SELECT id FROM {db}.events WHERE day = 'd1'")) == [("10",)]

    spark.sql(f"CREATE TABLE {db}.repaired (id INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {db}.repaired PARTITION (p = 'one') VALUES (1)")
    location = spark.sql(f"DESCRIBE FORMATTED {db}.repaired").filter("col_name = 'Location'").collect()[0][1]
    spark.createDataFrame([(2,)], "id INT").write.parquet(f"{location}/p=two")
    through.spark.sql(f"MSCK REPAIR TABLE {db}.repaired")
    assert _rows(spark.sql(f"SELECT id, p FROM {db}.repaired ORDER BY id")) == [("1", "one"), ("2", "two")]

    through.spark.sql(f"DROP TABLE {db}.flat")
    assert "flat" not in {row[0] for row in spark.sql(f"SHOW TABLES IN {db}").collect()}
    assert f"dropped table {db}.flat" in through.thrift_changes(before)


def test_a_read_only_catalog_refuses_spark_s_changes(through: _Through) -> None:
    with pytest.raises(SparkHiveError, match="read-only through the thrift endpoint"):
        through.spark.sql(f"CREATE TABLE other__{through.other}.refused (id INT) STORED AS PARQUET")
