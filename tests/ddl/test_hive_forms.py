"""HiveQL forms Hive accepts and Spark's own session catalog refuses (so no Spark parity to compare with):
the catalog carries them out as Hive does, proven on the metastore's objects."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.errors import HmsCatalogError, UnsupportedCallError
from hms_catalog.execution import Session
from tests.support.sessions import open_catalog

DB = f"hiveforms{os.getpid()}"


@pytest.fixture(scope="module")
def hive(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str) -> Iterator[Session]:
    session = open_catalog(tmp_path_factory.mktemp("hiveforms") / "home", metastore_uri)
    session.run_one(f"CREATE NAMESPACE IF NOT EXISTS hive.{DB}")
    session.run_one(f"USE hive.{DB}")
    yield session
    session.run_one(f"DROP NAMESPACE IF EXISTS hive.{DB} CASCADE")
    session.manager.close()


def _columns(admin: Any, table: str) -> list[tuple[str, str, str | None]]:
    return [(c.name, c.type, c.comment) for c in admin.pool.call("get_table", DB, table).sd.cols]


def _partition_columns(admin: Any, table: str) -> list[list[str]]:
    return [[c.name for c in p.sd.cols] for p in admin.pool.call("get_partitions", DB, table, -1)]


def test_change_column_moves_it_first_or_after_another(hive: Session, admin: Any, spark: Any) -> None:
    hive.run_one("CREATE TABLE moved (a INT, b STRING, c DOUBLE) STORED AS TEXTFILE")
    hive.run_one("ALTER TABLE moved CHANGE c c DOUBLE FIRST")
    assert [name for name, _, _ in _columns(admin, "moved")] == ["c", "a", "b"]
    hive.run_one("ALTER TABLE moved CHANGE COLUMN a aa BIGINT COMMENT 'wider' AFTER b")
    assert _columns(admin, "moved") == [("c", "double", None), ("b", "string", None), ("aa", "bigint", "wider")]
    assert [f.name for f in spark.table(f"{DB}.moved").schema.fields] == ["c", "b", "aa"]  # Spark's schema record too


def test_replace_and_add_columns_cascade_or_restrict(hive: Session, admin: Any) -> None:
    hive.run_one("CREATE TABLE replaced (a INT, b STRING) PARTITIONED BY (p STRING) STORED AS PARQUET")
    hive.run_one("ALTER TABLE replaced ADD PARTITION (p = 'x')")
    hive.run_one("ALTER TABLE replaced REPLACE COLUMNS (a BIGINT, c STRING) RESTRICT")
    assert _partition_columns(admin, "replaced") == [["a", "b"]]  # RESTRICT: the table only
    hive.run_one("ALTER TABLE replaced REPLACE COLUMNS (a BIGINT, c STRING, e INT) CASCADE")
    assert _partition_columns(admin, "replaced") == [["a", "c", "e"]]
    hive.run_one("ALTER TABLE replaced ADD COLUMNS (d INT) CASCADE")
    assert _partition_columns(admin, "replaced") == [["a", "c", "e", "d"]]
    assert [name for name, _, _ in _columns(admin, "replaced")] == ["a", "c", "e", "d"]


def test_external_table_like_another(hive: Session, admin: Any, tmp_path: Path) -> None:
    hive.run_one("CREATE TABLE origin (a INT) PARTITIONED BY (p STRING) STORED AS ORC TBLPROPERTIES ('k' = 'v')")
    hive.run_one(f"CREATE EXTERNAL TABLE copied LIKE origin LOCATION '{tmp_path.as_uri()}' TBLPROPERTIES ('x' = 'y')")
    copied = admin.pool.call("get_table", DB, "copied")
    assert copied.tableType == "EXTERNAL_TABLE" and copied.parameters["x"] == "y" and "k" not in copied.parameters
    assert copied.sd.serdeInfo.serializationLib.endswith("OrcSerde") and [k.name for k in copied.partitionKeys] == ["p"]


def test_relative_partition_location_lies_under_the_table(hive: Session, admin: Any) -> None:
    hive.run_one("CREATE TABLE rel (a INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
    hive.run_one("ALTER TABLE rel ADD PARTITION (p = 'x') LOCATION 'x/y' PARTITION (p = 'z') LOCATION './z'")
    table = admin.pool.call("get_table", DB, "rel").sd.location.rstrip("/")
    locations = sorted(p.sd.location for p in admin.pool.call("get_partitions", DB, "rel", -1))
    assert locations == [f"{table}/x/y", f"{table}/z"]


def test_show_namespaces_and_databases_like_a_pattern(hive: Session) -> None:
    hive.run_one(f"CREATE NAMESPACE {DB}_other")
    try:
        for statement in (f"SHOW NAMESPACES LIKE '{DB}*'", f"SHOW NAMESPACES IN hive '{DB}*'",
                          f"SHOW DATABASES LIKE '{DB}|{DB}_other'", f"SHOW SCHEMAS FROM hive LIKE '{DB}%'"):
            assert sorted(row[0] for row in hive.run_one(statement).rows) == [DB, f"{DB}_other"], statement
        assert [row[0] for row in hive.run_one(f"SHOW NAMESPACES LIKE '{DB}_oth*'").rows] == [f"{DB}_other"]
    finally:
        hive.run_one(f"DROP NAMESPACE {DB}_other RESTRICT")


def test_a_namespace_location_the_metastore_keeps_is_refused_saying_so(hive: Session, admin: Any, tmp_path: Path) -> None:
    """Hive 2.x metastores keep a database's location whatever ALTER asks (Spark refuses the statement there too)."""
    before = admin.pool.call("get_database", DB).locationUri
    with pytest.raises(UnsupportedCallError, match="does not support altering a database's location: its alter_database kept"):
        hive.run_one(f"ALTER NAMESPACE {DB} SET LOCATION '{tmp_path.as_uri()}'")
    assert admin.pool.call("get_database", DB).locationUri == before


def _refused_by_spark(spark: Any, statement: str) -> None:
    """Spark 4's own DDL refuses ``statement`` (which is why there is no Spark parity to compare with)."""
    with pytest.raises(Exception) as refused:
        spark.sql(statement).collect()
    assert not isinstance(refused.value, HmsCatalogError)


def test_set_external_property_makes_the_table_external(hive: Session, admin: Any, spark: Any, tmp_path: Path) -> None:
    """Hive's way to make a managed table external: its files then stay when it is dropped."""
    hive.run_one("CREATE TABLE kept (a INT) STORED AS PARQUET")
    _refused_by_spark(spark, f"ALTER TABLE {DB}.kept SET TBLPROPERTIES ('EXTERNAL' = 'TRUE')")
    hive.run_one("ALTER TABLE kept SET TBLPROPERTIES ('EXTERNAL' = 'TRUE')")
    table = admin.pool.call("get_table", DB, "kept")
    assert (table.tableType, table.parameters["EXTERNAL"]) == ("EXTERNAL_TABLE", "TRUE")
    folder = Path(table.sd.location.removeprefix("file:"))
    (folder / "part-0.parquet").write_bytes(b"kept")
    hive.run_one("DROP TABLE kept")
    assert (folder / "part-0.parquet").exists()


def test_external_table_without_location_lives_where_the_metastore_puts_it(hive: Session, admin: Any, spark: Any) -> None:
    _refused_by_spark(spark, f"CREATE EXTERNAL TABLE {DB}.nowhere (a INT) STORED AS ORC")
    hive.run_one("CREATE EXTERNAL TABLE nowhere (a INT) STORED AS ORC")
    table = admin.pool.call("get_table", DB, "nowhere")
    database = admin.pool.call("get_database", DB).locationUri.rstrip("/")
    assert (table.tableType, table.sd.location) == ("EXTERNAL_TABLE", f"{database}/nowhere")


def test_change_column_renames_it(hive: Session, admin: Any, spark: Any) -> None:
    hive.run_one("CREATE TABLE renamed (a INT COMMENT 'the a', b STRING) PARTITIONED BY (p STRING) STORED AS PARQUET")
    _refused_by_spark(spark, f"ALTER TABLE {DB}.renamed CHANGE a a1 INT")
    hive.run_one("ALTER TABLE renamed CHANGE a a1 INT")
    assert _columns(admin, "renamed") == [("a1", "int", "the a"), ("b", "string", None)]
    assert [f.name for f in spark.table(f"{DB}.renamed").schema.fields] == ["a1", "b", "p"]  # Spark's schema record too


def test_rename_to_another_database_moves_a_managed_table_and_its_folder(hive: Session, admin: Any, spark: Any) -> None:
    hive.run_one(f"CREATE NAMESPACE {DB}_to")
    try:
        hive.run_one("CREATE TABLE moving (a INT) STORED AS PARQUET")
        _refused_by_spark(spark, f"ALTER TABLE {DB}.moving RENAME TO {DB}_to.moved")
        hive.run_one(f"ALTER TABLE moving RENAME TO {DB}_to.moved")
        assert "moving" not in admin.pool.call("get_all_tables", DB)
        target = admin.pool.call("get_database", f"{DB}_to").locationUri.rstrip("/")
        assert admin.pool.call("get_table", f"{DB}_to", "moved").sd.location == f"{target}/moved"
    finally:
        hive.run_one(f"DROP NAMESPACE IF EXISTS {DB}_to CASCADE")
