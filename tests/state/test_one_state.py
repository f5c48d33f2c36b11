"""Every process on a store follows it: one indexed read per statement while nothing changed, the others'
changes and definitions absorbed at the next one, on SQLite and on PostgreSQL."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import event

from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.manager import CatalogManager, EventFollowing
from hms_catalog.state import SharedState, SqlCatalogStore, StoreDatabase
from tests.support.sessions import EVENTS

UNREACHED = {"type": "hms", "hive.metastore.uris": "thrift://127.0.0.1:1"}  # catalog() never calls the metastore


def _manager(home: Path, database: StoreDatabase) -> CatalogManager:
    """A process on the store: its own manager and its own name among the store's writers."""
    definitions = SqlCatalogStore(home, database)
    return CatalogManager(definitions, shared=SharedState(definitions))


@contextlib.contextmanager
def _heads_reads(database: StoreDatabase) -> Iterator[list[str]]:
    """The reads of the catalogs' heads sent to ``database`` while the block runs."""
    sent: list[str] = []
    engine = database.location.engine()

    def count(connection: object, cursor: object, statement: str, *args: object) -> None:
        if statement.lstrip().startswith("SELECT catalog_counters.catalog_id, catalog_counters.current"):
            sent.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_a_live_catalog_costs_one_indexed_read_per_statement(tmp_path: Path, database: StoreDatabase) -> None:
    manager = _manager(tmp_path, database)
    manager.create("c", UNREACHED)
    live = manager.catalog("c")
    sent: list[str] = []
    engine = database.location.engine()

    def count(connection: object, cursor: object, statement: str, *args: object) -> None:
        if not statement.lstrip().upper().startswith("BEGIN"):  # SQLite's own transaction start, not a read
            sent.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        for _ in range(5):
            assert manager.catalog("c") is live
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert len(sent) == 5, sent  # neither the definition nor the change log is read while nothing moved
    assert all("catalog_counters" in statement and "catalogs " not in statement for statement in sent), sent
    manager.close()


def test_one_statement_reads_each_catalogs_heads_once_and_the_next_statement_sees_what_came_after(
        tmp_path: Path, database: StoreDatabase) -> None:
    """Within :meth:`CatalogManager.statement` (one thrift call), however many lookups read the store once; a
    change another process logs meanwhile is absorbed by the next statement."""
    here, there = _manager(tmp_path / "here", database), _manager(tmp_path / "there", database)
    here.create("c", UNREACHED)
    catalog = here.catalog("c")
    absorbed: list[str] = []
    catalog.versions.listen(lambda changes: absorbed.extend(str(change.object) for change in changes))  # type: ignore[attr-defined]
    with _heads_reads(database) as sent:
        with here.statement():
            for _ in range(3):
                assert here.catalog("c") is catalog
            with here.statement():  # a nested statement shares the outer one's reads
                assert here.catalog("c") is catalog
            assert len(sent) == 1, sent
            there.catalog("c").versions.record(ChangeKind.ADDED, CatalogObject.for_table("db", "t"), ChangeSource.DDL)
            before = len(sent)
            assert here.catalog("c") is catalog
            assert len(sent) == before and absorbed == []  # the statement's read stands: logged after it, not yet
        with here.statement():
            assert here.catalog("c") is catalog
        assert absorbed == ["table db.t"]
    here.close()
    there.close()


def test_one_statement_takes_in_this_homes_refreshes_once_and_its_threads_share_its_reads(
        tmp_path: Path, database: StoreDatabase) -> None:
    """The REFRESH log other processes on this home write is read once a statement, not at every lookup; work the
    statement hands to a thread in a copy of its context (the thrift endpoint's listings) makes no read of its own;
    the next statement reads again."""
    here, neighbour = _manager(tmp_path / "home", database), _manager(tmp_path / "home", database)
    here.create("c", UNREACHED)
    catalog = here.catalog("c")
    polls: list[int] = []
    poll = here.refresh_log.poll

    def counted() -> object:
        polls.append(1)
        return poll()

    here.refresh_log.poll = counted  # type: ignore[method-assign]
    with _heads_reads(database) as sent:
        with here.statement():
            for _ in range(3):
                assert here.catalog("c") is catalog
            neighbour.refresh("c")  # logged for this home's other processes
            with ThreadPoolExecutor(max_workers=1) as thread:
                assert thread.submit(contextvars.copy_context().run, here.catalog, "c").result() is catalog
            assert (len(polls), len(sent)) == (1, 1)
        with here.statement():
            assert here.catalog("c") is catalog
        assert len(polls) == 2
    here.close()
    neighbour.close()


def test_another_process_changes_reach_this_one_at_its_next_statement(tmp_path: Path, database: StoreDatabase) -> None:
    here, there = _manager(tmp_path / "here", database), _manager(tmp_path / "there", database)
    here.create("c", UNREACHED)
    catalog = here.catalog("c")
    dropped: list[str] = []
    catalog.versions.listen(lambda changes: dropped.extend(str(change.object) for change in changes))  # type: ignore[attr-defined]

    there.catalog("c").versions.record(ChangeKind.ADDED, CatalogObject.for_table("db", "t"), ChangeSource.DDL)
    assert here.catalog("c") is catalog
    assert dropped == ["table db.t"]  # absorbed from the store's log, object by object
    assert [str(change.object) for change in catalog.versions.changes().changes] == ["table db.t"]
    mine = catalog.versions.record(ChangeKind.DROPPED, CatalogObject.for_table("db", "t"), ChangeSource.DDL)
    assert there.catalog("c").versions.changes().current == mine == 2  # one numbering for both

    there.alter_properties("c", {"comment.note": "moved"})  # the definitions' generation moves
    rebuilt = here.catalog("c")
    assert rebuilt is not catalog and rebuilt.definition.properties["comment.note"] == "moved"
    there.drop("c")
    with pytest.raises(Exception, match="c"):
        here.catalog("c")
    here.close()
    there.close()


@pytest.mark.parametrize(("mode", "follows"), [(EventFollowing.FIRST_USE, False), (EventFollowing.OFF, False),
                                                (EventFollowing.SERVE, True)])
def test_only_a_serving_process_follows_a_catalog_from_its_definition(
        tmp_path: Path, database: StoreDatabase, mode: EventFollowing, follows: bool) -> None:
    manager = _manager(tmp_path, database)
    manager.events = mode
    manager.create("c", {**UNREACHED, **EVENTS})
    follower = manager.catalog("c").follower
    assert follower is not None
    assert follower.status().running is follows
    manager.close()


@pytest.mark.parametrize(("mode", "follows"), [(EventFollowing.FIRST_USE, True), (EventFollowing.OFF, False)])
def test_a_one_shot_run_never_follows_and_a_session_follows_from_first_use(
        tmp_path: Path, database: StoreDatabase, metastore_uri: str, mode: EventFollowing, follows: bool) -> None:
    manager = _manager(tmp_path, database)
    manager.events = mode
    manager.create("c", {"type": "hms", "hive.metastore.uris": metastore_uri, **EVENTS})
    catalog = manager.catalog("c")
    assert "default" in catalog.database_names()
    assert catalog.follower is not None and catalog.follower.status().running is follows
    manager.close()
