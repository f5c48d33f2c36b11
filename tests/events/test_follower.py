"""The follower's loop: batches, gaps, failures halfway, a log that went backwards, stopping."""

from __future__ import annotations

import json
import threading
import time

import pytest

from hms_catalog.cache.catalog_caches import CatalogCaches
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.events import EventApplier, EventFollower
from hms_catalog.events import follower as follower_module
from hms_catalog.properties import CacheConfig, EventsConfig


class LogClient:
    """A notification log in memory, answering as the metastore does."""

    def __init__(self, events: list[ttypes.NotificationEvent] | None = None, current: int = 0,
                 metastore_catalog: str | None = None) -> None:
        self.events = events or []
        self.current = current
        self.metastore_catalog = metastore_catalog
        self.calls: list[tuple[str, int]] = []

    def get_current_notification_event_id(self) -> int:
        self.calls.append(("current", self.current))
        return self.current

    def get_next_notification(self, last_event: int, max_events: int) -> list[ttypes.NotificationEvent]:
        self.calls.append(("next", last_event))
        return [e for e in self.events if e.eventId > last_event][:max_events]

    def add(self, kind: str, table: str | None = "t", message: dict[str, object] | None = None,
            event_id: int | None = None, catalog: str | None = None) -> None:
        event_id = event_id or (self.events[-1].eventId + 1 if self.events else self.current + 1)
        self.events.append(ttypes.NotificationEvent(
            eventId=event_id, eventTime=0, eventType=kind, dbName="db", tableName=table,
            message=json.dumps(message or {}), messageFormat="json-0.2", catName=catalog))
        self.current = event_id


def _follower(client: LogClient, batch_size: int = 500) -> tuple[EventFollower, CatalogCaches, list[str]]:
    caches = CatalogCaches.from_config(CacheConfig())
    reasons: list[str] = []

    def invalidate_all(reason: str) -> None:
        reasons.append(reason)
        caches.invalidate_all()

    config = EventsConfig(enabled=True, batch_size=batch_size, polling_interval=0.05)
    return EventFollower("hive", client, EventApplier(caches), config, invalidate_all), caches, reasons  # type: ignore[arg-type]


def test_it_starts_from_the_current_event_and_reads_in_batches() -> None:
    client = LogClient(current=10)
    follower, caches, reasons = _follower(client, batch_size=2)
    follower.begin()
    for index in range(5):
        client.add("DROP_TABLE", table=f"t{index}")
    assert follower.poll() == 5
    assert [c for c in client.calls if c[0] == "next"] == [("next", 10), ("next", 12), ("next", 14)]
    assert follower.last_event_id == 15 and reasons == []
    assert len(caches.versions.changes().changes) == 5


@pytest.mark.parametrize(("metastore_catalog", "applied"), [
    (None, ["t_old", "t_hive"]),  # unset: the metastore's default catalog, hive
    ("spark", ["t_old", "t_spark"]),
])
def test_only_events_of_the_metastore_catalog_read_are_applied(metastore_catalog: str | None, applied: list[str]) -> None:
    client = LogClient(current=0, metastore_catalog=metastore_catalog)
    follower, caches, reasons = _follower(client)
    follower.begin()
    client.add("DROP_TABLE", table="t_old")  # from a metastore older than Hive 3: no catalog at all
    client.add("DROP_TABLE", table="t_hive", catalog="hive")
    client.add("DROP_TABLE", table="t_spark", catalog="spark")
    follower.poll()
    assert [change.object.table for change in caches.versions.changes().changes] == applied
    assert follower.last_event_id == 3 and reasons == []


def test_a_gap_in_the_log_invalidates_the_whole_catalog() -> None:
    client = LogClient(current=10)
    follower, caches, reasons = _follower(client)
    follower.begin()
    caches.schema.put(("db", "x"), "cached", ticket=0)
    client.add("CREATE_TABLE", event_id=15)  # events 11..14 were cleaned up on the server
    follower.poll()
    assert reasons == ["events 11..14 are no longer in the metastore's log"]
    assert caches.schema.peek(("db", "x")) is None and follower.last_event_id == 15
    assert follower.status().full_invalidations == 1


def test_a_batch_that_fails_halfway_invalidates_the_whole_catalog_and_moves_on() -> None:
    client = LogClient(current=0)
    follower, caches, reasons = _follower(client)
    follower.begin()
    caches.schema.put(("db", "x"), "cached", ticket=0)
    client.add("CREATE_TABLE")
    client.events.append(ttypes.NotificationEvent(eventId=2, eventTime=0, eventType="ALTER_TABLE", dbName="db",
                                                  tableName="t", message="{not json", messageFormat="json-0.2"))
    client.current = 2
    follower.poll()
    assert len(reasons) == 1 and "applying events 1..2 failed" in reasons[0]
    assert caches.schema.peek(("db", "x")) is None and follower.last_event_id == 2


def test_a_log_that_went_backwards_is_noticed_while_idle(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(follower_module, "LOG_CHECK_SECONDS", 0.0)
    client = LogClient(current=100)
    follower, _, reasons = _follower(client)
    follower.begin()
    client.current = 3  # a new metastore database
    follower.poll()
    assert follower.last_event_id == 3 and len(reasons) == 1


def test_the_thread_follows_by_itself_and_stops_at_once() -> None:
    client = LogClient(current=0)
    follower, caches, _ = _follower(client)
    follower.start()
    try:
        assert follower.status().running
        client.add("CREATE_DATABASE", table=None)
        deadline = time.monotonic() + 5
        while follower.last_event_id != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert follower.last_event_id == 1
    finally:
        started = time.monotonic()
        follower.stop()
    assert time.monotonic() - started < 1.0 and not follower.status().running
    assert all(not t.name.startswith("hms-events") or t.daemon for t in threading.enumerate())


def test_a_metastore_that_is_away_is_asked_again_next_time() -> None:
    client = LogClient(current=0)
    follower, _, reasons = _follower(client)
    follower.start()
    try:
        failing = {"left": 2}
        original = client.get_next_notification

        def flaky(last_event: int, max_events: int):  # type: ignore[no-untyped-def]
            if failing["left"]:
                failing["left"] -= 1
                raise ConnectionError("metastore away")
            return original(last_event, max_events)

        client.get_next_notification = flaky  # type: ignore[method-assign]
        client.add("CREATE_DATABASE", table=None)
        deadline = time.monotonic() + 5
        while follower.last_event_id != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        follower.stop()
    assert follower.last_event_id == 1 and follower.status().failures == 2 and reasons == []


def test_superseded_events_are_logged_but_not_applied() -> None:
    client = LogClient(current=0)
    follower, caches, _ = _follower(client)
    follower.begin()
    caches.partitions.put(("db", "t", "p=1"), "partition", ticket=0)
    client.add("DROP_PARTITION", message={"partitions": [{"p": "1"}]})
    client.add("DROP_TABLE")
    assert follower.poll() == 1
    assert follower.status().superseded == 1 and caches.partitions.peek(("db", "t", "p=1")) is None
    assert [(c.kind.value, str(c.object)) for c in caches.versions.changes().changes] == [
        ("dropped", "partition db.t p=1"), ("dropped", "table db.t")]
