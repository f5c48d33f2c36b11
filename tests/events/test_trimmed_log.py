"""A metastore whose notification log was trimmed past the follower's position (its cleaner deleted events the
follower had not read): the follower drops the catalog's caches, logs one warning naming the catalog and the
gap, tells the change feed, and goes on from the first event still there.

The trimming is what Hive's cleaner does (``DELETE FROM NOTIFICATION_LOG`` of old rows), done here on a
metastore whose database is PostgreSQL, since the embedded metastore's Derby database is reachable by its own
JVM only. One metastore for the module, on a database of the session's PostgreSQL server.
"""

from __future__ import annotations

import logging
import os
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hms_catalog.client import HmsClientPool
from hms_catalog.errors import EmbeddedMetastoreError
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.metastore._database import jdbc_driver_jar
from hms_catalog.properties import ClientConfig, parse_uris
from tests.support.hms import Admin
from tests.support.postgres import PostgresServer
from tests.support.sessions import following, open_catalog

pytestmark = [pytest.mark.metastore, pytest.mark.slow]  # a metastore of its own

QUIET = {"hive.enable_hms_events_incremental_sync": "true", "hive.hms_events_polling_interval_ms": "3600000"}
WARNINGS = "hms_catalog.events.follower"


class TrimmableMetastore:
    """An embedded metastore on PostgreSQL, with its notification log trimmed at will."""

    def __init__(self, postgres: PostgresServer, database: str, directory: Path) -> None:
        self.postgres, self.database = postgres, database
        url = f"postgresql://{postgres.user}:{postgres.password}@{postgres.host}:{postgres.port}/{database}"
        self.server = EmbeddedMetastore(directory, 0, database=url)
        self.uri = self.server.start()
        self.pool = HmsClientPool(ClientConfig(uris=parse_uris(self.uri), pool_size=1, socket_timeout=120))
        self.admin = Admin(self.pool, self.server.warehouse)

    def newest(self) -> int:
        return int(self.pool.call("get_current_notificationEventId").eventId)

    def trim(self, through: int) -> None:
        """Delete the log's events up to ``through``, as the metastore's cleaner deletes those past their time."""
        self.postgres.psql(f'\\c {self.database}\nDELETE FROM "NOTIFICATION_LOG" WHERE "EVENT_ID" <= {through};\n')

    def close(self) -> None:
        self.pool.close()
        self.server.stop()


@pytest.fixture(scope="module")
def trimmable(postgres: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TrimmableMetastore]:
    try:
        jdbc_driver_jar()
    except EmbeddedMetastoreError as missing:  # as tests/metastore/test_postgres_backend.py
        if os.environ.get("HMS_CATALOG_REQUIRE_POSTGRES") == "1":
            pytest.fail(str(missing), pytrace=False)
        pytest.skip(str(missing))
    database = f"hms_{uuid.uuid4().hex[:12]}"
    postgres.psql(f"CREATE DATABASE {database} OWNER {postgres.user};\n")
    metastore = TrimmableMetastore(postgres, database, tmp_path_factory.mktemp("trimmed") / "ms")
    try:
        yield metastore
    finally:
        metastore.close()
        postgres.psql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE);\n")


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == WARNINGS and r.levelno == logging.WARNING]


def test_a_log_trimmed_past_the_position_drops_the_catalog_says_so_and_following_resumes(
        trimmable: TrimmableMetastore, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    admin, database = trimmable.admin, "trimmed"
    admin.create_database(database)
    admin.create_table(database, "kept", [("id", "int")])
    session = open_catalog(tmp_path / "home", trimmable.uri, **QUIET)
    try:
        catalog, follower = following(session, database, "kept")
        position = follower.last_event_id
        assert position == trimmable.newest() and catalog.caches.schema.peek((database, "kept")) is not None
        since = catalog.versions.current
        for name in ("a", "b", "c"):  # events position+1..position+3, never read: the cleaner takes the first two
            admin.create_table(database, name, [("id", "int")])
        trimmable.trim(through=position + 2)
        with caplog.at_level(logging.WARNING, logger=WARNINGS):
            follower.poll()
        assert _warnings(caplog) == [f"catalog hive: events {position + 1}..{position + 2} are no longer in the "
                                     "metastore's log; invalidating the whole catalog"]
        assert catalog.caches.schema.peek((database, "kept")) is None  # dropped: nothing cached can be trusted
        assert catalog.caches.names.peek((database,)) is None
        assert [(c.kind.value, str(c.object), c.source.value) for c in catalog.versions.changes(since).changes] == [
            ("invalidated", "catalog", "event"),  # the feed tells its clients first: drop everything
            ("added", f"table {database}.c", "event"),  # then the batch that was still there
        ]
        assert follower.last_event_id == position + 3 and follower.status().skipped == 2
        assert session.run_one(f"SHOW TABLES FROM hive.{database}").column("Table") == ["a", "b", "c", "kept"]
        admin.create_table(database, "d", [("id", "int")])  # following goes on
        follower.poll()
        assert session.run_one(f"SHOW TABLES FROM hive.{database}").column("Table") == ["a", "b", "c", "d", "kept"]
        assert follower.status().full_invalidations == 1
    finally:
        session.manager.close()


def test_a_follower_whose_stored_position_is_older_than_the_log_starts_over_from_its_first_event(
        trimmable: TrimmableMetastore, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A service that comes back after the cleaner took events past its stored position (here: position 0, the
    log's first events long gone) drops everything once and follows from the first event still there."""
    admin, database = trimmable.admin, "restarted"
    admin.create_database(database)
    admin.create_table(database, "kept", [("id", "int")])
    first = trimmable.newest() - 1
    trimmable.trim(through=first)  # only the newest event is left
    session = open_catalog(tmp_path / "home", trimmable.uri, **QUIET)
    try:
        catalog = session.manager.catalog("hive")
        follower = catalog.follower
        assert follower is not None and follower.lease is not None
        assert follower.lease.anchor(lambda: 0) == 0  # stored before the first read: where it resumes
        with caplog.at_level(logging.WARNING, logger=WARNINGS):
            following(session, database, "kept")
            deadline = time.monotonic() + 30
            while follower.last_event_id != first + 1:
                assert time.monotonic() < deadline, f"the follower is at {follower.last_event_id}"
                time.sleep(0.05)
        [warning] = _warnings(caplog)
        assert re.fullmatch(rf"catalog hive: events 1\.\.{first} are no longer in the metastore's log; "
                            "invalidating the whole catalog", warning), warning
        assert follower.status().full_invalidations == 1
    finally:
        session.manager.close()
