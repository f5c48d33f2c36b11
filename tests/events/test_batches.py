"""Events at rate: a fetched batch applied in one pass, and a follower that cannot trust what it missed (events
cleaned up past its position, or too many behind) dropping everything, saying so once, and going on."""

from __future__ import annotations

import logging

import pytest

from hms_catalog.cache.catalog_caches import CatalogCaches
from hms_catalog.cache.versions import CATALOG, ChangeKind, ChangeSource
from hms_catalog.errors import MetastoreError
from hms_catalog.events import EventApplier, EventFollower
from hms_catalog.events import follower as follower_module
from hms_catalog.properties import CacheConfig, EventsConfig
from tests.events.test_follower import LogClient

WARNINGS = "hms_catalog.events.follower"


def _follower(client: LogClient, *, batch_size: int = 500, max_pending: int = 0) -> tuple[EventFollower, CatalogCaches]:
    caches = CatalogCaches.from_config(CacheConfig())

    def invalidate_all(reason: str) -> None:  # what ExternalCatalog does: log it, drop everything
        caches.versions.record(ChangeKind.INVALIDATED, CATALOG, ChangeSource.EVENT)
        caches.invalidate_all()

    config = EventsConfig(enabled=True, batch_size=batch_size, polling_interval=0.05, max_pending=max_pending)
    return EventFollower("cat", client, EventApplier(caches), config, invalidate_all), caches  # type: ignore[arg-type]


def _cache_tables(caches: CatalogCaches, *tables: str) -> None:
    for table in tables:
        caches.schema.put(("db", table), f"schema-{table}", ticket=0)
        caches.partition_values.put(("db", table, ""), ("p=0",), ticket=0)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == WARNINGS and r.levelno == logging.WARNING]


def test_a_batch_is_one_invalidation_pass_per_table_and_one_announcement(monkeypatch: pytest.MonkeyPatch) -> None:
    client = LogClient(current=0)
    follower, caches = _follower(client)
    follower.begin()
    _cache_tables(caches, "t", "u", "kept")
    for n in range(30):
        client.add("ADD_PARTITION", table="t" if n % 2 else "u", message={"partitions": [{"p": str(n)}]})
    passes: list[tuple[str, str]] = []
    announcements: list[int] = []
    invalidate_partitions, record_all = CatalogCaches.invalidate_partitions, type(caches.versions).record_all
    monkeypatch.setattr(CatalogCaches, "invalidate_partitions",
                        lambda self, db, table, *a, **k: (passes.append((db, table)), invalidate_partitions(self, db, table, *a, **k)))
    monkeypatch.setattr(type(caches.versions), "record_all",
                        lambda self, changes, source: (announcements.append(len(changes)), record_all(self, changes, source))[1])
    assert follower.poll() == 30
    assert sorted(passes) == [("db", "t"), ("db", "u")]  # one pass per table, not one per event
    assert announcements == [30]  # the batch's 30 changes logged together: a long poll wakes once, finds all
    assert [str(c.object) for c in caches.versions.changes().changes] == [
        f"partition db.{'t' if n % 2 else 'u'} p={n}" for n in range(30)]  # in the metastore's order
    status = follower.status()
    assert (status.batches, status.events, status.applied, status.last_batch_events) == (1, 30, 30, 30)
    assert caches.partition_values.peek(("db", "t", "")) is None and caches.schema.peek(("db", "kept")) == "schema-kept"


def test_an_own_ddls_event_in_a_batch_is_neither_applied_again_nor_logged() -> None:
    client = LogClient(current=0)
    follower, caches = _follower(client)
    follower.begin()
    _cache_tables(caches, "t")
    caches.self_events.expect("DROP_TABLE", "db", "mine")
    client.add("DROP_TABLE", table="mine")
    client.add("CREATE_TABLE", table="new")
    assert follower.poll() == 2
    assert [(c.kind.value, str(c.object)) for c in caches.versions.changes().changes] == [("added", "table db.new")]
    assert caches.self_events.pending() == 0 and caches.schema.peek(("db", "t")) == "schema-t"


def test_a_follower_too_far_behind_drops_everything_once_and_goes_on_from_the_newest(
        caplog: pytest.LogCaptureFixture) -> None:
    client = LogClient(current=10)
    follower, caches = _follower(client, batch_size=4, max_pending=6)
    follower.begin()
    _cache_tables(caches, "t")
    for n in range(9):
        client.add("DROP_TABLE", table=f"gone{n}")
    with caplog.at_level(logging.WARNING, logger=WARNINGS):
        assert follower.poll() == 0
    assert _warnings(caplog) == ["catalog cat: 9 events behind (events 11..19), more than hive.hms_events_max_pending=6; "
                                 "following from event 19; invalidating the whole catalog"]
    assert follower.last_event_id == 19 and caches.schema.peek(("db", "t")) is None
    assert [(c.kind.value, str(c.object), c.source.value) for c in caches.versions.changes().changes] == [
        ("invalidated", "catalog", "event")]  # what the feed tells its clients: drop everything
    status = follower.status()
    assert (status.full_invalidations, status.skipped, status.events) == (1, 9, 0)
    client.add("CREATE_TABLE", table="later")  # and it goes on
    assert follower.poll() == 1 and follower.last_event_id == 20


def test_a_follower_within_the_bound_applies_every_event() -> None:
    client = LogClient(current=0)
    follower, caches = _follower(client, batch_size=4, max_pending=6)
    follower.begin()
    for n in range(6):
        client.add("DROP_TABLE", table=f"gone{n}")
    assert follower.poll() == 6 and follower.status().full_invalidations == 0
    assert follower.status().batches == 2


def test_a_metastore_answering_that_events_were_cleaned_up_is_followed_from_its_newest(
        caplog: pytest.LogCaptureFixture) -> None:
    client = LogClient(current=5)
    follower, caches = _follower(client)
    follower.begin()
    _cache_tables(caches, "t")
    original = client.get_next_notification

    def refusing(last_event: int, max_events: int):  # type: ignore[no-untyped-def]
        if last_event < 40:
            raise MetastoreError("get_next_notification failed: Notification events are missing in the meta store.")
        return original(last_event, max_events)

    client.get_next_notification = refusing  # type: ignore[method-assign]
    client.current = 40
    with caplog.at_level(logging.WARNING, logger=WARNINGS):
        follower.poll()
    [warning] = _warnings(caplog)
    assert warning.startswith("catalog cat: the metastore answers that events after 5 were cleaned up")
    assert "following from event 40" in warning
    assert follower.last_event_id == 40 and caches.schema.peek(("db", "t")) is None
    client.add("CREATE_TABLE", table="later")
    assert follower.poll() == 1


def test_another_metastore_error_is_a_failure_asked_again_not_a_reset() -> None:
    client = LogClient(current=5)
    follower, _ = _follower(client)
    follower.begin()
    client.get_next_notification = lambda *a: (_ for _ in ()).throw(MetastoreError("timed out"))  # type: ignore[method-assign]
    with pytest.raises(MetastoreError):
        follower.poll()
    assert follower.last_event_id == 5 and follower.status().full_invalidations == 0


def test_a_log_trimmed_past_the_position_with_nothing_newer_is_noticed_while_idle(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(follower_module, "LOG_CHECK_SECONDS", 0.0)
    client = LogClient(current=10)
    follower, caches = _follower(client)
    follower.begin()
    _cache_tables(caches, "t")
    client.current = 15  # events 11..15 were written and cleaned up before the follower read them
    with caplog.at_level(logging.WARNING, logger=WARNINGS):
        follower.poll()
    assert _warnings(caplog) == ["catalog cat: events 11..15 are no longer in the metastore's log; following from "
                                 "event 15; invalidating the whole catalog"]
    assert follower.last_event_id == 15 and caches.schema.peek(("db", "t")) is None
    assert follower.status().skipped == 5
