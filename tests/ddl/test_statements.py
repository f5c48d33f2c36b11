"""DDL statements on the real metastore, proven by what Spark's own Hive support reads afterwards."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import AlreadyExistsError, ConfigurationError, HmsCatalogError, MetastoreError, NotFoundError, UnsupportedTableError
from hms_catalog.execution import Session
from tests.support.sessions import EVENTS, caught_up, open_catalog

DB = f"ddl{os.getpid()}"


def version_of(result: Any) -> int:
    row = result.as_dicts()[0]
    return int(next(value for key, value in row.items() if "version" in key.lower()))


@pytest.fixture(scope="module")
def ddl(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str, spark: Any) -> Iterator[Session]:
    """A session whose catalog ``hive`` follows the metastore's events, with a database of its own."""
    session = open_catalog(tmp_path_factory.mktemp("ddl") / "home", metastore_uri, **EVENTS)
    session.run_one(f"CREATE DATABASE IF NOT EXISTS hive.{DB} COMMENT 'made here' WITH DBPROPERTIES ('team' = 'etl')")
    session.run_one(f"USE hive.{DB}")
    yield session
    session.run_one(f"DROP DATABASE IF EXISTS hive.{DB} CASCADE")
    session.manager.close()


def test_databases_are_created_altered_and_dropped(ddl: Session, spark: Any, admin: Any) -> None:
    name = f"{DB}_x"
    created = ddl.run_one(f"CREATE SCHEMA hive.{name} COMMENT 'scratch'")
    assert "created" in created.rows[0][0] and version_of(created) == ddl.catalog("hive").versions.current
    assert name in [row[0] for row in spark.sql("SHOW DATABASES").collect()]
    ddl.run_one(f"ALTER DATABASE hive.{name} SET DBPROPERTIES ('owner.team' = 'bi')")
    assert admin.pool.call("get_database", name).parameters["owner.team"] == "bi"
    with pytest.raises(AlreadyExistsError, match="already exists"):
        ddl.run_one(f"CREATE DATABASE hive.{name}")
    ddl.run_one(f"CREATE TABLE hive.{name}.a (id INT)")
    with pytest.raises(ConfigurationError, match=r"is not empty.*\(a\)"):
        ddl.run_one(f"DROP DATABASE hive.{name}")
    ddl.run_one(f"DROP DATABASE hive.{name} CASCADE")
    assert name not in [row[0] for row in spark.sql("SHOW DATABASES").collect()]
    with pytest.raises(NotFoundError, match="does not exist"):
        ddl.run_one(f"DROP DATABASE hive.{name}")
    assert "nothing changed" in ddl.run_one(f"DROP DATABASE IF EXISTS hive.{name}").rows[0][0]


@pytest.mark.parametrize("storage", ["STORED AS PARQUET", "STORED AS ORC", "STORED AS AVRO", "USING parquet",
                                     "ROW FORMAT DELIMITED FIELDS TERMINATED BY '|' NULL DEFINED AS 'NIL' STORED AS TEXTFILE"])
def test_tables_made_here_are_written_and_read_by_spark(ddl: Session, spark: Any, storage: str) -> None:
    name = "t_" + "".join(ch for ch in storage.split()[-1].lower() if ch.isalnum()) + ("_ds" if storage.startswith("USING") else "")
    columns = "id INT COMMENT 'the key', amount DECIMAL(10,2), tags ARRAY<STRING>, point STRUCT<x: DOUBLE, label: STRING>"
    partitioned = "PARTITIONED BY (dt)" if storage.startswith("USING") else "PARTITIONED BY (dt STRING)"
    extra = ", dt STRING" if storage.startswith("USING") else ""
    ddl.run_one(f"CREATE TABLE {name} ({columns}{extra}) COMMENT 'facts' {partitioned} {storage}")
    spark.sql(f"INSERT INTO {DB}.{name} PARTITION (dt='2024-01-01') VALUES (1, 12.50, array('a'), named_struct('x', 1.5, 'label', 'p')), "
              "(2, NULL, NULL, NULL)")
    rows = spark.sql(f"SELECT id, amount, tags, point.label, dt FROM {DB}.{name} ORDER BY id").collect()
    assert [tuple(row) for row in rows] == [(1, Decimal("12.50"), ["a"], "p", "2024-01-01"),
                                            (2, None, None, None, "2024-01-01")]
    described = {row[0]: row[2] for row in spark.sql(f"DESCRIBE {DB}.{name}").collect()}
    assert described["id"] == "the key"
    assert ddl.run_one(f"SELECT count(*) AS n FROM {name}").rows[0][0] == 2  # read back through the catalog too


def test_alter_table_reaches_spark_and_old_partitions(ddl: Session, spark: Any, admin: Any) -> None:
    ddl.run_one("CREATE TABLE grows (id INT, small INT) PARTITIONED BY (dt STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.grows PARTITION (dt='a') VALUES (1, 1)")
    caught_up(ddl, admin)  # Spark's INSERT changed the table too: its events are read before the version is taken
    before = ddl.catalog("hive").versions.current
    done = ddl.run_one("ALTER TABLE grows ADD COLUMNS (note STRING COMMENT 'new')")
    logged = ddl.catalog("hive").versions.changes(before).changes
    assert [(c.object.table, c.source.value) for c in logged] == [("grows", "ddl")]
    assert version_of(done) == logged[0].version  # the answer names the version the change is logged at
    spark.sql(f"REFRESH TABLE {DB}.grows")
    assert [r.note for r in spark.sql(f"SELECT note FROM {DB}.grows").collect()] == [None]  # the old partition reads it
    spark.sql(f"INSERT INTO {DB}.grows PARTITION (dt='b') VALUES (2, 2, 'x')")
    assert sorted((r.id, r.note) for r in spark.sql(f"SELECT id, note FROM {DB}.grows").collect()) == [(1, None), (2, "x")]
    ddl.run_one("ALTER TABLE grows CHANGE COLUMN small small BIGINT")
    with pytest.raises(ConfigurationError, match="from string to int"):
        ddl.run_one("ALTER TABLE grows CHANGE COLUMN note note INT")
    ddl.run_one("ALTER TABLE grows SET TBLPROPERTIES ('quality' = 'gold')")
    props = {r[0]: r[1] for r in ddl.run_one("SHOW TBLPROPERTIES grows").rows}
    assert props["quality"] == "gold"
    ddl.run_one("ALTER TABLE grows UNSET TBLPROPERTIES ('quality')")
    assert "quality" not in {r[0] for r in ddl.run_one("SHOW TBLPROPERTIES grows").rows}


def test_partitions_are_added_shown_and_dropped(ddl: Session, spark: Any) -> None:
    ddl.run_one("CREATE TABLE parted (id INT) PARTITIONED BY (d STRING, h INT) STORED AS PARQUET")
    ddl.run_one("ALTER TABLE parted ADD PARTITION (d='50%/x', h=2) PARTITION (d='a', h=12) PARTITION (d='a', h=02)")
    shown = [row[0] for row in ddl.run_one("SHOW PARTITIONS parted").rows]
    assert shown == ["d=50%25%2Fx/h=2", "d=a/h=12", "d=a/h=2"]
    theirs = sorted(row[0] for row in spark.sql(f"SHOW PARTITIONS {DB}.parted").collect())
    assert theirs == sorted(shown)
    assert [row[0] for row in ddl.run_one("SHOW PARTITIONS parted WHERE h > 2").rows] == ["d=a/h=12"]  # typed: 12 > 2
    with pytest.raises(ConfigurationError, match="'abc' is not a int"):
        ddl.run_one("ALTER TABLE parted ADD PARTITION (d='b', h='abc')")
    with pytest.raises(AlreadyExistsError):
        ddl.run_one("ALTER TABLE parted ADD PARTITION (d='a', h=12)")
    ddl.run_one("ALTER TABLE parted ADD IF NOT EXISTS PARTITION (d='a', h=12) PARTITION (d='c', h=1)")
    ddl.run_one("ALTER TABLE parted DROP PARTITION (d='a')")  # a partial spec: both of 'a'
    assert [row[0] for row in ddl.run_one("SHOW PARTITIONS parted").rows] == ["d=50%25%2Fx/h=2", "d=c/h=1"]
    with pytest.raises(NotFoundError):
        ddl.run_one("ALTER TABLE parted DROP PARTITION (d='zz')")


def test_msck_repair_adds_folders_in_batches_and_sync_drops_vanished(ddl: Session, spark: Any, admin: Any) -> None:
    ddl.run_one("CREATE TABLE repaired (id INT) PARTITIONED BY (p INT) STORED AS PARQUET")
    location = Path(spark.sql(f"DESCRIBE FORMATTED {DB}.repaired").where("col_name = 'Location'").collect()[0][1].replace("file:", ""))
    for index in range(250):
        (location / f"p={index}").mkdir(parents=True)
    (location / "p=notanumber").mkdir()
    mark = admin.pool.call("get_current_notificationEventId").eventId
    assert "250 added" in ddl.run_one("MSCK REPAIR TABLE repaired").rows[0][0]
    events = admin.pool.call("get_next_notification", ttypes.NotificationEventRequest(lastEvent=mark, maxEvents=1000)).events
    # one add_partitions call for the 250 (Hive's audit log does not record that call: its event counts it)
    assert [e.eventType for e in events if e.tableName == "repaired"] == ["ADD_PARTITION"]
    assert len(ddl.run_one("SHOW PARTITIONS repaired").rows) == 250
    (location / "p=7").rmdir()
    ddl.run_one("MSCK REPAIR TABLE repaired SYNC PARTITIONS")
    assert len(spark.sql(f"SHOW PARTITIONS {DB}.repaired").collect()) == 249


def test_show_create_table_recreates_the_table(ddl: Session, spark: Any) -> None:
    ddl.run_one("CREATE TABLE original (id INT COMMENT 'k', amount DECIMAL(10,2), m MAP<STRING, ARRAY<INT>>) COMMENT 'the original' "
                "PARTITIONED BY (dt DATE COMMENT 'day') ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE "
                "TBLPROPERTIES ('quality' = 'gold')")
    text = ddl.run_one("SHOW CREATE TABLE original").rows[0][0]
    ddl.run_one(text.replace(f"hive.{DB}.original", f"hive.{DB}.copy"))
    described = [tuple(row) for row in spark.sql(f"DESCRIBE {DB}.original").collect()]
    assert [tuple(row) for row in spark.sql(f"DESCRIBE {DB}.copy").collect()] == described
    assert ddl.run_one(f"DESCRIBE hive.{DB}.copy").rows == ddl.run_one(f"DESCRIBE hive.{DB}.original").rows


def test_rename_and_drop(ddl: Session, spark: Any, metastore: Any) -> None:
    ddl.run_one("CREATE TABLE before_rename (id INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.before_rename VALUES (7)")
    ddl.run_one(f"ALTER TABLE before_rename RENAME TO hive.{DB}.after_rename")
    assert [r.id for r in spark.sql(f"SELECT id FROM {DB}.after_rename").collect()] == [7]
    with pytest.raises(ConfigurationError, match="stays within catalog"):
        ddl.run_one(f"ALTER TABLE after_rename RENAME TO other.{DB}.x")
    folder = metastore.warehouse / f"{DB}.db" / "after_rename"
    assert folder.is_dir() and not (metastore.warehouse / f"{DB}.db" / "before_rename").exists()
    ddl.run_one("DROP TABLE after_rename")
    assert not folder.exists()  # a managed table's files go with it
    external = metastore.warehouse.parent / f"{DB}_external"
    ddl.run_one(f"CREATE EXTERNAL TABLE kept (id INT) STORED AS PARQUET LOCATION '{external.as_uri()}'")
    spark.sql(f"INSERT INTO {DB}.kept VALUES (1)")
    ddl.run_one("DROP TABLE kept PURGE")
    assert any(external.iterdir())  # an external table's files stay
    with pytest.raises(NotFoundError):
        ddl.run_one("DROP TABLE kept")


def test_iceberg_tables_with_partition_transforms(ddl: Session, iceberg_catalog: Any) -> None:
    ddl.run_one("CREATE TABLE events (id BIGINT, ts TIMESTAMP, name STRING) USING iceberg PARTITIONED BY (days(ts), bucket(16, id))")
    table = iceberg_catalog.load_table((DB, "events"))
    assert [str(field.transform) for field in table.spec().fields] == ["day", "bucket[16]"]
    ddl.run_one("ALTER TABLE events ADD COLUMNS (score DOUBLE)")
    ddl.run_one("ALTER TABLE events CHANGE COLUMN id id BIGINT COMMENT 'the id'")
    assert [f.name for f in iceberg_catalog.load_table((DB, "events")).schema().fields] == ["id", "ts", "name", "score"]
    with pytest.raises(ConfigurationError, match="Iceberg allows"):
        ddl.run_one("ALTER TABLE events CHANGE COLUMN score score FLOAT")
    assert "days(ts), bucket(16, id)" in ddl.run_one("SHOW CREATE TABLE events").rows[0][0]


def test_our_own_events_are_not_logged_again(ddl: Session, admin: Any) -> None:
    """Each DDL is one change-log entry (source ddl); the metastore events it caused are skipped by the
    follower, not logged a second time as changes from the metastore."""
    catalog = ddl.catalog("hive")
    caught_up(ddl, admin)
    before = catalog.versions.current
    ddl.run_one("CREATE TABLE quiet (id INT) PARTITIONED BY (p STRING)")
    ddl.run_one("ALTER TABLE quiet ADD PARTITION (p='a') PARTITION (p='b')")
    ddl.run_one("ALTER TABLE quiet DROP PARTITION (p='a')")
    ddl.run_one("ALTER TABLE quiet ADD COLUMNS (more INT)")

    def logged() -> list[tuple[str, str]]:
        return [(c.kind.value, c.source.value) for c in catalog.versions.changes(before).changes if c.object.table == "quiet"]

    assert logged() == [("added", "ddl"), ("changed", "ddl"), ("changed", "ddl"), ("changed", "ddl")]
    caught_up(ddl, admin)  # the metastore's events of those four DDLs are read now
    assert logged() == [("added", "ddl"), ("changed", "ddl"), ("changed", "ddl"), ("changed", "ddl")]


def test_what_must_not_change_is_refused(ddl: Session, spark: Any) -> None:
    spark.sql(f"CREATE VIEW {DB}.a_view AS SELECT 1 AS one")
    with pytest.raises(UnsupportedTableError, match="view"):
        ddl.run_one("ALTER TABLE a_view ADD COLUMNS (x INT)")
    with pytest.raises(HmsCatalogError, match="does not exist"):
        ddl.run_one("CREATE TABLE hive.no_such_database.t (id INT)")


def test_concurrent_ddl_leaves_metastore_and_caches_consistent(ddl: Session, admin: Any) -> None:
    for index in range(4):
        ddl.run_one(f"CREATE TABLE busy{index} (id INT) PARTITIONED BY (p INT)")
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        session = Session(ddl.manager)
        session.run_one(f"USE hive.{DB}")
        try:
            for step in range(6):
                table = f"busy{(worker + step) % 4}"
                session.run_one(f"ALTER TABLE {table} ADD IF NOT EXISTS PARTITION (p={worker * 10 + step})")
                session.run_one(f"ALTER TABLE {table} SET TBLPROPERTIES ('w{worker}' = '{step}')")
                session.run_one(f"SHOW PARTITIONS {table}")
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for index in range(4):
        ours = sorted(row[0] for row in ddl.run_one(f"SHOW PARTITIONS busy{index}").rows)
        theirs = sorted(admin.pool.call("get_partition_names", DB, f"busy{index}", -1))
        assert ours == theirs and len(ours) == 12
        params = admin.pool.call("get_table", DB, f"busy{index}").parameters
        assert {f"w{w}" for w in range(8)} <= set(params)


def test_a_failed_add_partition_leaves_the_table_as_before(ddl: Session, admin: Any, metastore_uri: str) -> None:
    """One of 150 partitions exists: the statement fails before it adds any (it asks first). With
    ``hive.metastore.partition.batch.size`` 100 they go in two metastore calls; when the second fails (the
    metastore refuses a value of 900 characters), the 100 the first call added are dropped again: the
    statement happens whole or not at all."""
    ddl.run_one(f"CREATE CATALOG small PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}', "
                "'hive.metastore.partition.batch.size'='100')")
    try:
        ddl.run_one(f"CREATE TABLE small.{DB}.batched (id INT) PARTITIONED BY (p INT) STORED AS PARQUET")
        ddl.run_one(f"ALTER TABLE small.{DB}.batched ADD PARTITION (p=140)")
        before = ddl.catalog("small").versions.current
        spec = " ".join(f"PARTITION (p={index})" for index in range(150))
        with pytest.raises(AlreadyExistsError, match="140"):
            ddl.run_one(f"ALTER TABLE small.{DB}.batched ADD {spec}")
        assert admin.pool.call("get_partition_names", DB, "batched", -1) == ["p=140"]
        assert [row[0] for row in ddl.run_one(f"SHOW PARTITIONS small.{DB}.batched").rows] == ["p=140"]
        logged = [c for c in ddl.catalog("small").versions.changes(before).changes if c.object.table == "batched"]
        assert all(c.source.value != "ddl" for c in logged)  # a DDL that did not happen is not logged as one
        seen = ddl.catalog("small").metrics()
        again = ddl.run_one(f"ALTER TABLE small.{DB}.batched ADD IF NOT EXISTS {spec}").rows[0][0]
        assert again.startswith("149 partition(s) added") and "1 existed already" in again
        added = {m: n for m, n in ddl.catalog("small").metrics().calls_since(seen).items() if m.startswith("add_partitions")}
        assert list(added.values()) == [2], added  # 100 and 49
        assert len(admin.pool.call("get_partition_names", DB, "batched", -1)) == 150
        ddl.run_one(f"CREATE TABLE small.{DB}.refused (id INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
        values = [f"v{index}" if index != 140 else "x" * 900 for index in range(150)]
        with pytest.raises(MetastoreError):
            ddl.run_one(f"ALTER TABLE small.{DB}.refused ADD " + " ".join(f"PARTITION (p='{value}')" for value in values))
        assert admin.pool.call("get_partition_names", DB, "refused", -1) == []
    finally:
        ddl.run_one("DROP CATALOG small")


def test_show_forms_with_in_list_what_spark_lists(ddl: Session, spark: Any) -> None:
    """Spark's SHOW TABLES / VIEWS / COLUMNS / PARTITIONS with ``IN`` (as well as FROM) and its ``*``/``|`` patterns: the
    same names as Spark's own statements list for the same database."""
    name = f"{DB}_in"
    spark.sql(f"CREATE DATABASE {name}")
    try:
        spark.sql(f"CREATE TABLE {name}.orders (id INT, note STRING) PARTITIONED BY (dt STRING) STORED AS PARQUET")
        spark.sql(f"ALTER TABLE {name}.orders ADD PARTITION (dt = '2024-01-01')")
        spark.sql(f"CREATE TABLE {name}.order_lines (id INT) USING parquet")
        spark.sql(f"CREATE VIEW {name}.recent AS SELECT id FROM {name}.orders")

        def names(statement: str, column: int = 0) -> list[str]:
            return sorted(str(row[column]) for row in ddl.run_one(statement).rows)

        def sparks(statement: str, column: int) -> list[str]:
            """Spark's names, less its session's temporary views (listed in every database; earlier tests made some)."""
            return sorted(str(row[column]) for row in spark.sql(statement).collect() if not row.asDict().get("isTemporary"))

        for pattern in ("", " LIKE 'order*'", " 'o*|rec*'", " LIKE 'ORDERS'"):
            assert names(f"SHOW TABLES IN hive.{name}{pattern}") == sparks(f"SHOW TABLES IN {name}{pattern}", 1), pattern
        assert names(f"SHOW VIEWS IN {name}") == sparks(f"SHOW VIEWS IN {name}", 1) == ["recent"]
        assert names(f"SHOW VIEWS FROM hive.{name} LIKE 'x*'") == []
        for form in (f"IN {name}.orders", f"FROM orders IN {name}", f"IN orders FROM {name}"):
            assert names(f"SHOW COLUMNS {form}") == sparks(f"SHOW COLUMNS {form}", 0) == ["dt", "id", "note"], form
        assert names(f"SHOW PARTITIONS IN {name}.orders") == sparks(f"SHOW PARTITIONS {name}.orders", 0)
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")
