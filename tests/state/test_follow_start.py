"""A follower's starting position is fixed no later than the first read it keeps fresh, whenever its thread
gets the lease: a change made between that read and the thread's first poll is applied, never skipped.

Each test holds the follower's lease thread back (its ``hold`` waits on a gate) while a table is created
through the real metastore, then lets it go: the new name must be listed once the follower has caught up,
with no REFRESH and long before any cache's time to live. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hms_catalog.manager import CatalogManager, EventFollowing
from hms_catalog.model.catalog import ExternalCatalog
from hms_catalog.state import EventLease, SharedState, SqlCatalogStore, StoreDatabase
from tests.support.hms import Admin
from tests.support.sessions import EVENTS


class Gates:
    """Holds back the lease threads of chosen replicas: ``hold`` waits until the replica's gate opens."""

    def __init__(self) -> None:
        self._gates: dict[str, threading.Event] = {}
        self.waiting: dict[str, threading.Event] = {}

    def close(self, replica: str) -> None:
        self._gates[replica] = threading.Event()
        self.waiting[replica] = threading.Event()

    def open(self, replica: str) -> None:
        self._gates[replica].set()

    def open_all(self) -> None:
        for gate in self._gates.values():
            gate.set()

    def wait(self, replica: str) -> None:
        gate = self._gates.get(replica)
        if gate is not None and not gate.is_set():
            self.waiting[replica].set()
            gate.wait(60)


@pytest.fixture
def gates(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gates]:
    """``EventLease.hold`` with a gate before it (``before``) or after a first successful claim (``after``)."""
    made = Gates()
    original: Callable[[EventLease], bool] = EventLease.hold

    def hold(lease: EventLease) -> bool:
        made.wait(lease.holder)  # held back before claiming: the lease thread has not begun
        held = original(lease)
        if held:
            made.wait(lease.holder + "/after-claim")  # held back holding a claim it never begins under
        return held

    monkeypatch.setattr(EventLease, "hold", hold)
    yield made
    made.open_all()


def _manager(home: Path, database: StoreDatabase, events: EventFollowing, *, lease_seconds: float = 10.0) -> CatalogManager:
    definitions = SqlCatalogStore(home, database)
    manager = CatalogManager(definitions, shared=SharedState(definitions, lease_seconds=lease_seconds))
    manager.events = events
    return manager


def _caught_up(catalog: ExternalCatalog, admin: Admin, timeout: float = 30.0) -> None:
    newest = admin.pool.call("get_current_notificationEventId").eventId
    follower = catalog.follower
    assert follower is not None
    deadline = time.monotonic() + timeout
    while (follower.last_event_id or 0) < newest:
        assert time.monotonic() < deadline, f"the follower is at {follower.last_event_id}, the metastore at {newest}"
        time.sleep(0.05)


def _define(manager: CatalogManager, metastore_uri: str) -> None:
    # Names stay cached for a day (the default): a name seen late is seen through the follower, not through expiry.
    manager.create("hive", {"type": "hms", "hive.metastore.uris": metastore_uri, **EVENTS})


def test_a_table_created_while_the_lease_thread_is_held_back_is_seen(
        tmp_path: Path, database: StoreDatabase, metastore_uri: str, admin: Admin, unique_name: str, gates: Gates) -> None:
    manager = _manager(tmp_path, database, EventFollowing.FIRST_USE)
    gates.close(manager.shared.replica)  # type: ignore[union-attr]
    admin.create_database(unique_name)
    admin.create_table(unique_name, "kept", [("id", "int")])
    _define(manager, metastore_uri)
    catalog = manager.catalog("hive")
    assert catalog.database(unique_name).table_names() == ("kept",)  # the first use: the follower starts
    assert gates.waiting[manager.shared.replica].wait(10), "the lease thread never asked for its lease"  # type: ignore[union-attr]

    admin.create_table(unique_name, "made", [("id", "int")])
    gates.open(manager.shared.replica)  # type: ignore[union-attr]
    _caught_up(catalog, admin)
    assert catalog.database(unique_name).table_names() == ("kept", "made")
    manager.close()


def test_a_serving_process_read_before_its_follower_begins_sees_later_changes(
        tmp_path: Path, database: StoreDatabase, metastore_uri: str, admin: Admin, unique_name: str, gates: Gates) -> None:
    """A service's start: every defined catalog is followed at once (``follow_defined``), but its thread may
    take its lease after the first request has read the catalog."""
    definer = _manager(tmp_path, database, EventFollowing.OFF)
    _define(definer, metastore_uri)
    definer.close()
    admin.create_database(unique_name)
    admin.create_table(unique_name, "kept", [("id", "int")])

    service = _manager(tmp_path, database, EventFollowing.SERVE)
    gates.close(service.shared.replica)  # type: ignore[union-attr]
    service.follow_defined()  # as serve starts
    catalog = service.catalog("hive")
    assert catalog.follower is not None and catalog.follower.status().running
    assert catalog.database(unique_name).table_names() == ("kept",)  # a first request
    admin.create_table(unique_name, "made", [("id", "int")])
    gates.open(service.shared.replica)  # type: ignore[union-attr]
    _caught_up(catalog, admin)
    assert catalog.database(unique_name).table_names() == ("kept", "made")
    service.close()


def test_a_replica_taking_over_a_lease_applies_what_the_holder_never_began_on(
        tmp_path: Path, database: StoreDatabase, metastore_uri: str, admin: Admin, unique_name: str, gates: Gates) -> None:
    """Replica A claims the lease and stalls before it stores anything (killed, or starved); replica B reads,
    a table is made, A's lease lapses and B takes it over: B must apply the create, not start after it."""
    admin.create_database(unique_name)
    admin.create_table(unique_name, "kept", [("id", "int")])
    first = _manager(tmp_path, database, EventFollowing.SERVE, lease_seconds=1.5)
    _define(first, metastore_uri)
    gates.close(first.shared.replica + "/after-claim")  # type: ignore[union-attr]
    first.follow_defined()
    assert gates.waiting[first.shared.replica + "/after-claim"].wait(10), "replica A never claimed the lease"  # type: ignore[union-attr]

    second = _manager(tmp_path, database, EventFollowing.SERVE, lease_seconds=1.5)
    second.follow_defined()
    catalog = second.catalog("hive")
    assert catalog.database(unique_name).table_names() == ("kept",)
    admin.create_table(unique_name, "made", [("id", "int")])

    # A never renews: B takes the lease over once it lapses, and resumes from the position stored before B read.
    deadline = time.monotonic() + 20
    while (second.shared.leases.holders().get(catalog.definition.id) or {}).get("holder") != second.shared.replica:  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "replica B never took the lapsed lease over"
        time.sleep(0.1)
    _caught_up(catalog, admin)
    assert catalog.database(unique_name).table_names() == ("kept", "made")
    gates.open_all()
    second.close()
    first.close()
