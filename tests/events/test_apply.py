"""Applying events: what each kind drops from the caches, what it leaves, and what a batch skips."""

from __future__ import annotations

from types import SimpleNamespace

from hms_catalog.cache.catalog_caches import DATABASE_NAMES_KEY, CatalogCaches
from hms_catalog.events import EventApplier, MetastoreEvent, PartitionChange, without_superseded
from hms_catalog.properties import CacheConfig


def _event(event_id: int, kind: str, table: str | None = "t", **fields: object) -> MetastoreEvent:
    return MetastoreEvent(event_id, kind, "db", table, **fields)  # type: ignore[arg-type]


def _filled() -> CatalogCaches:
    caches = CatalogCaches.from_config(CacheConfig())
    put = dict(ticket=0)
    caches.names.put(DATABASE_NAMES_KEY, ("db",), **put)
    caches.names.put(("db",), ("t", "u"), **put)
    for table in ("t", "u"):
        caches.schema.put(("db", table), f"schema-{table}", **put)
        caches.partition_values.put(("db", table, ""), ("p=1", "p=2"), **put)
        for name in ("p=1", "p=2"):
            partition = SimpleNamespace(sd=SimpleNamespace(location=f"file:/w/{table}/{name}"))
            caches.partitions.put(("db", table, name), partition, **put)
            caches.files.put(("db", table, f"file:/w/{table}/{name}"), (), **put)
    return caches


def _cached(caches: CatalogCaches) -> set[tuple[str, tuple[str, ...]]]:
    return {(cache.name, key) for cache in caches for key, _ in cache.entries()}


def _apply(event: MetastoreEvent) -> tuple[CatalogCaches, set[tuple[str, tuple[str, ...]]]]:
    caches = _filled()
    before = _cached(caches)
    assert EventApplier(caches).apply(event)
    return caches, before - _cached(caches)


def test_add_partition_drops_the_tables_partition_lists_and_that_directorys_listing_only() -> None:
    _, gone = _apply(_event(1, "ADD_PARTITION", partitions=(PartitionChange("p=3", "file:/w/t/p=3"),)))
    assert gone == {("partition_values", ("db", "t", ""))}


def test_insert_into_a_partition_drops_that_partition_and_its_listing() -> None:
    _, gone = _apply(_event(1, "INSERT", partitions=(PartitionChange("p=2"),)))
    assert gone == {("partitions", ("db", "t", "p=2")), ("files", ("db", "t", "file:/w/t/p=2"))}


def test_insert_into_an_unpartitioned_table_drops_its_listings() -> None:
    _, gone = _apply(_event(1, "INSERT"))
    assert gone == {("files", ("db", "t", "file:/w/t/p=1")), ("files", ("db", "t", "file:/w/t/p=2"))}


def test_drop_partition_drops_it_its_listing_and_the_name_lists() -> None:
    _, gone = _apply(_event(1, "DROP_PARTITION", partitions=(PartitionChange("p=1"),)))
    assert gone == {("partitions", ("db", "t", "p=1")), ("files", ("db", "t", "file:/w/t/p=1")),
                    ("partition_values", ("db", "t", ""))}


def test_alter_partition_keeps_the_name_lists_unless_its_values_changed() -> None:
    _, gone = _apply(_event(1, "ALTER_PARTITION", partitions=(PartitionChange("p=1", "file:/w/t/p=1"),),
                            previous_partitions=(PartitionChange("p=1", "file:/w/t/p=1"),)))
    assert gone == {("partitions", ("db", "t", "p=1")), ("files", ("db", "t", "file:/w/t/p=1"))}


def test_alter_table_drops_the_table_and_keeps_the_names() -> None:
    caches, gone = _apply(_event(1, "ALTER_TABLE", new_database="db", new_table="t", metadata_location="s3://m/2.json"))
    assert {cache for cache, _ in gone} == {"schema", "partition_values", "partitions", "files"}
    assert all(key[1] == "t" for _, key in gone)
    assert [str(c.object) for c in caches.versions.changes().changes] == ["table db.t"]


def test_a_rename_is_a_drop_and_a_create() -> None:
    caches, gone = _apply(_event(1, "ALTER_TABLE", new_database="db", new_table="v"))
    assert ("names", ("db",)) in gone and ("schema", ("db", "t")) in gone and ("schema", ("db", "u")) not in gone
    assert [(c.kind.value, str(c.object)) for c in caches.versions.changes().changes] == [
        ("dropped", "table db.t"), ("added", "table db.v")]


def test_drop_database_drops_all_of_it() -> None:
    forgotten: list[str] = []
    caches = _filled()
    EventApplier(caches, on_database=forgotten.append).apply(_event(1, "DROP_DATABASE", table=None))
    assert _cached(caches) == set() and forgotten == ["db"]


def test_an_event_for_a_table_never_loaded_drops_nothing() -> None:
    caches, gone = _apply(MetastoreEvent(1, "ALTER_TABLE", "db", "never", new_database="db", new_table="never"))
    assert gone == set()
    assert all(cache.stats().loads == 0 for cache in caches)


def test_events_the_catalog_does_not_cache_anything_for_are_ignored() -> None:
    assert not EventApplier(_filled()).apply(_event(1, "CREATE_FUNCTION"))


def test_later_drops_supersede_earlier_events_on_the_same_table() -> None:
    batch = [
        _event(1, "ADD_PARTITION", partitions=(PartitionChange("p=3"),)),
        _event(2, "ALTER_TABLE", new_database="db", new_table="t"),
        _event(3, "INSERT", table="u"),
        _event(4, "DROP_TABLE"),
        _event(5, "CREATE_TABLE"),
    ]
    kept, dropped = without_superseded(batch)
    assert [e.event_id for e in kept] == [3, 4, 5] and dropped == 2


def test_an_alter_supersedes_content_events_but_not_a_creation() -> None:
    batch = [_event(1, "CREATE_TABLE"), _event(2, "INSERT"), _event(3, "ALTER_TABLE", new_database="db", new_table="t")]
    assert [e.event_id for e in without_superseded(batch)[0]] == [1, 3]


def test_a_rename_is_kept_unless_both_names_are_dropped_later() -> None:
    rename = _event(1, "ALTER_TABLE", new_database="db", new_table="v")
    assert [e.event_id for e in without_superseded([rename, _event(2, "DROP_TABLE")])[0]] == [1, 2]
    both = [rename, _event(2, "DROP_TABLE"), _event(3, "DROP_TABLE", table="v")]
    assert [e.event_id for e in without_superseded(both)[0]] == [2, 3]


def test_a_database_drop_supersedes_everything_before_it_in_that_database() -> None:
    batch = [_event(1, "CREATE_DATABASE", table=None), _event(2, "CREATE_TABLE"),
             MetastoreEvent(3, "CREATE_TABLE", "other", "t"), _event(4, "DROP_DATABASE", table=None)]
    assert [e.event_id for e in without_superseded(batch)[0]] == [3, 4]
