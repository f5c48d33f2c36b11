"""Writes through the connector: INSERT, INSERT OVERWRITE, CTAS and DataFrameWriterV2 on tables of the
metastore, committed by the service, compared with what Spark's own Hive support writes and reads."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.spark_connector.conftest import CATALOG
from tests.support.hms import Admin
from tests.support.service import tokens_file

DB = f"wr{os.getpid()}"


@pytest.fixture(scope="module")
def db(spark: Any, connected: str) -> Iterator[str]:
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")
    spark.sql(f"CREATE DATABASE spark_catalog.{DB}")
    spark.conf.set("hive.exec.dynamic.partition.mode", "nonstrict")  # Spark's own inserts with no static partition
    yield DB
    spark.conf.unset("hive.exec.dynamic.partition.mode")
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")


def _rows(spark: Any, table: str) -> list[tuple[Any, ...]]:
    """The table's rows, sorted; Spark's own tables first refreshed (its file listings are cached per session)."""
    if table.startswith("spark_catalog."):
        spark.catalog.refreshTable(table)
    return sorted((tuple(row) for row in spark.table(table).collect()), key=repr)


def _partitions(spark: Any, table: str) -> list[str]:
    return sorted(row[0] for row in spark.sql(f"SHOW PARTITIONS {table}").collect())


def _location(admin: Admin, table: str) -> Path:
    struct = admin.pool.call("get_table", DB, table)
    return Path(urlsplit(struct.sd.location).path)


def test_insert_into_a_hive_parquet_table_is_read_by_sparks_own_hive_reader(spark: Any, db: str, admin: Admin) -> None:
    spark.sql(f"CREATE TABLE spark_catalog.{db}.sales (id INT, amount DECIMAL(10,2), dt STRING) PARTITIONED BY (dt) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {CATALOG}.{db}.sales VALUES (1, 1.50, '2024-01-01'), (2, 2.25, '2024-01-02'), (3, NULL, '2024-01-02')")
    spark.sql(f"INSERT INTO {CATALOG}.{db}.sales PARTITION (dt='50%') VALUES (4, 4.00)")
    own = _rows(spark, f"spark_catalog.{db}.sales")
    assert own == _rows(spark, f"{CATALOG}.{db}.sales")
    assert len(own) == 4
    assert _partitions(spark, f"spark_catalog.{db}.sales") == ["dt=2024-01-01", "dt=2024-01-02", "dt=50%25"]
    assert (_location(admin, "sales") / "dt=50%25").is_dir()


# The overwrite matrix: every INSERT OVERWRITE shape, on a Hive table and a data source table, in both
# partitionOverwriteModes, with rows and with none, against Spark's own table of the same kind.
_KINDS = {"hive": "STORED AS PARQUET", "datasource": "USING parquet"}
_SHAPES = {
    "no_spec": "PARTITION (a, b) SELECT id, a, b FROM VALUES (10, 1, 'x'), (11, 3, 'z') AS s(id, a, b)",
    "full_spec": "PARTITION (a=1, b='x') SELECT id FROM VALUES (14) AS s(id)",
    "partial_spec": "PARTITION (a=1, b) SELECT id, b FROM VALUES (12, 'y'), (13, 'w') AS s(id, b)",
}


def _twin(spark: Any, name: str, storage: str) -> None:
    columns = "(id INT, a INT, b STRING)" if "USING" in storage else "(id INT)"
    partitioning = "PARTITIONED BY (a, b)" if "USING" in storage else "PARTITIONED BY (a INT, b STRING)"
    spark.sql(f"CREATE TABLE spark_catalog.{DB}.{name} {columns} {storage} {partitioning}")
    spark.sql(f"INSERT INTO spark_catalog.{DB}.{name} PARTITION (a, b) VALUES (1, 1, 'x'), (2, 1, 'y'), (3, 2, 'x')")


# DYNAMIC mode with a full static spec and no rows gets Spark's meaning (the partition emptied) from the session
# extension (hmscatalog.spark.HmsSessionExtensions) the spark fixture sets.
_MATRIX = list(itertools.product(sorted(_KINDS), ["STATIC", "DYNAMIC"], sorted(_SHAPES), ["rows", "no_rows"]))


@pytest.mark.parametrize(("kind", "mode", "shape", "rows"), _MATRIX)
def test_insert_overwrite_means_what_it_means_for_sparks_own_table(spark: Any, db: str, admin: Admin, kind: str, mode: str,
                                                                  shape: str, rows: str) -> None:
    own, ours = f"own_{kind}_{mode}_{shape}_{rows}".lower(), f"our_{kind}_{mode}_{shape}_{rows}".lower()
    for name in (own, ours):
        _twin(spark, name, _KINDS[kind])
    statement = _SHAPES[shape] + (" WHERE false" if rows == "no_rows" else "")
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", mode)
    try:
        spark.sql(f"INSERT OVERWRITE spark_catalog.{DB}.{own} {statement}")
        spark.sql(f"INSERT OVERWRITE {CATALOG}.{DB}.{ours} {statement}")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert _partitions(spark, f"spark_catalog.{DB}.{ours}") == _partitions(spark, f"spark_catalog.{DB}.{own}")
    assert _rows(spark, f"spark_catalog.{DB}.{ours}") == _rows(spark, f"spark_catalog.{DB}.{own}")
    assert _rows(spark, f"{CATALOG}.{DB}.{ours}") == _rows(spark, f"spark_catalog.{DB}.{own}")
    _assert_clean(admin, ours)


def _assert_clean(admin: Admin, table: str) -> None:
    """No staging or temporary folder outside a current location, no data file outside every current location,
    and numFiles/totalSize equal to the visible files under each location."""
    struct = admin.pool.call("get_table", DB, table)
    root = Path(urlsplit(struct.sd.location).path)
    while root.name.startswith(".hms-staging-"):
        root = root.parent
    locations = [struct] if not struct.partitionKeys else admin.pool.call("get_partitions", DB, table, -1)
    current = [Path(urlsplit(p.sd.location).path) for p in locations]
    for path in root.rglob("*"):
        inside = any(path == loc or loc in path.parents for loc in current)
        if path.is_dir() and path.name.startswith((".hms-staging", ".spark-staging", "_temporary")):
            assert inside or any(path in loc.parents for loc in current), f"{path} left behind"
        if path.is_file() and not any(part.startswith((".", "_")) for part in path.relative_to(root).parts):
            assert inside, f"{path} is outside every current location of {table}"
    for owner, location in zip(locations, current):
        visible = [p for p in location.rglob("*") if p.is_file() and not any(
            part.startswith((".", "_")) for part in p.relative_to(location).parts)]
        assert owner.parameters.get("numFiles") == str(len(visible)), (owner.values if struct.partitionKeys else table)
        assert owner.parameters.get("totalSize") == str(sum(p.stat().st_size for p in visible))


_COLUMNS = ("id INT, name STRING, amount DECIMAL(12,3), ratio DOUBLE, flag BOOLEAN, born DATE, ts TIMESTAMP, big BIGINT, "
            "tags ARRAY<STRING>, attrs MAP<STRING, INT>, point STRUCT<x: DOUBLE, label: STRING>")
_VALUES = ", ".join([
    "(1, 'ann', 12.345, 0.5, true, DATE'2024-01-01', TIMESTAMP'2024-01-01 10:00:00', 10000000000, array('a', 'b'), "
    "map('k', 1), named_struct('x', 1.5, 'label', 'p'), 'a/b')",
    "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "(3, 'with | pipe, comma', -0.001, -1e10, false, DATE'1999-12-31', TIMESTAMP'1999-12-31 23:59:59.123456', -5, array(), "
    "map(), named_struct('x', CAST(NULL AS DOUBLE), 'label', NULL), 'k=v: 50% #1')",
    "(4, 'ünïcødé', 0, 0, true, DATE'2024-02-29', TIMESTAMP'2024-02-29 00:00:00', 0, array('x'), map('z', 2), "
    "named_struct('x', 0.0, 'label', 'q'), 'ünï cødé')",
    "(5, '', 1, 1, true, DATE'2024-03-01', TIMESTAMP'2024-03-01 00:00:00', 1, array(''), map('', 0), "
    "named_struct('x', 1.0, 'label', ''), '')",
])
_STORAGES = {
    "parquet": "STORED AS PARQUET",
    "orc": "STORED AS ORC",
    "text": "ROW FORMAT DELIMITED FIELDS TERMINATED BY '|' ESCAPED BY '\\\\' COLLECTION ITEMS TERMINATED BY ',' "
            "MAP KEYS TERMINATED BY ':' NULL DEFINED AS 'NIL' STORED AS TEXTFILE",
    "ds_parquet": "USING parquet",
    "ds_orc": "USING orc",
    "ds_json": "USING json",
}


@pytest.mark.parametrize("storage", sorted(_STORAGES))
def test_rows_written_here_equal_sparks_own_insert_read_by_sparks_hive_reader(spark: Any, db: str, admin: Admin, storage: str) -> None:
    """Every type, NULLs, and partition values with / = : % # spaces and unicode (and the empty string, which
    Spark writes as the default partition), through the connector and through Spark's own insert."""
    columns, values = _COLUMNS, _VALUES
    for name in ("own_types_" + storage, "our_types_" + storage):
        if _STORAGES[storage].startswith("USING"):
            spark.sql(f"CREATE TABLE spark_catalog.{DB}.{name} ({columns}, p STRING) {_STORAGES[storage]} PARTITIONED BY (p)")
        else:
            spark.sql(f"CREATE TABLE spark_catalog.{DB}.{name} ({columns}) PARTITIONED BY (p STRING) {_STORAGES[storage]}")
    spark.sql(f"INSERT INTO spark_catalog.{DB}.own_types_{storage} VALUES {values}")
    spark.sql(f"INSERT INTO {CATALOG}.{DB}.our_types_{storage} VALUES {values}")
    own = _rows(spark, f"spark_catalog.{DB}.own_types_{storage}")
    assert len(own) == 5
    assert _rows(spark, f"spark_catalog.{DB}.our_types_{storage}") == own
    # Spark's own reader of a Hive text table shows the default partition's value as its name; the connector, as
    # Spark's Parquet and ORC readers, as NULL
    assert _rows(spark, f"{CATALOG}.{DB}.our_types_{storage}") == sorted(
        (tuple(None if v == "__HIVE_DEFAULT_PARTITION__" else v for v in row) for row in own), key=repr)
    assert _partitions(spark, f"spark_catalog.{DB}.our_types_{storage}") == _partitions(spark, f"spark_catalog.{DB}.own_types_{storage}")
    own_folders = sorted(p.name for p in _location(admin, f"own_types_{storage}").iterdir() if not p.name.startswith((".", "_")))
    our_folders = sorted(p.name for p in _location(admin, f"our_types_{storage}").iterdir() if not p.name.startswith((".", "_")))
    assert our_folders == own_folders
    _assert_clean(admin, f"our_types_{storage}")


def test_every_write_is_a_change_with_source_write_and_seen_without_refresh(spark: Any, db: str, connector_service: Any) -> None:
    spark.sql(f"CREATE TABLE spark_catalog.{db}.logged (id INT) STORED AS PARQUET")
    assert spark.table(f"{CATALOG}.{db}.logged").count() == 0  # loaded and cached by this driver
    client = connector_service.client()
    try:
        before = {tuple(row) for row in client.statement(f"SHOW CHANGES FROM {CATALOG}")["rows"]}
        spark.sql(f"INSERT INTO {CATALOG}.{db}.logged VALUES (1), (2)")
        assert spark.table(f"{CATALOG}.{db}.logged").count() == 2
        spark.sql(f"INSERT OVERWRITE {CATALOG}.{db}.logged VALUES (3)")
        assert [tuple(r) for r in spark.table(f"{CATALOG}.{db}.logged").collect()] == [(3,)]
        result = client.statement(f"SHOW CHANGES FROM {CATALOG}")
        new = [dict(zip(result["columns"], row)) for row in result["rows"] if tuple(row) not in before]
    finally:
        client.close()
    writes = [row for row in new if row["Source"] == "write" and f"{db}.logged" in str(row["Object"])]
    assert len(writes) == 2, new
    assert _rows(spark, f"spark_catalog.{db}.logged") == [(3,)]


def test_ctas_with_the_partition_column_in_the_middle_lands_under_the_database(spark: Any, db: str, admin: Admin) -> None:
    spark.sql(f"CREATE TABLE {CATALOG}.{db}.daily USING parquet PARTITIONED BY (dt) AS "
              "SELECT * FROM VALUES (1, '2024-01-01', 1.5), (2, '2024-01-02', 2.5) AS s(id, dt, amount)")
    assert _rows(spark, f"spark_catalog.{db}.daily") == [(1, 1.5, "2024-01-01"), (2, 2.5, "2024-01-02")]
    assert _partitions(spark, f"spark_catalog.{db}.daily") == ["dt=2024-01-01", "dt=2024-01-02"]
    database = admin.pool.call("get_database", db)
    assert _location(admin, "daily") == Path(urlsplit(database.locationUri).path) / "daily"
    _assert_clean(admin, "daily")
    spark.sql(f"CREATE TABLE {CATALOG}.{db}.daily_hive STORED AS ORC AS SELECT 1 AS id, 'x' AS label")
    assert _rows(spark, f"spark_catalog.{db}.daily_hive") == [(1, "x")]
    _assert_clean(admin, "daily_hive")


def test_a_failing_ctas_leaves_no_table_and_no_folder_and_a_failing_rtas_keeps_the_old_table(spark: Any, db: str, admin: Admin) -> None:
    database = Path(urlsplit(admin.pool.call("get_database", db).locationUri).path)
    failing = "SELECT id, IF(id = 3, raise_error('boom in the query'), 'x') AS label FROM range(5)"
    with pytest.raises(Exception, match="boom in the query"):
        spark.sql(f"CREATE TABLE {CATALOG}.{db}.never USING parquet AS {failing}")
    assert not spark.catalog.tableExists(f"spark_catalog.{db}.never")
    assert not (database / "never").exists()
    spark.sql(f"CREATE TABLE {CATALOG}.{db}.kept USING parquet AS SELECT 1 AS id, 'old' AS label")
    with pytest.raises(Exception, match="boom in the query"):
        spark.sql(f"CREATE OR REPLACE TABLE {CATALOG}.{db}.kept USING parquet AS {failing}")
    assert _rows(spark, f"spark_catalog.{db}.kept") == [(1, "old")]
    _assert_clean(admin, "kept")
    spark.sql(f"CREATE OR REPLACE TABLE {CATALOG}.{db}.kept USING orc AS SELECT 2 AS id, 'new' AS label, 7 AS extra")
    assert _rows(spark, f"spark_catalog.{db}.kept") == [(2, "new", 7)]
    assert _rows(spark, f"{CATALOG}.{db}.kept") == [(2, "new", 7)]
    _assert_clean(admin, "kept")


def test_dataframe_writer_v2_and_insert_into(spark: Any, db: str, admin: Admin) -> None:
    from pyspark.sql import functions

    df = spark.createDataFrame([(1, "a", "x"), (2, "b", "y")], "id INT, label STRING, dt STRING")
    df.writeTo(f"{CATALOG}.{db}.v2").using("parquet").partitionedBy(functions.col("dt")).create()
    assert _rows(spark, f"spark_catalog.{db}.v2") == [(1, "a", "x"), (2, "b", "y")]
    spark.createDataFrame([(3, "c", "y")], df.schema).writeTo(f"{CATALOG}.{db}.v2").append()
    spark.createDataFrame([(4, "d", "x")], df.schema).writeTo(f"{CATALOG}.{db}.v2").overwritePartitions()
    assert _rows(spark, f"spark_catalog.{db}.v2") == [(2, "b", "y"), (3, "c", "y"), (4, "d", "x")]
    spark.createDataFrame([(5, "e", "y")], df.schema).writeTo(f"{CATALOG}.{db}.v2").overwrite(functions.col("dt") == "y")
    assert _rows(spark, f"spark_catalog.{db}.v2") == [(4, "d", "x"), (5, "e", "y")]
    spark.createDataFrame([(6, "f", "z")], df.schema).write.insertInto(f"{CATALOG}.{db}.v2")
    assert _rows(spark, f"{CATALOG}.{db}.v2") == [(4, "d", "x"), (5, "e", "y"), (6, "f", "z")]
    df.writeTo(f"{CATALOG}.{db}.v2").using("parquet").createOrReplace()
    assert _rows(spark, f"spark_catalog.{db}.v2") == [(1, "a", "x"), (2, "b", "y")]
    _assert_clean(admin, "v2")


def test_a_read_token_is_refused_before_any_file_is_written(spark: Any, db: str, metastore_uri: str, tmp_path: Path,
                                                             admin: Admin) -> None:
    from tests.spark_connector.conftest import registered
    from tests.support.service import served

    spark.sql(f"CREATE TABLE spark_catalog.{db}.guarded (id INT) PARTITIONED BY (dt STRING) STORED AS PARQUET")
    tokens = tokens_file(tmp_path / "tokens.json",
                         {"tokens": [{"name": "ro", "token": "read-only-token-0123456789", "access": "read", "catalogs": ["*"]}]})
    with served(tmp_path / "home", "--tokens", str(tokens)) as service:
        client = service.client()
        client.create_catalog("ro", {"type": "hms", "hive.metastore.uris": metastore_uri})
        client.close()
        # A Spark name of its own: Spark keeps a catalog it has made for the session's life, and other tests
        # register a catalog 'ro' of their own services.
        with registered(spark, service, "ro_writes", token="read-only-token-0123456789", remote_name="ro"):
            with pytest.raises(Exception, match="(?i)permission denied"):
                spark.sql(f"INSERT INTO ro_writes.{db}.guarded VALUES (1, 'x')")
            with pytest.raises(Exception, match="(?i)permission denied"):
                spark.sql(f"CREATE TABLE ro_writes.{db}.never_made USING parquet AS SELECT 1 AS id")
    assert list(_location(admin, "guarded").iterdir()) == []
    assert not spark.catalog.tableExists(f"spark_catalog.{db}.never_made")


@pytest.mark.slow
def test_kill_9_of_the_driver_leaves_the_table_as_before_or_after_a_job(spark: Any, db: str, admin: Admin, metastore_uri: str,
                                                                        connector_service: Any) -> None:
    """Drivers overwriting a table in a loop, killed at random moments (before, during and after a job's tasks
    and its commit): every partition holds one generation's rows whole, the same for all.

    The drivers (one table each) run at once, each killed at its own moment: a driver's start is most of a
    run's time, so the kills cost about one start, not one each."""
    import contextlib
    import random
    import signal
    import subprocess
    import sys
    import threading
    import time

    import pyarrow.parquet as pq

    from spark_connector import connector_jar

    chance = random.Random(int(os.environ.get("KILL_SEED", "0")) or None)
    tables = [f"killed_{run}" for run in range(int(os.environ.get("KILL_RUNS", "3")))]
    for table in tables:
        spark.sql(f"CREATE TABLE spark_catalog.{db}.{table} (id BIGINT, gen INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
        spark.sql(f"INSERT INTO spark_catalog.{db}.{table} SELECT id, 0, CAST(id % 4 AS STRING) FROM range(200000)")
    script = Path(__file__).with_name("write_job.py")
    pauses = {table: chance.uniform(0.0, 6.0) for table in tables}
    firsts: dict[str, str] = {}

    def kill_after_first_commit(table: str, driver: subprocess.Popen[str]) -> None:
        try:
            assert driver.stdout is not None
            firsts[table] = driver.stdout.readline()  # one job committed: the session is up
            time.sleep(pauses[table])
        finally:
            # The whole driver: the Python process and the JVM it started (Spark's driver proper), at once.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(driver.pid, signal.SIGKILL)

    drivers = {table: subprocess.Popen(
        [sys.executable, str(script), str(connector_jar()), metastore_uri, connector_service.url, connector_service.token,
         CATALOG, db, table], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=Path(__file__).parents[2],
        start_new_session=True) for table in tables}
    killers = [threading.Thread(target=kill_after_first_commit, args=item) for item in drivers.items()]
    try:
        for killer in killers:
            killer.start()
        for killer in killers:
            killer.join(timeout=600)
    finally:
        for driver in drivers.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
            if driver.stdout is not None:
                driver.stdout.close()
    for table in tables:
        assert firsts.get(table, "").startswith("committed"), (table, firsts.get(table))
        generations = set()
        for partition in admin.pool.call("get_partitions", db, table, -1):
            folder = Path(urlsplit(partition.sd.location).path)
            rows = [pq.read_table(f) for f in folder.iterdir() if not f.name.startswith((".", "_"))]
            gens = {g for t in rows for g in t.column("gen").to_pylist()}
            assert len(gens) == 1 and sum(t.num_rows for t in rows) == 50000, (table, partition.values, gens)
            generations |= gens
        assert len(generations) == 1, (table, generations)


def _iceberg(metastore_uri: str, table: str) -> Any:
    from pyiceberg.catalog.hive import HiveCatalog

    return HiveCatalog("check", uri=metastore_uri, **{"hive.hive2-compatible": "true"}).load_table((DB, table))


def test_iceberg_inserts_are_one_snapshot_each_read_back_by_pyiceberg(spark: Any, db: str, metastore_uri: str) -> None:
    spark.sql(f"CREATE TABLE {CATALOG}.{db}.ice (id BIGINT, name STRING, amount DECIMAL(10,2), dt STRING) USING iceberg "
              "PARTITIONED BY (dt)")
    spark.sql(f"INSERT INTO {CATALOG}.{db}.ice VALUES (1, 'a', 1.50, 'x'), (2, NULL, NULL, 'y'), (3, 'c', 3.00, 'x')")
    table = _iceberg(metastore_uri, "ice")
    assert len(table.snapshots()) == 1
    assert sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "name": "a", "amount": Decimal("1.50"), "dt": "x"}, {"id": 2, "name": None, "amount": None, "dt": "y"},
        {"id": 3, "name": "c", "amount": Decimal("3.00"), "dt": "x"}]
    for task in table.scan().plan_files():  # each file's partition tuple matches its rows, and its counts add up
        import pyarrow.parquet as pq

        rows = pq.read_table(urlsplit(task.file.file_path).path).to_pylist()
        assert {r["dt"] for r in rows} == {task.file.partition[0]} and task.file.record_count == len(rows)
        assert pq.read_schema(urlsplit(task.file.file_path).path).field("id").metadata[b"PARQUET:field_id"] == b"1"
    spark.createDataFrame([(4, "d", None, "x")], "id BIGINT, name STRING, amount DECIMAL(10,2), dt STRING") \
        .writeTo(f"{CATALOG}.{db}.ice").overwritePartitions()
    table = _iceberg(metastore_uri, "ice")
    assert 2 <= len(table.snapshots()) <= 3
    assert sorted((r["id"], r["dt"]) for r in table.scan().to_arrow().to_pylist()) == [(2, "y"), (4, "x")]
    assert sorted((r.id, r.dt) for r in spark.table(f"{CATALOG}.{db}.ice").collect()) == [(2, "y"), (4, "x")]
    spark.sql(f"CREATE TABLE {CATALOG}.{db}.ice_days (id BIGINT, ts TIMESTAMP) USING iceberg PARTITIONED BY (days(ts))")
    spark.sql(f"INSERT INTO {CATALOG}.{db}.ice_days VALUES (1, TIMESTAMP'2024-01-01 00:00:00')")  # every transform: test_iceberg_writes
    assert [task.file.partition[0] for task in _iceberg(metastore_uri, "ice_days").scan().plan_files()] == [19723]
