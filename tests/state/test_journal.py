"""The change log in the store: one numbering for every replica, bounded, fenced, surviving restarts."""

from __future__ import annotations

import threading

import pytest

from hms_catalog.cache.shared_versions import SharedCatalogVersions
from hms_catalog.cache.versions import CATALOG, CatalogObject, Change, ChangeKind, ChangeSource
from hms_catalog.errors import LeaseLostError
from hms_catalog.state import ChangeJournal, EventPosition, LeaseTable, StoreDatabase

TABLE = CatalogObject.for_table("db", "t")


def test_replicas_number_concurrent_changes_once_and_in_commit_order(database: StoreDatabase) -> None:
    """Four replicas recording 25 changes each at once: versions 1..100, each exactly once, every reader the same."""
    journals = [ChangeJournal(database, f"r{index}") for index in range(4)]

    def record(journal: ChangeJournal) -> None:
        for number in range(25):
            journal.append("cat", [(ChangeKind.INVALIDATED, CatalogObject.for_table("db", f"{journal.replica}_{number}"),
                                    ChangeSource.REFRESH)])

    threads = [threading.Thread(target=record, args=(journal,)) for journal in journals]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seen = [journal.after("cat", 0, 1000) for journal in journals]
    assert all(view == seen[0] for view in seen)
    entries, newest = seen[0]
    assert newest == 100 and [change.version for change, _ in entries] == list(range(1, 101))
    assert len({change.object for change, _ in entries}) == 100
    for journal in journals:  # each replica's own changes are in the order it made them
        own = [change.object.table for change, replica in entries if replica == journal.replica]
        assert own == [f"{journal.replica}_{number}" for number in range(25)]


def test_the_log_is_bounded_and_a_reader_behind_the_bound_is_told(database: StoreDatabase) -> None:
    journal = ChangeJournal(database, "r", capacity=100)
    for _ in range(3):
        journal.append("cat", [(ChangeKind.INVALIDATED, TABLE, ChangeSource.REFRESH)] * 100)
    entries, newest = journal.after("cat", 0, 1000)
    assert newest == 300 and entries[0][0].version == 201 and len(entries) == 100
    versions = SharedCatalogVersions(journal, "cat", capacity=100)
    log = versions.changes(since=5)
    assert log.truncated and log.oldest == 201 and log.current == 300
    assert not versions.changes(since=250).truncated


def test_a_change_logged_after_the_catalog_was_dropped_goes_after_the_rows_left(database: StoreDatabase) -> None:
    """Dropping a definition removes its counter; a change logged for the same id after (a process that had it
    live, a definition restored with its id) numbers on from the log's rows, never over them."""
    from sqlalchemy import delete

    from hms_catalog.state.schema import COUNTERS

    journal = ChangeJournal(database, "r")
    journal.append("cat", [(ChangeKind.INVALIDATED, TABLE, ChangeSource.REFRESH)] * 3)
    with database.writing() as connection:
        connection.execute(delete(COUNTERS).where(COUNTERS.c.catalog_id == "cat"))  # what DROP CATALOG does
    assert journal.append("cat", [(ChangeKind.INVALIDATED, TABLE, ChangeSource.REFRESH)]) == 4
    entries, newest = journal.after("cat", 0, 10)
    assert newest == 4 and [change.version for change, _ in entries] == [1, 2, 3, 4]


def test_a_restarted_replica_answers_the_same_log(database: StoreDatabase) -> None:
    first = SharedCatalogVersions(ChangeJournal(database, "a"), "cat")
    first.record(ChangeKind.INVALIDATED, CATALOG, ChangeSource.REFRESH)
    first.record(ChangeKind.DROPPED, TABLE, ChangeSource.DDL)
    restarted = SharedCatalogVersions(ChangeJournal(database, "a-again"), "cat")
    assert restarted.changes(0) == first.changes(0)
    assert [c.version for c in restarted.changes(0).changes] == [1, 2] and restarted.current == 2


def test_a_change_made_on_one_replica_reaches_the_other_and_drops_its_cache(database: StoreDatabase) -> None:
    a = SharedCatalogVersions(ChangeJournal(database, "a"), "cat")
    b = SharedCatalogVersions(ChangeJournal(database, "b"), "cat")
    b.catch_up()  # b is live before the change
    heard: list[Change] = []
    b.listen(heard.extend)
    ticket = b.ticket
    a.record(ChangeKind.INVALIDATED, TABLE, ChangeSource.REFRESH)
    assert b.spoiled(TABLE, ticket) is False  # not seen yet
    assert [c.object for c in b.catch_up()] == [TABLE]
    assert heard == list(a.changes(0).changes)
    assert b.spoiled(TABLE, ticket)  # a load of the table begun before the change is not cached
    assert not b.spoiled(CatalogObject.for_table("db", "other"), ticket)
    assert b.current == a.current == 1
    a_heard: list[Change] = []
    a.listen(a_heard.extend)
    a.catch_up()
    assert a_heard == []  # its own change is not applied twice


def test_a_change_recorded_while_the_store_is_away_waits_and_is_not_lost(database: StoreDatabase) -> None:
    class Away(ChangeJournal):
        down = True

        def append(self, *args: object, **kwargs: object) -> int:  # type: ignore[override]
            if self.down:
                from hms_catalog.errors import StoreUnavailableError
                raise StoreUnavailableError("the catalog store is restarting")
            return super().append(*args, **kwargs)  # type: ignore[arg-type]

    journal = Away(database, "a")
    versions = SharedCatalogVersions(journal, "cat")
    ticket = versions.ticket
    versions.record(ChangeKind.INVALIDATED, TABLE, ChangeSource.REFRESH)  # does not raise: the caches here are dropped
    assert versions.spoiled(TABLE, ticket) and versions.pending()
    journal.down = False
    versions.flush()
    assert not versions.pending()
    assert [(c.version, c.object) for c in versions.changes(0).changes] == [(1, TABLE)]


def test_events_are_stored_with_their_position_only_under_the_live_lease(database: StoreDatabase) -> None:
    now = [1000.0]
    leases = LeaseTable(database, ttl=10, clock=lambda: now[0])
    journal = ChangeJournal(database, "a")
    first = leases.claim("cat", "a")
    assert first is not None and first.fence == 1 and first.last_event_id is None
    assert leases.claim("cat", "b") is None  # held
    journal.append("cat", [(ChangeKind.CHANGED, TABLE, ChangeSource.EVENT)], position=EventPosition("a", 1, 41))
    now[0] += 11  # a stopped renewing
    taken = leases.claim("cat", "b")
    assert taken is not None and taken.fence == 2 and taken.last_event_id == 41  # resumes after event 41
    with pytest.raises(LeaseLostError):  # a's late write is refused, whole
        journal.append("cat", [(ChangeKind.CHANGED, TABLE, ChangeSource.EVENT)], position=EventPosition("a", 1, 42))
    assert journal.after("cat", 0, 10)[1] == 1
    assert leases.claim("cat", "a") is None
    journal.append("cat", [], position=EventPosition("b", 2, 45))
    holders = leases.holders()["cat"]
    assert (holders["holder"], holders["lease"], holders["last_event_id"], holders["live"]) == ("b", 2, 45, True)
    leases.release(leases.claim("cat", "b") or taken)
    again = leases.claim("cat", "a")
    assert again is not None and again.fence == 3 and again.last_event_id == 45  # a clean stop hands over at once
