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

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import NotFoundError
from hms_catalog.execution import Session
from hms_catalog.metastore import EmbeddedMetastore
from tests.support.hms import Admin
from tests.support.sessions import EVENTS, caught_up, open_catalog

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test


@pytest.fixture
def following(home: Path, metastore_uri: str) -> Iterator[Session]:
    session = open_catalog(home, metastore_uri, **EVENTS)
    yield session
    session.manager.close()


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
    logged = changes(following, seen)
    # The drop is logged by whichever sees it first: the event, or (under load, before the follower gets to
    # it) a reload of the database list, source 'load'; a reload may also log it once more after the event
    # did (a known duplicate). Nothing else comes after it.
    drops = [source for kind, obj, source in logged if (kind, obj) == ("dropped", f"database {unique_name}")]
    assert drops and set(drops) <= {"event", "load"}, logged
    assert logged[-1][:2] == ("dropped", f"database {unique_name}")


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


def _deep_partitions(table: ttypes.Table, count: int, levels: int = 4) -> list[ttypes.Partition]:
    """``count`` partitions of ``table`` with locations ``levels`` folders deeper than the table's (4: over 200
    characters, as deep as a real warehouse's), as a Spark insert with many dynamic partitions or MSCK REPAIR
    TABLE registers them: their directories exist already. (The call takes twice as long when the metastore
    makes the directories itself: Hadoop's local filesystem, without its native library, starts a chmod
    process for each.)"""
    deep = "/".join(f"level_{depth:02d}_of_a_deeply_nested_warehouse_layout" for depth in range(levels))
    partitions = []
    for number in range(count):
        values = [f"2024-{number % 12 + 1:02d}-{number % 28 + 1:02d}", f"bucket_{number:06d}"]
        location = f"{table.sd.location}/{deep}/dt={values[0]}/part={values[1]}"
        Path(location.removeprefix("file:")).mkdir(parents=True)
        sd = ttypes.StorageDescriptor(**{**table.sd.__dict__, "location": location})
        partitions.append(ttypes.Partition(values=values, dbName=table.dbName, tableName=table.tableName, sd=sd,
                                           parameters={"transient_lastDdlTime": "1700000000"}))
    return partitions


def test_one_call_adding_ten_megabytes_of_partitions_is_stored_and_followed(
    following: Session, admin: Admin, metastore_uri: str, unique_name: str
) -> None:
    """The listener's ADD_PARTITION message for all of them (11 MB of JSON) fits the notification log, as
    on a production metastore; it is read back whole, and the following catalog applies it as one event
    (no fallback to invalidating everything) and then lists every partition without REFRESH."""
    from hms_catalog.client import HmsClientPool
    from hms_catalog.events import decode_event
    from hms_catalog.properties import ClientConfig, parse_uris
    from planner import plan_table

    admin.create_database(unique_name)
    table = admin.create_table(unique_name, "wide", [("id", "int")], partition_keys=[("dt", "string"), ("part", "string")])
    catalog = following.manager.catalog("hive")
    assert plan_table(catalog, catalog.table(unique_name, "wide")).summary.partitions_total == 0  # names cached
    caught_up(following, admin)
    follower = catalog.follower
    assert follower is not None
    before = follower.status()
    # 2,500 partitions of 3,300-character locations make the message of 10,000 partitions of 200-character ones
    # (over 10 MB): the size is what the log must hold, and the metastore adds a quarter of the rows (about a
    # minute less of Derby inserts in this suite).
    partitions = _deep_partitions(table, 2_500, levels=70)
    assert min(len(p.sd.location) for p in partitions) > 3_200
    patient = HmsClientPool(ClientConfig(uris=parse_uris(metastore_uri), pool_size=1, socket_timeout=900, retries=0))
    try:
        start = patient.call("get_current_notificationEventId").eventId
        patient.call("add_partitions", partitions)
        events = patient.call("get_next_notification", ttypes.NotificationEventRequest(lastEvent=start, maxEvents=100)).events
    finally:
        patient.close()
    added = [e for e in events if e.dbName == unique_name and e.eventType == "ADD_PARTITION"]
    assert len(added) == 1 and len(added[0].message) > 10_000_000
    assert {p.name for p in decode_event(added[0]).partitions} == {
        f"dt={p.values[0]}/part={p.values[1]}" for p in partitions}
    caught_up(following, admin)
    after = follower.status()
    assert after.applied > before.applied and after.full_invalidations == before.full_invalidations == 0
    assert after.failures == 0
    last = partitions[-1].values
    assert changes(following)[-1] == ("added", f"partition {unique_name}.wide dt={last[0]}/part={last[1]}", "event")
    plan = plan_table(catalog, catalog.table(unique_name, "wide"))  # no REFRESH
    assert plan.summary.partitions_total == plan.summary.partitions_scanned == 2_500
    # Left in place: dropping them takes longer than adding them.
