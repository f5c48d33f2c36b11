"""Events at rate on the real metastore: a batch of events is applied in one pass (one invalidation pass, one
change-log append), and a follower too far behind drops the catalog, says so once, tells the feed and goes on.

Each catalog here polls once an hour, so nothing but the test's own ``poll()`` reads the events it makes (the
follower's thread polls once as it starts; ``started`` waits for that). Other tests may write to the session's
metastore meanwhile, so counts of events are "at least".
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.cache.catalog_caches import CatalogCaches
from hms_catalog.execution import Session
from hms_catalog.state.journal import ChangeJournal
from tests.support.hms import Admin
from tests.support.sessions import following, open_catalog

pytestmark = pytest.mark.metastore

QUIET = {"hive.enable_hms_events_incremental_sync": "true", "hive.hms_events_polling_interval_ms": "3600000"}


def add_partitions(admin: Admin, table: Any, values: list[str]) -> None:
    for value in values:  # one call, one event, each
        admin.add_partition(table.dbName, table.tableName, [value], Path(table.sd.location.removeprefix("file:")) / f"dt={value}")


@pytest.fixture
def quiet(home: Path, metastore_uri: str, request: pytest.FixtureRequest) -> Iterator[Session]:
    extra = getattr(request, "param", {})
    session = open_catalog(home, metastore_uri, **QUIET, **extra)
    yield session
    session.manager.close()


def test_a_batch_of_events_is_applied_in_one_pass(quiet: Session, admin: Admin, unique_name: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    admin.create_database(unique_name)
    table = admin.create_table(unique_name, "facts", [("id", "int")], partition_keys=[("dt", "string")])
    catalog, follower = following(quiet, unique_name)
    assert not quiet.run_one(f"SHOW PARTITIONS hive.{unique_name}.facts").rows  # the name list is cached
    catalog_id = catalog.definition.id
    appends: list[int] = []
    passes: list[str] = []
    append, invalidate = ChangeJournal.append, CatalogCaches.invalidate_partitions

    def counted_append(self: ChangeJournal, catalog: str, changes: Any, **kwargs: Any) -> int:
        if catalog == catalog_id:
            appends.append(len(changes))
        return append(self, catalog, changes, **kwargs)

    def counted_pass(self: CatalogCaches, database: str, name: str, *args: Any, **kwargs: Any) -> None:
        passes.append(f"{database}.{name}")
        invalidate(self, database, name, *args, **kwargs)

    monkeypatch.setattr(ChangeJournal, "append", counted_append)
    monkeypatch.setattr(CatalogCaches, "invalidate_partitions", counted_pass)
    values = [f"2024-01-{day:02d}" for day in range(1, 21)]
    add_partitions(admin, table, values)
    before = follower.status()
    assert follower.poll() >= 20
    after = follower.status()
    assert after.batches - before.batches == 1 and after.events - before.events >= 20
    assert passes.count(f"{unique_name}.facts") == 1  # one invalidation pass for the table, not 20
    assert len(appends) == 1 and appends[0] >= 20  # the batch's changes: one store transaction, one announcement
    logged = [str(c.object) for c in catalog.versions.changes().changes if c.object.table == "facts"]
    assert logged == [f"partition {unique_name}.facts dt={value}" for value in values]
    shown = [row[0] for row in quiet.run_one(f"SHOW PARTITIONS hive.{unique_name}.facts").rows]
    assert shown == [f"dt={value}" for value in values]  # and the cached list was dropped


@pytest.mark.parametrize("quiet", [{"hive.hms_events_batch_size_per_rpc": "2", "hive.hms_events_max_pending": "5"}],
                         indirect=True, ids=["batches-of-2-bound-5"])
def test_a_follower_too_far_behind_drops_the_catalog_tells_the_feed_and_goes_on(
        quiet: Session, admin: Admin, unique_name: str, caplog: pytest.LogCaptureFixture) -> None:
    admin.create_database(unique_name)
    catalog, follower = following(quiet, unique_name)
    assert catalog.caches.names.peek((unique_name,)) == ()
    since = catalog.versions.current
    for index in range(8):
        admin.create_table(unique_name, f"t{index}", [("id", "int")])
    with caplog.at_level(logging.WARNING, logger="hms_catalog.events.follower"):
        follower.poll()
    warnings = [r.getMessage() for r in caplog.records if r.name == "hms_catalog.events.follower"]
    assert len(warnings) == 1, warnings
    assert re.fullmatch(r"catalog hive: \d+ events behind \(events \d+\.\.\d+\), more than hive\.hms_events_max_pending=5; "
                        r"following from event \d+; invalidating the whole catalog", warnings[0]), warnings
    newest = int(re.findall(r"\d+", warnings[0])[-1])
    assert follower.last_event_id is not None and follower.last_event_id >= newest
    assert catalog.caches.names.peek((unique_name,)) is None  # dropped: its table names are stale
    assert ("invalidated", "catalog", "event") in [
        (c.kind.value, str(c.object), c.source.value) for c in catalog.versions.changes(since).changes]
    assert follower.status().skipped >= 8
    made = [f"t{index}" for index in range(8)]
    assert quiet.run_one(f"SHOW TABLES FROM hive.{unique_name}").column("Table") == made  # cached again
    admin.create_table(unique_name, "later", [("id", "int")])
    follower.poll()  # going on from the newest event: the next change is applied as usual
    assert quiet.run_one(f"SHOW TABLES FROM hive.{unique_name}").column("Table") == ["later", *made]
    assert follower.status().full_invalidations == 1
