"""A session with the catalog ``hive`` over the test metastore, as most tests need one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from hms_catalog import open_session
from hms_catalog.execution import Session

__all__ = ["EVENTS", "caught_up", "open_catalog", "read_hms"]

EVENTS_INTERVAL_MS = 200
# Catalog properties of a catalog that follows the metastore's events, quickly.
EVENTS = {"hive.enable_hms_events_incremental_sync": "true", "hive.hms_events_polling_interval_ms": str(EVENTS_INTERVAL_MS)}


def open_catalog(home: Path, uri: str, **properties: str) -> Session:
    """A session under ``home`` whose catalog ``hive`` points at ``uri``, with extra ``properties``."""
    extra = "".join(f", '{key}'='{value}'" for key, value in properties.items())
    session = open_session(home)
    session.run_one(f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{uri}'{extra})")
    return session


def read_hms(spark: Any, home: Path, table: str, **options: str) -> Any:
    """``table`` read through the ``hms`` source over the catalogs stored under ``home``, with ``options``."""
    reader = spark.read.format("hms").option("home", str(home))
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(table)


def caught_up(session: Session, admin: Any) -> None:
    """Wait until the catalog ``hive`` of ``session`` has read every event the metastore has now (its
    follower's own thread, at its own interval: nothing here polls for it). ``admin``: a tests.support.hms.Admin."""
    newest = admin.pool.call("get_current_notificationEventId").eventId
    follower = session.manager.catalog("hive").follower
    assert follower is not None
    deadline = time.monotonic() + 30
    while (follower.last_event_id or 0) < newest:
        assert time.monotonic() < deadline, f"the follower is at {follower.last_event_id}, the metastore at {newest}"
        time.sleep(EVENTS_INTERVAL_MS / 4000)


def following(session: Session, database: str, *tables: str) -> tuple[Any, Any]:
    """The catalog ``hive`` in use (its database's table names cached, and ``tables`` described), and its event
    follower once past its first poll: (the ExternalCatalog, its EventFollower)."""
    session.run_one(f"SHOW TABLES FROM hive.{database}")
    for table in tables:
        session.run_one(f"DESCRIBE hive.{database}.{table}")
    catalog = session.manager.catalog("hive")
    follower = catalog.follower
    assert follower is not None and follower.lease is not None
    deadline = time.monotonic() + 30
    while follower.status().polls < 1 or follower.lease.lease is None:
        assert time.monotonic() < deadline, "the follower never polled"
        time.sleep(0.05)
    return catalog, follower
