"""The version counter, change log and delete log: what loads may store and what users are told."""

from __future__ import annotations

import threading

import pytest

from hms_catalog.cache import MetadataCache
from hms_catalog.cache.catalog_caches import CatalogCaches
from hms_catalog.cache.versions import CATALOG, CatalogObject, CatalogVersions, ChangeKind, ChangeSource, Members
from hms_catalog.properties import CacheConfig

TABLE = CatalogObject.for_table("db", "t")
OTHER = CatalogObject.for_table("db", "u")


def test_versions_only_grow_and_the_log_answers_since() -> None:
    versions = CatalogVersions()
    first = versions.record(ChangeKind.ADDED, TABLE, ChangeSource.EVENT)
    second = versions.record(ChangeKind.DROPPED, OTHER, ChangeSource.EVENT)
    assert 0 < first < second == versions.current
    log = versions.changes(first)
    assert [(c.version, c.kind, str(c.object), c.source) for c in log.changes] == [
        (second, ChangeKind.DROPPED, "table db.u", ChangeSource.EVENT)
    ]
    assert log.oldest == first and log.current == second and not log.truncated


def test_a_bounded_log_reports_its_oldest_version_and_when_a_reader_fell_behind() -> None:
    versions = CatalogVersions(capacity=3)
    made = [versions.record(ChangeKind.CHANGED, CatalogObject.for_table("db", f"t{i}"), ChangeSource.EVENT)
            for i in range(5)]
    log = versions.changes(0)
    assert [c.version for c in log.changes] == made[2:]
    assert log.oldest == made[2] and log.truncated
    assert not versions.changes(made[1]).truncated  # a reader who saw made[1] missed nothing


def test_a_drop_after_the_ticket_spoils_the_object_and_what_is_under_it_only() -> None:
    versions = CatalogVersions()
    ticket = versions.current
    versions.record(ChangeKind.DROPPED, TABLE, ChangeSource.EVENT)
    assert versions.spoiled(TABLE, ticket)
    assert versions.spoiled(CatalogObject("files", "db", "t", "file:/w/t"), ticket)
    assert not versions.spoiled(OTHER, ticket)
    assert not versions.spoiled(TABLE, versions.current)  # a load that began after the drop is fine
    versions.record(ChangeKind.DROPPED, CatalogObject.for_database("db"), ChangeSource.EVENT)
    assert versions.spoiled(OTHER, ticket) and versions.removed_at(TABLE) is not None


def test_forgetting_old_cuts_stays_safe() -> None:
    versions = CatalogVersions(capacity=2)
    ticket = versions.current
    for i in range(3):
        versions.cut(CatalogObject.for_table("db", f"t{i}"))
    # the cut of t0 is forgotten: a load of it that began before is spoiled all the same
    assert versions.spoiled(CatalogObject.for_table("db", "t0"), ticket)
    assert not versions.spoiled(CatalogObject.for_table("db", "t0"), versions.current)


def test_reloads_log_what_they_found_changed_once() -> None:
    versions = CatalogVersions()
    tables = CatalogObject("tables", "db")
    versions.loaded(tables, (), [TABLE, OTHER])
    versions.loaded(TABLE, 1)
    assert versions.changes().changes == ()  # first loads find nothing to compare with
    versions.loaded(tables, (), [TABLE, CatalogObject.for_table("db", "v")])
    versions.loaded(TABLE, 2)
    versions.loaded(TABLE, 2)
    assert [(c.kind, str(c.object), c.source) for c in versions.changes().changes] == [
        (ChangeKind.ADDED, "table db.v", ChangeSource.LOAD),
        (ChangeKind.DROPPED, "table db.u", ChangeSource.LOAD),
        (ChangeKind.CHANGED, "table db.t", ChangeSource.LOAD),
    ]
    versions.loaded(tables, (), [TABLE])  # a list that lost a name still compares with the next load
    assert str(versions.changes().changes[-1].object) == "table db.v"
    versions.loaded(tables, (), [TABLE, OTHER])
    assert [(c.kind, str(c.object)) for c in versions.changes().changes[-2:]] == [
        (ChangeKind.DROPPED, "table db.v"), (ChangeKind.ADDED, "table db.u")]
    # a change that came as an event is not logged again by the next load
    versions.record(ChangeKind.CHANGED, TABLE, ChangeSource.EVENT)
    versions.loaded(TABLE, 3)
    assert [c.source for c in versions.changes().changes][-1] is ChangeSource.EVENT


def test_a_list_given_by_its_names_makes_objects_only_for_the_names_that_moved() -> None:
    """A name list's loads (the catalog's caches give the names and how to make each one's object) log what the
    same lists given as objects would, and make an object only for a name that appeared or vanished."""
    made: list[str] = []

    def member(name: str) -> CatalogObject:
        made.append(name)
        return CatalogObject.for_table("db", name)

    by_names, by_objects = CatalogVersions(), CatalogVersions()
    tables = CatalogObject("tables", "db")
    lists = [("t", "u", "w"), ("t", "v", "w"), ("t", "v", "w"), ("v",)]
    for names in lists:
        by_names.loaded(tables, (), Members(names, member))
        by_objects.loaded(tables, (), [CatalogObject.for_table("db", name) for name in names])
    logged = [(c.kind, str(c.object)) for c in by_names.changes().changes]
    assert logged == [(c.kind, str(c.object)) for c in by_objects.changes().changes] == [
        (ChangeKind.ADDED, "table db.v"), (ChangeKind.DROPPED, "table db.u"),
        (ChangeKind.DROPPED, "table db.t"), (ChangeKind.DROPPED, "table db.w")]
    assert sorted(made) == ["t", "u", "v", "w"]  # 4 objects for 10 names loaded


def test_a_load_that_raced_with_a_drop_does_not_bring_the_table_back() -> None:
    caches = CatalogCaches.from_config(CacheConfig())
    loading, dropped = threading.Event(), threading.Event()

    def slow_load() -> str:
        loading.set()
        dropped.wait(5)
        return "definition fetched before the drop"

    answer: list[str] = []
    worker = threading.Thread(target=lambda: answer.append(caches.schema.get(("db", "t"), slow_load)))
    worker.start()
    loading.wait(5)
    caches.schema.put(("db", "u"), "other", ticket=caches.versions.current)
    caches.versions.record(ChangeKind.DROPPED, TABLE, ChangeSource.EVENT)
    caches.invalidate_table("db", "t")
    dropped.set()
    worker.join(5)
    assert answer == ["definition fetched before the drop"]  # the caller that asked still gets its answer
    assert caches.schema.peek(("db", "t")) is None  # but the dropped table is not cached again
    assert caches.schema.peek(("db", "u")) == "other"


def test_a_refresh_of_one_table_does_not_spoil_a_load_of_another() -> None:
    caches = CatalogCaches.from_config(CacheConfig())
    ticket = caches.schema.ticket()
    caches.invalidate_table("db", "u")
    assert caches.schema.put(("db", "t"), "t", ticket=ticket)
    assert not caches.schema.put(("db", "u"), "u", ticket=ticket)


def test_entries_are_stamped_with_the_version_they_were_loaded_at() -> None:
    caches = CatalogCaches.from_config(CacheConfig())
    caches.schema.get(("db", "t"), lambda: "t")
    first = caches.schema.version_of(("db", "t"))
    caches.invalidate_table("db", "t")
    caches.schema.get(("db", "t"), lambda: "t again")
    assert first is not None and caches.schema.version_of(("db", "t")) > first  # type: ignore[operator]


def test_group_invalidation_finds_a_tables_entries_without_touching_others() -> None:
    cache: MetadataCache[tuple[str, str, str], int] = CatalogCaches.from_config(CacheConfig()).files
    for index in range(100):
        cache.put(("db", f"t{index}", f"file:/w/t{index}"), index, ticket=0)  # type: ignore[arg-type]
    assert cache.invalidate_group(("db", "t7")) == 1
    assert cache.invalidate_group(("db", "never-loaded")) == 0
    assert len(cache) == 99 and cache.peek(("db", "t8", "file:/w/t8")) == 8


def test_a_standalone_cache_keeps_the_whole_cache_guard() -> None:
    cache: MetadataCache[str, str] = MetadataCache("c", ttl_seconds=-1, capacity=10)
    ticket = cache.ticket()
    cache.invalidate("other")
    assert not cache.put("k", "v", ticket=ticket)  # no tracking: any invalidation spoils loads in flight


@pytest.mark.parametrize("capacity", [0, -1])
def test_capacity_must_be_positive(capacity: int) -> None:
    with pytest.raises(ValueError, match="capacity"):
        CatalogVersions(capacity=capacity)


def test_catalog_lineage_and_names() -> None:
    partition = CatalogObject("partition", "db", "t", "dt=1")
    assert partition.lineage() == (CATALOG, CatalogObject.for_database("db"), TABLE, partition)
    assert str(partition) == "partition db.t dt=1" and str(CatalogObject("databases")) == "databases"


def test_long_name_lists_are_remembered_by_a_hash_and_logged_as_one_change(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from hms_catalog.cache import versions as versions_module

    monkeypatch.setattr(versions_module, "DIFFED_LIST_LIMIT", 2)
    versions = CatalogVersions()
    partitions = CatalogObject("partitions", "db", "t")
    names = [CatalogObject("partition", "db", "t", f"p={i}") for i in range(3)]
    versions.loaded(partitions, (), names)
    versions.loaded(partitions, (), names)
    assert versions.changes().changes == ()
    versions.loaded(partitions, (), names[:2])  # short enough again: compared by hash with the long one
    assert [(c.kind, str(c.object)) for c in versions.changes().changes] == [(ChangeKind.CHANGED, "partitions db.t")]


def test_a_long_poll_wakes_at_the_first_change_after_its_version() -> None:
    versions = CatalogVersions()
    before = versions.record(ChangeKind.ADDED, TABLE, ChangeSource.EVENT)
    assert versions.wait_for_change(before, timeout=0.0).changes == ()  # nothing after it: answers at the timeout
    assert [c.version for c in versions.wait_for_change(0, timeout=30.0).changes] == [before]  # one exists: at once
    versions.loaded(TABLE)  # a load moves the counter but logs nothing: no wake-up for it
    answered: list[int] = []
    waiter = threading.Thread(target=lambda: answered.extend(c.version for c in versions.wait_for_change(before, 30.0).changes))
    waiter.start()
    changed = versions.record(ChangeKind.DROPPED, OTHER, ChangeSource.REFRESH)
    waiter.join(timeout=10)
    assert not waiter.is_alive() and answered == [changed]
