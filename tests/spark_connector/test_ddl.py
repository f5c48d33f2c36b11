"""DDL through the connector's catalog: namespaces, tables and partitions changed from Spark SQL through the
service, and seen at once by this driver and by Spark's own Hive support on the same metastore."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.spark_connector.conftest import CATALOG, registered
from tests.support.service import Server, served, tokens_file

DB = f"ddl{os.getpid()}"


@pytest.fixture(scope="module")
def ddl(spark: Any, connected: str) -> Iterator[str]:
    """One database made through the connector for the whole module, dropped with its tables afterwards."""
    spark.sql(f"CREATE NAMESPACE {connected}.{DB} COMMENT 'made through the connector' WITH DBPROPERTIES ('team' = 'data')")
    yield f"{connected}.{DB}"
    spark.sql(f"DROP NAMESPACE IF EXISTS {connected}.{DB} CASCADE")


def _own(spark: Any, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in spark.sql(statement).collect()]


def _described(spark: Any, table: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Spark's own DESCRIBE of a table: its columns (name, type) and its partition columns."""
    rows = [(row.col_name, row.data_type) for row in spark.sql(f"DESCRIBE TABLE {table}").collect()]
    if ("# Partition Information", "") in rows:
        at = rows.index(("# Partition Information", ""))
        return rows[:at], [name for name, _ in rows[at + 2:]]
    return rows, []


def _extended(spark: Any, table: str) -> dict[str, str]:
    """Spark's own DESCRIBE TABLE EXTENDED of a table (or ``table PARTITION (..)``): its details by name, the first
    of each (a partition's Location comes before its table's)."""
    details: dict[str, str] = {}
    for row in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect():
        details.setdefault(row.col_name, row.data_type)
    return details


def _location(spark: Any, table: str) -> Path:
    return Path(urlsplit(_extended(spark, table)["Location"]).path)


def _partitions(spark: Any, table: str, spec: str = "") -> list[str]:
    return sorted(row[0] for row in spark.sql(f"SHOW PARTITIONS {table} {spec}").collect())


def test_a_namespace_made_here_is_a_database_of_the_metastore(spark: Any, ddl: str) -> None:
    described = dict(_own(spark, f"DESCRIBE NAMESPACE EXTENDED spark_catalog.{DB}"))
    assert described["Comment"] == "made through the connector"
    assert "team" in described["Properties"] and "data" in described["Properties"]
    assert DB in {row[0] for row in spark.sql(f"SHOW NAMESPACES IN {CATALOG}").collect()}
    spark.sql(f"ALTER NAMESPACE {ddl} SET DBPROPERTIES ('stage' = 'test')")
    assert "stage" in dict(_own(spark, f"DESCRIBE NAMESPACE EXTENDED spark_catalog.{DB}"))["Properties"]


def test_a_data_source_table_made_here_is_written_by_spark_and_read_back(spark: Any, ddl: str) -> None:
    spark.sql(f"CREATE TABLE {ddl}.events (id BIGINT, dt STRING) USING parquet PARTITIONED BY (dt)")
    spark.sql(f"INSERT INTO spark_catalog.{DB}.events VALUES (1, '2024-01-01'), (2, '2024-01-02'), (3, '2024-01-02')")
    rows = sorted(tuple(row) for row in spark.table(f"{ddl}.events").collect())
    assert rows == [(1, "2024-01-01"), (2, "2024-01-02"), (3, "2024-01-02")]
    assert spark.table(f"{ddl}.events").where("dt = '2024-01-02'").count() == 2
    provider = _extended(spark, f"spark_catalog.{DB}.events")["Provider"]
    assert provider == "parquet"
    assert _partitions(spark, f"{ddl}.events") == _partitions(spark, f"spark_catalog.{DB}.events") \
        == ["dt=2024-01-01", "dt=2024-01-02"]


def test_add_columns_on_a_data_source_table_reaches_sparks_schema(spark: Any, ddl: str) -> None:
    spark.sql(f"CREATE TABLE {ddl}.grown (id BIGINT, dt STRING) USING parquet PARTITIONED BY (dt)")
    spark.sql(f"INSERT INTO spark_catalog.{DB}.grown VALUES (1, 'a')")
    spark.sql(f"ALTER TABLE {ddl}.grown ADD COLUMNS (score DOUBLE COMMENT 'added here')")
    columns, partitioning = _described(spark, f"spark_catalog.{DB}.grown")  # Spark's schema in the table's properties
    assert columns == [("id", "bigint"), ("score", "double"), ("dt", "string")] and partitioning == ["dt"]
    assert spark.table(f"{ddl}.grown").columns == ["id", "score", "dt"]  # this driver, at once
    spark.sql(f"REFRESH TABLE spark_catalog.{DB}.grown")
    spark.sql(f"INSERT INTO spark_catalog.{DB}.grown VALUES (2, 0.5, 'b')")
    assert sorted(tuple(row) for row in spark.table(f"{ddl}.grown").collect()) == [(1, None, "a"), (2, 0.5, "b")]


def test_a_hive_table_made_here_is_one_of_sparks_hive_tables(spark: Any, ddl: str) -> None:
    spark.sql(f"CREATE TABLE {ddl}.logs (id INT, msg STRING COMMENT 'the line') COMMENT 'hive table' "
              "PARTITIONED BY (dt STRING) STORED AS PARQUET TBLPROPERTIES ('origin' = 'connector')")
    columns, partitioning = _described(spark, f"spark_catalog.{DB}.logs")
    assert columns == [("id", "int"), ("msg", "string"), ("dt", "string")] and partitioning == ["dt"]
    extended = _extended(spark, f"spark_catalog.{DB}.logs")
    assert extended["Provider"] == "hive" and "Parquet" in extended["InputFormat"]
    assert extended["Comment"] == "hive table" and "origin=connector" in extended["Table Properties"]
    spark.sql(f"INSERT INTO spark_catalog.{DB}.logs PARTITION (dt='2024-01-01') VALUES (1, 'one'), (2, 'two')")
    assert sorted(tuple(row) for row in spark.table(f"{ddl}.logs").collect()) == [(1, "one", "2024-01-01"),
                                                                                  (2, "two", "2024-01-01")]
    spark.sql(f"ALTER TABLE {ddl}.logs ADD COLUMNS (level STRING)")
    columns, _ = _described(spark, f"spark_catalog.{DB}.logs")
    assert ("level", "string") in columns
    assert spark.table(f"{ddl}.logs").columns == ["id", "msg", "level", "dt"]
    spark.sql(f"REFRESH TABLE spark_catalog.{DB}.logs")
    # Hive's CASCADE: the old partition has the new column too, and reads it as NULL
    assert sorted(_own(spark, f"SELECT id, level FROM spark_catalog.{DB}.logs")) == [(1, None), (2, None)]
    spark.sql(f"ALTER TABLE {ddl}.logs SET TBLPROPERTIES ('owner_team' = 'etl')")
    assert ("owner_team", "etl") in _own(spark, f"SHOW TBLPROPERTIES spark_catalog.{DB}.logs")
    spark.sql(f"ALTER TABLE {ddl}.logs UNSET TBLPROPERTIES ('owner_team')")
    assert "owner_team" not in dict(_own(spark, f"SHOW TBLPROPERTIES spark_catalog.{DB}.logs"))


def test_partitions_added_and_dropped_here_are_sparks_partitions(spark: Any, ddl: str, tmp_path: Path) -> None:
    spark.sql(f"CREATE TABLE {ddl}.parts (v STRING) PARTITIONED BY (dt STRING, hr INT) STORED AS ORC")
    ours, theirs = f"{ddl}.parts", f"spark_catalog.{DB}.parts"
    spark.sql(f"ALTER TABLE {ours} ADD PARTITION (dt='2024-01-01', hr=5)")
    spark.sql(f"ALTER TABLE {ours} ADD PARTITION (dt='a/b c', hr=12) PARTITION (dt='2024-01-02', hr=0)")  # at once
    spark.sql(f"ALTER TABLE {ours} ADD PARTITION (dt='elsewhere', hr=1) LOCATION '{tmp_path.as_uri()}'")
    expected = ["dt=2024-01-01/hr=5", "dt=2024-01-02/hr=0", "dt=a%2Fb c/hr=12", "dt=elsewhere/hr=1"]
    assert _partitions(spark, ours) == _partitions(spark, theirs) == expected
    assert _partitions(spark, ours, "PARTITION (hr=12)") == ["dt=a%2Fb c/hr=12"]
    where = _extended(spark, f"{theirs} PARTITION (dt='elsewhere', hr=1)")["Location"]
    assert Path(urlsplit(where).path) == tmp_path
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException, match="PARTITIONS_ALREADY_EXIST|already exist"):
        spark.sql(f"ALTER TABLE {ours} ADD PARTITION (dt='2024-01-01', hr=5)")
    spark.sql(f"ALTER TABLE {ours} ADD IF NOT EXISTS PARTITION (dt='2024-01-01', hr=5)")
    spark.sql(f"ALTER TABLE {ours} DROP PARTITION (dt='2024-01-02', hr=0), PARTITION (dt='a/b c', hr=12)")
    assert _partitions(spark, ours) == _partitions(spark, theirs) == ["dt=2024-01-01/hr=5", "dt=elsewhere/hr=1"]
    with pytest.raises(AnalysisException, match="PARTITIONS_NOT_FOUND|not found"):
        spark.sql(f"ALTER TABLE {ours} DROP PARTITION (dt='never', hr=1)")
    spark.sql(f"ALTER TABLE {ours} DROP IF EXISTS PARTITION (dt='never', hr=1)")


def test_a_dropped_managed_table_loses_its_folder(spark: Any, ddl: str) -> None:
    spark.sql(f"CREATE TABLE {ddl}.scratch (id INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO spark_catalog.{DB}.scratch VALUES (1)")
    folder = _location(spark, f"spark_catalog.{DB}.scratch")
    assert folder.is_dir() and any(folder.iterdir())
    assert spark.table(f"{ddl}.scratch").count() == 1
    spark.sql(f"DROP TABLE {ddl}.scratch")
    assert not folder.exists()
    assert "scratch" not in {row.tableName for row in spark.sql(f"SHOW TABLES IN {ddl}").collect()}
    assert not spark.catalog.tableExists(f"spark_catalog.{DB}.scratch")


def test_rename_keeps_the_rows(spark: Any, ddl: str) -> None:
    spark.sql(f"CREATE TABLE {ddl}.before_name (id INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO spark_catalog.{DB}.before_name VALUES (7)")
    assert spark.table(f"{ddl}.before_name").count() == 1  # loaded and kept by this driver
    spark.sql(f"ALTER TABLE {ddl}.before_name RENAME TO {DB}.after_name")
    assert [tuple(row) for row in spark.table(f"{ddl}.after_name").collect()] == [(7,)]
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.table(f"{ddl}.before_name").collect()
    assert [tuple(row) for row in spark.table(f"spark_catalog.{DB}.after_name").collect()] == [(7,)]


def test_an_iceberg_table_gets_iceberg_transforms(spark: Any, ddl: str, iceberg_catalog: Any) -> None:
    spark.sql(f"CREATE TABLE {ddl}.ice (id BIGINT, ts TIMESTAMP, name STRING) USING iceberg "
              "PARTITIONED BY (days(ts), bucket(4, id))")
    table = iceberg_catalog.load_table((DB, "ice"))
    fields = [(table.schema().find_field(f.source_id).name, str(f.transform)) for f in table.spec().fields]
    assert fields == [("ts", "day"), ("id", "bucket[4]")]
    assert spark.table(f"{ddl}.ice").columns == ["id", "ts", "name"]


def test_mistakes_are_sparks_errors(spark: Any, ddl: str) -> None:
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException, match="SCHEMA_NOT_FOUND"):
        spark.sql(f"CREATE TABLE {CATALOG}.no_such_db_{os.getpid()}.t (id INT) USING parquet")
    spark.sql(f"CREATE TABLE {ddl}.taken (id INT) USING parquet")
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
        spark.sql(f"CREATE TABLE {ddl}.taken (id INT) USING parquet")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {ddl}.taken (id INT) USING parquet")
    with pytest.raises(AnalysisException, match="SCHEMA_ALREADY_EXISTS"):
        spark.sql(f"CREATE NAMESPACE {ddl}")
    with pytest.raises(AnalysisException, match="SCHEMA_NOT_EMPTY"):
        spark.sql(f"DROP NAMESPACE {ddl}")
    spark.sql(f"ALTER TABLE {ddl}.taken ALTER COLUMN id TYPE BIGINT")  # a widening
    assert spark.table(f"{ddl}.taken").schema["id"].dataType.simpleString() == "bigint"
    with pytest.raises(Exception, match="(?i)cannot"):  # not one: Spark or the service refuses it
        spark.sql(f"ALTER TABLE {ddl}.taken ALTER COLUMN id TYPE STRING")


def test_a_read_token_is_denied_changes(spark: Any, metastore_uri: str, tmp_path: Path, ddl: str) -> None:
    tokens = tokens_file(tmp_path / "tokens.json", {"tokens": [{"name": "ro", "token": "read-only-token-0123456789", "access": "read",
                                              "catalogs": ["*"]}]})
    with served(tmp_path / "home", "--tokens", str(tokens)) as service:
        client = service.client()
        client.create_catalog("ro", {"type": "hms", "hive.metastore.uris": metastore_uri})
        client.close()
        with registered(spark, service, "ro", token="read-only-token-0123456789"):
            assert spark.table(f"ro.{DB}.taken").count() == 0  # reading is allowed
            with pytest.raises(Exception, match="(?i)permission denied") as refused:
                spark.sql(f"CREATE TABLE ro.{DB}.denied (id INT) USING parquet")
            assert "ro" in str(refused.value) and "read" in str(refused.value)
            with pytest.raises(Exception, match="(?i)permission denied"):
                spark.sql(f"DROP TABLE ro.{DB}.taken")
    assert spark.table(f"{ddl}.taken").count() == 0
    assert not spark.catalog.tableExists(f"spark_catalog.{DB}.denied")


def test_sync_ddl_waits_for_this_driver(spark: Any, ddl: str, connector_service: Server) -> None:
    """A DDL with sync_ddl returns once every follower of the feed, this driver's among them, has applied it."""
    assert spark.sql(f"SHOW TBLPROPERTIES {ddl}.taken").count() >= 0  # loaded: this driver follows the feed
    client = connector_service.client()
    try:
        answer = client.statement(f"SET sync_ddl = true; ALTER TABLE {ddl}.taken SET TBLPROPERTIES ('synced' = 'yes')")
    finally:
        client.close()
    message = str(answer.get("message", ""))
    assert "seen by every follower" in message
    assert dict(_own(spark, f"SHOW TBLPROPERTIES {ddl}.taken")).get("synced") == "yes"  # no wait, no REFRESH
