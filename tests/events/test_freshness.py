"""A catalog following the real metastore's events sees changes made by Spark, pyiceberg and thrift
without REFRESH, and keeps the change log and versions users can read."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hmsclient.genthrift.hive_metastore import ttypes

from hms_catalog.errors import NotFoundError
from hms_catalog.execution import Session
from hms_catalog.metastore import EmbeddedMetastore
from tests.support.hms import Admin
from tests.support.sessions import open_catalog

INTERVAL_MS = 200
EVENTS = {"hive.enable_hms_events_incremental_sync": "true", "hive.hms_events_polling_interval_ms": str(INTERVAL_MS)}


@pytest.fixture
def following(home: Path, metastore_uri: str) -> Iterator[Session]:
    session = open_catalog(home, metastore_uri, **EVENTS)
    yield session
    session.manager.close()


def caught_up(session: Session, admin: Admin) -> None:
    """Wait until the catalog's follower has read every event the metastore has now (the follower's own
    thread, at its own interval: nothing here polls for it)."""
    newest = admin.pool.call("get_current_notificationEventId").eventId
    follower = session.manager.catalog("hive").follower
    assert follower is not None
    deadline = time.monotonic() + 30
    while (follower.last_event_id or 0) < newest:
        assert time.monotonic() < deadline, f"the follower is at {follower.last_event_id}, the metastore at {newest}"
        time.sleep(INTERVAL_MS / 4000)


def tables(session: Session, database: str) -> list[str]:
    return session.run_one(f"SHOW TABLES FROM hive.{database}").column("Table")


def columns(session: Session, name: str) -> list[str]:
    return [row[0] for row in session.run_one(f"DESCRIBE hive.{name}").rows if row[0] and not row[0].startswith("#")]


def split_partitions(session: Session, name: str) -> list[str]:
    return sorted({row[5] for row in session.run_one(f"SHOW SPLITS FROM hive.{name}").rows})


def changes(session: Session, since: int = 0) -> list[tuple[str, str, str]]:
    return [(kind, obj, source) for _, kind, obj, source in session.run_one(f"SHOW CHANGES FROM hive SINCE {since}").rows]


def test_changes_made_through_thrift_are_seen_without_refresh(following: Session, admin: Admin, unique_name: str) -> None:
    database = unique_name
    admin.create_database(database)
    admin.create_table(database, "kept", [("id", "int")])
    assert tables(following, database) == ["kept"]  # first use: the follower starts, names are cached
    catalog = following.manager.catalog("hive")
    table = admin.create_table(database, "facts", [("id", "int")], partition_keys=[("dt", "string")])
    caught_up(following, admin)
    assert tables(following, database) == ["facts", "kept"]
    assert split_partitions(following, f"{database}.facts") == []

    directory = Path(table.sd.location.removeprefix("file:").removeprefix("//")) / "dt=1"
    directory.mkdir(parents=True)
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int32())}), directory / "part-0.parquet")
    sd = ttypes.StorageDescriptor(**{**table.sd.__dict__, "location": f"file:{directory}"})
    admin.pool.call("add_partitions", [ttypes.Partition(values=["1"], dbName=database, tableName="facts", sd=sd,
                                                         parameters={})])
    altered = admin.pool.call("get_table", database, "facts")
    altered.sd.cols.append(ttypes.FieldSchema("name", "string", ""))
    admin.pool.call("alter_table", database, "facts", altered)
    caught_up(following, admin)
    assert split_partitions(following, f"{database}.facts") == ["dt=1"]
    assert columns(following, f"{database}.facts") == ["id", "name", "dt"]

    renamed = admin.pool.call("get_table", database, "kept")
    renamed.tableName = "moved"
    admin.pool.call("alter_table", database, "kept", renamed)
    admin.drop_table(database, "facts")
    caught_up(following, admin)
    assert tables(following, database) == ["moved"]
    with pytest.raises(NotFoundError):
        following.run_one(f"DESCRIBE hive.{database}.facts")
    logged = changes(following)
    assert ("added", f"table {database}.facts", "event") in logged
    assert ("added", f"partition {database}.facts dt=1", "event") in logged
    assert ("dropped", f"table {database}.kept", "event") in logged and ("added", f"table {database}.moved", "event") in logged
    assert logged[-1] == ("dropped", f"table {database}.facts", "event")
    status = catalog.follower.status()  # type: ignore[union-attr]
    assert status.applied + status.superseded >= 5 and status.full_invalidations == 0 and status.failures == 0
    admin.drop_database(database)


def test_spark_writes_are_seen_without_refresh(following: Session, admin: Admin, spark: Any, unique_name: str) -> None:
    database = unique_name
    spark.sql(f"CREATE DATABASE {database}")
    spark.sql(f"CREATE TABLE {database}.sales (id INT, amount DOUBLE) PARTITIONED BY (dt STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {database}.sales PARTITION (dt='2024-01-01') VALUES (1, 1.5)")
    name = f"{database}.sales"
    assert split_partitions(following, name) == ["dt=2024-01-01"]
    before = dict(following.run_one(f"SHOW TABLE STATUS FROM hive.{database}").as_dicts()[0])

    spark.sql(f"INSERT INTO {name} PARTITION (dt='2024-01-02') VALUES (2, 2.5)")
    spark.sql(f"INSERT INTO {name} PARTITION (dt='2024-01-01') VALUES (3, 3.5)")
    spark.sql(f"ALTER TABLE {name} ADD COLUMNS (region STRING)")
    caught_up(following, admin)
    assert split_partitions(following, name) == ["dt=2024-01-01", "dt=2024-01-02"]
    paths = [row[0] for row in following.run_one(f"SHOW SPLITS FROM hive.{name} WHERE dt = '2024-01-01'").rows]
    assert len(paths) == 2  # the second file of the first partition is listed: its listing was dropped
    assert columns(following, name) == ["id", "amount", "region", "dt"]
    after = following.run_one(f"SHOW TABLE STATUS FROM hive.{database}").as_dicts()[0]
    assert after["Version"] > before["Version"]
    spark.sql(f"DROP DATABASE {database} CASCADE")


def test_iceberg_commits_are_seen_without_refresh(following: Session, admin: Admin, iceberg_catalog: Any,
                                                  unique_name: str) -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    iceberg_catalog.create_namespace(unique_name)
    table = iceberg_catalog.create_table(f"{unique_name}.events", Schema(NestedField(1, "id", LongType(), required=False)))
    table.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    name = f"{unique_name}.events"
    assert len(following.run_one(f"SHOW SPLITS FROM hive.{name}").rows) == 1
    assert columns(following, name) == ["id"]

    table.append(pa.table({"id": pa.array([3], pa.int64())}))
    with table.update_schema() as update:
        update.add_column("kind", StringType())
    caught_up(following, admin)
    assert len(following.run_one(f"SHOW SPLITS FROM hive.{name}").rows) == 2
    assert columns(following, name) == ["id", "kind"]
    assert ("changed", f"table {name}", "event") in changes(following)
    iceberg_catalog.drop_table(name)
    iceberg_catalog.drop_namespace(unique_name)


def test_show_changes_since_a_version_and_refresh_entries(following: Session, admin: Admin, unique_name: str) -> None:
    admin.create_database(unique_name)
    assert unique_name in following.run_one("SHOW DATABASES FROM hive").column("Database")
    result = following.run_one("SHOW CHANGES FROM hive")
    assert result.columns == ("Version", "Kind", "Object", "Source") and "current version" in result.message
    seen = int(result.message.split("current version ")[1].split(";")[0])
    following.run_one(f"REFRESH DATABASE hive.{unique_name}")
    assert changes(following, seen) == [("invalidated", f"database {unique_name}", "refresh")]
    admin.drop_database(unique_name)
    caught_up(following, admin)
    assert unique_name not in following.run_one("SHOW DATABASES FROM hive").column("Database")
    assert changes(following, seen)[-1] == ("dropped", f"database {unique_name}", "event")


def test_a_catalog_without_events_asks_the_metastore_for_nothing_in_the_background(session: Session) -> None:
    catalog = session.manager.catalog("hive")
    session.run_one("SHOW DATABASES FROM hive")
    before = catalog.metrics()
    time.sleep(0.5)
    assert catalog.follower is None and catalog.metrics().calls_since(before) == {}
    assert "not followed" in session.run_one("SHOW CHANGES FROM hive").message


def test_the_cli_exits_at_once_with_a_follower_running(home: Path, metastore: EmbeddedMetastore) -> None:
    properties = ", ".join(f"'{k}'='{v}'" for k, v in {**EVENTS, "hive.hms_events_polling_interval_ms": "100000"}.items())
    script = (f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}', {properties}); "
              "SHOW DATABASES FROM hive")
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "-e", script],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "default" in run.stdout and time.monotonic() - started < 60


@pytest.mark.parametrize("value", ["yes", "0", "-5", "fast"])
def test_event_properties_are_validated(home: Path, metastore_uri: str, value: str) -> None:
    from hms_catalog.errors import ConfigurationError

    key = "hive.enable_hms_events_incremental_sync" if value == "yes" else "hive.hms_events_polling_interval_ms"
    with pytest.raises(ConfigurationError, match=key.replace(".", r"\.")):
        open_catalog(home, metastore_uri, **{key: value})
