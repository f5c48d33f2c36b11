"""Long polls on the change log that wake at a change, and table loads shared by every client (single-flight)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.remote import CatalogServiceClient
from tests.service.conftest import DB, HoldingRelay, hms_properties, metric
from tests.support.hms import Admin
from tests.support.service import Server

pytestmark = pytest.mark.metastore

CLIENTS = 16


class LongPoll:
    """``GET changes?since=...&wait=30`` on a thread of its own, with a client of its own."""

    def __init__(self, service: Server, catalog: str, since: int) -> None:
        self.answers: list[dict[str, Any]] = []
        self.errors: list[BaseException] = []
        self.answered_at = 0.0
        self._client = service.client()
        self._thread = threading.Thread(target=self._poll, args=(catalog, since), name="long-poll")
        self._thread.start()

    def _poll(self, catalog: str, since: int) -> None:
        try:
            self.answers.append(self._client.changes(catalog, since=since, wait=30))
        except BaseException as error:  # noqa: BLE001 - the test reads it
            self.errors.append(error)
        finally:
            self.answered_at = time.monotonic()
            self._client.close()

    def waiting(self) -> bool:
        """Whether it is still waiting after a moment (so a change made next is one it must wake for)."""
        self._thread.join(timeout=0.5)
        return self._thread.is_alive()

    def answer(self, within: float) -> dict[str, Any]:
        self._thread.join(timeout=within)
        assert not self._thread.is_alive(), f"the long poll did not answer within {within:g} s"
        assert self.errors == [] and len(self.answers) == 1, self.errors
        return self.answers[0]


def _caught_up(api: CatalogServiceClient, catalog: str, wanted: Callable[[dict[str, Any]], bool]) -> int:
    """The catalog's version once its change log holds a change ``wanted`` says is the one (events are read
    by the catalog's own follower, at its own pace)."""
    since = 0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        log = api.changes(catalog, since=since, wait=5)
        if any(wanted(change) for change in log["changes"]):
            return int(log["current"])
        since = log["current"]
    raise AssertionError("the change never came")


def test_a_long_poll_answers_at_once_without_wait_and_at_its_deadline_without_change(api: CatalogServiceClient) -> None:
    current = api.changes("hive")["current"]
    assert api.changes("hive", since=current)["changes"] == []
    began = time.monotonic()
    answer = api.changes("hive", since=current, wait=1.5)
    assert answer["changes"] == [] and answer["current"] == current
    assert time.monotonic() - began >= 1.4  # it waited out its time


def test_a_long_poll_wakes_at_a_refresh_through_the_api(service: Server, api: CatalogServiceClient) -> None:
    current = api.changes("hive")["current"]
    poll = LongPoll(service, "hive", current)
    assert poll.waiting()
    refreshed = api.refresh("hive", DB, "sales")
    answer = poll.answer(within=10)  # long before its 30 s: it woke at the change
    assert [(c["kind"], c["object"], c["source"]) for c in answer["changes"]] == [
        ("invalidated", f"table {DB}.sales", "refresh")]
    assert answer["current"] >= answer["changes"][0]["version"] > current
    assert refreshed["version"] >= answer["changes"][0]["version"]


def test_a_long_poll_wakes_at_a_metastore_event(service: Server, api: CatalogServiceClient, admin: Admin,
                                                unique_name: str) -> None:
    api.databases("hive")  # the catalog is in use: its follower reads the metastore's events
    admin.create_database(unique_name)
    current = _caught_up(api, "hive", lambda change: unique_name in change["object"])
    assert api.tables("hive", unique_name) == []  # a name list now cached, which the event must make stale
    poll = LongPoll(service, "hive", current)
    assert poll.waiting()
    admin.create_table(unique_name, "arrived", [("id", "int")])
    answer = poll.answer(within=10)
    assert answer["changes"] and {c["source"] for c in answer["changes"]} == {"event"}, answer
    assert any(f"{unique_name}.arrived" in c["object"] for c in answer["changes"]), answer
    assert api.tables("hive", unique_name) == ["arrived"]  # with no REFRESH
    assert [c["name"] for c in api.table("hive", unique_name, "arrived")["columns"]] == ["id"]


def test_the_event_followers_batches_are_counted_in_metrics_and_health(service: Server, api: CatalogServiceClient,
                                                                      admin: Admin, unique_name: str) -> None:
    api.databases("hive")
    before = service.metrics()
    admin.create_database(unique_name)
    admin.create_table(unique_name, "counted", [("id", "int")])
    _caught_up(api, "hive", lambda change: f"{unique_name}.counted" in change["object"])
    after = service.metrics()
    for name in ("hms_catalog_events_events_total", "hms_catalog_events_batches_total", "hms_catalog_events_applied_total"):
        assert metric(after, name, catalog="hive") > metric(before, name, catalog="hive"), name
    batches = metric(after, "hms_catalog_events_batches_total", catalog="hive") - metric(
        before, "hms_catalog_events_batches_total", catalog="hive")
    events = metric(after, "hms_catalog_events_events_total", catalog="hive") - metric(
        before, "hms_catalog_events_events_total", catalog="hive")
    assert batches <= events  # events arrive in batches, never more batches than events
    assert metric(after, "hms_catalog_events_full_invalidations_total", catalog="hive") == 0
    newest = admin.pool.call("get_current_notificationEventId").eventId
    assert metric(after, "hms_catalog_events_last_event_id", catalog="hive") <= newest
    followed = api.health()["followers"]["hive"]
    assert followed["batches"] >= 1 and followed["full_invalidations"] == 0 and followed["skipped"] == 0


def test_a_long_poll_wakes_at_a_spark_write(service: Server, api: CatalogServiceClient, spark: Any) -> None:
    api.table("hive", DB, "other")
    current = api.changes("hive")["current"]
    poll = LongPoll(service, "hive", current)
    assert poll.waiting()
    spark.sql(f"ALTER TABLE {DB}.other ADD COLUMNS (note STRING)")
    answer = poll.answer(within=10)
    assert any(c["source"] == "event" and f"{DB}.other" in c["object"] for c in answer["changes"]), answer
    assert [c["name"] for c in api.table("hive", DB, "other")["columns"]] == ["id", "note"]  # the cached one was dropped


def test_a_long_poll_wakes_at_an_alter_of_its_catalog(service: Server, api: CatalogServiceClient, metastore_uri: str,
                                                       unique_name: str) -> None:
    api.create_catalog(unique_name, hms_properties(metastore_uri))
    try:
        for _ in range(3):
            current = api.refresh(unique_name)["version"]
        poll = LongPoll(service, unique_name, current)
        assert poll.waiting()
        api.alter_catalog(unique_name, properties={"hive.metastore.client.pool.size": "2"})
        answer = poll.answer(within=10)
        # The rebuilt catalog's caches are new: what the poller holds is void, and it is told so. The store
        # numbers on, and the alter is itself in the log (the whole catalog invalidated), which the poll wakes with.
        assert answer["current"] == current + 1, answer
        assert answer["truncated"] or [c["object"] for c in answer["changes"]] == ["catalog"], answer
        after = api.changes(unique_name, since=current)
        assert [(c["version"], c["kind"], c["object"], c["source"]) for c in after["changes"]] == [
            (current + 1, "invalidated", "catalog", "ddl")]
        assert after["truncated"] is False
    finally:
        api.drop_catalog(unique_name)


def _audited_loads(metastore: EmbeddedMetastore, since: int, database: str, table: str) -> int:
    """Loads of ``database.table`` the metastore itself logged after line ``since`` of its audit log
    (``get_table_req`` is audited as ``get_table``: "cmd=source:127.0.0.1 get_table : db=d tbl=t")."""
    lines = metastore.audit_file.read_text(encoding="utf-8", errors="replace").splitlines()[since:]
    return sum(1 for line in lines if line.rstrip().endswith(f" get_table : db={database} tbl={table}"))


def test_sixteen_clients_asking_for_one_cold_table_cause_one_load(service: Server, api: CatalogServiceClient, admin: Admin,
                                                                  metastore: EmbeddedMetastore, metastore_uri: str,
                                                                  unique_name: str) -> None:
    admin.create_database(unique_name)
    admin.create_table(unique_name, "cold", [("id", "int"), ("name", "string")])
    with HoldingRelay(metastore_uri) as relay:
        api.create_catalog(unique_name, hms_properties(relay.uri))
        clients = [service.client() for _ in range(CLIENTS)]
        try:
            assert unique_name in api.databases(unique_name)  # the catalog is live, its pool connected
            before = metric(service.metrics(), "hms_catalog_metastore_calls_total", catalog=unique_name, method="get_table_req")
            assert before == 0
            for client in clients:
                client.health()  # each client's connection is open: the 16 requests go at once
            mark, _ = metastore.audited_calls()
            # The one load is held at the metastore for a second: every request arrives while it is in flight.
            relay.hold_next(1.0)
            barrier = threading.Barrier(CLIENTS)
            answers: list[dict[str, Any]] = []
            errors: list[BaseException] = []

            def load(client: CatalogServiceClient) -> None:
                try:
                    barrier.wait(timeout=30)
                    answers.append(client.table(unique_name, unique_name, "cold"))
                except BaseException as error:  # noqa: BLE001 - the test reads it
                    errors.append(error)
                finally:
                    client.close()

            threads = [threading.Thread(target=load, args=(client,)) for client in clients]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
            assert errors == [] and len(answers) == CLIENTS
            assert relay.holding.is_set()
            assert all(answer == answers[0] for answer in answers)
            assert [c["name"] for c in answers[0]["columns"]] == ["id", "name"]
            after = service.metrics()
            assert metric(after, "hms_catalog_metastore_calls_total", catalog=unique_name, method="get_table_req") == 1
            assert metric(after, "hms_catalog_cache_loads_total", catalog=unique_name, cache="schema") == 1
            deadline = time.monotonic() + 5
            while _audited_loads(metastore, mark, unique_name, "cold") < 1 and time.monotonic() < deadline:
                time.sleep(0.1)  # the metastore writes its audit log asynchronously
            time.sleep(0.3)
            assert _audited_loads(metastore, mark, unique_name, "cold") == 1  # the metastore saw one load
        finally:
            for client in clients:
                client.close()
            api.drop_catalog(unique_name)
