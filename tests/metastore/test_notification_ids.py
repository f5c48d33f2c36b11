"""The embedded metastore's notification log gives every change an id of its own, however many clients change
it at once. Hive 2.3 reads and advances the next id without a lock (HIVE-16886): two changes at once took the
same id, and a follower, asking for the events after the last id it saw, never saw one of them. The listener
locks the id's row until its transaction commits (resources/NotificationLogListener.java)."""

from __future__ import annotations

import threading

import pytest

from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.properties import ClientConfig, parse_uris
from tests.support.hms import Admin

pytestmark = pytest.mark.metastore

THREADS, CHANGES = 8, 15


def test_concurrent_changes_each_get_an_event_id_of_their_own(admin: Admin, metastore_uri: str, unique_name: str) -> None:
    pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore_uri), pool_size=THREADS))
    admin.create_database(unique_name)
    for thread in range(THREADS):
        admin.create_table(unique_name, f"t{thread}", [("id", "int")])
    start = pool.call("get_current_notificationEventId").eventId
    failures: list[BaseException] = []

    def change(thread: int) -> None:
        try:
            for n in range(CHANGES):
                table = pool.call("get_table", unique_name, f"t{thread}")
                table.parameters = {**(table.parameters or {}), "n": str(n)}
                pool.call("alter_table", unique_name, f"t{thread}", table)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    workers = [threading.Thread(target=change, args=(thread,)) for thread in range(THREADS)]
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=300)
        assert not failures, failures[:1]
        response = pool.call("get_next_notification", ttypes.NotificationEventRequest(lastEvent=start, maxEvents=10_000))
    finally:
        pool.close()
    ours = [event for event in response.events or [] if event.dbName == unique_name]
    assert len(ours) == THREADS * CHANGES
    ids = [event.eventId for event in ours]
    assert len(set(ids)) == len(ids), f"{len(ids) - len(set(ids))} ids taken twice"
