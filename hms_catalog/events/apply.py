"""Applying decoded metastore events to a catalog's caches, precisely, and logging them as changes.

Each event drops exactly what it made stale: a new partition drops the table's partition name lists
(and any listing of its directory), not the table's definition; an INSERT drops the listing of the
partition it wrote; an ALTER_TABLE (an Iceberg commit is one: its ``metadata_location`` moves) drops
the table's entries; a rename is a drop of the old name plus a create of the new one. Everything is
found by lookup (:class:`CatalogCaches` groups keys by table), so an event about a table that was never
loaded costs a few dictionary lookups and a change-log entry.

A fetched batch is applied as one: what its events make stale is gathered first, grouped by table
(:mod:`hms_catalog.events._invalidations`), dropped in one pass, and then the batch's changes are logged
together, one announcement on the change feed (one store transaction where replicas share the log) after
the drops, so whoever it wakes reads fresh entries. Within a batch, events made pointless by a later one
(changes to a table that is dropped further on, two ALTERs of one table) are not applied, as Doris's event
batching does; they are still logged, since the change log is a history of what happened, not of what was
applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hms_catalog.cache import CatalogCaches
from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.events._invalidations import Invalidations
from hms_catalog.events.messages import MetastoreEvent

__all__ = ["BatchOutcome", "EventApplier", "changes_of", "without_superseded", "TABLE_EVENTS", "DATABASE_EVENTS"]

DATABASE_EVENTS = frozenset({"CREATE_DATABASE", "DROP_DATABASE", "ALTER_DATABASE"})
TABLE_EVENTS = frozenset({"CREATE_TABLE", "DROP_TABLE", "ALTER_TABLE", "ADD_PARTITION", "DROP_PARTITION",
                          "ALTER_PARTITION", "INSERT"})
_CONTENT_EVENTS = frozenset({"ADD_PARTITION", "DROP_PARTITION", "ALTER_PARTITION", "INSERT"})

TableKey = tuple[str, str]


def _tables_touched(event: MetastoreEvent) -> list[TableKey]:
    keys = [(event.database, event.table or "")]
    if event.event_type == "ALTER_TABLE" and event.renamed:
        keys.append((event.new_database or event.database, event.new_table or ""))
    return keys


def without_superseded(events: Sequence[MetastoreEvent]) -> tuple[list[MetastoreEvent], int]:
    """``events`` minus those a later event of the batch makes pointless; and how many were dropped.

    A later DROP_TABLE (or rename) of a table supersedes every earlier event on that name; a later
    DROP_DATABASE every earlier event in that database; a later ALTER_TABLE (not a rename) the earlier
    ALTERs, partition events and INSERTs of that table, since it drops all the table's entries anyway.
    Creations are never superseded by ALTERs: they also change the list of names.
    """
    dropped_databases: set[str] = set()
    dropped_tables: set[TableKey] = set()  # whole table, names list included
    altered_tables: set[TableKey] = set()  # the table's entries, not its presence
    kept: list[MetastoreEvent] = []
    for event in reversed(events):
        kind = event.event_type
        if kind in TABLE_EVENTS:
            keys = _tables_touched(event)
            whole = all(db in dropped_databases or key in dropped_tables for key in keys for db in (key[0],))
            content_only = kind in _CONTENT_EVENTS or (kind == "ALTER_TABLE" and not event.renamed)
            if whole or (content_only and all(key in altered_tables or key in dropped_tables for key in keys)):
                continue
            if kind == "DROP_TABLE" or (kind == "ALTER_TABLE" and event.renamed):
                dropped_tables.update(keys)
            elif kind == "ALTER_TABLE":
                altered_tables.update(keys)
        elif kind in DATABASE_EVENTS:
            if event.database in dropped_databases:
                continue
            if kind == "DROP_DATABASE":
                dropped_databases.add(event.database)
        kept.append(event)
    kept.reverse()
    return kept, len(events) - len(kept)


def changes_of(event: MetastoreEvent) -> list[tuple[ChangeKind, CatalogObject]]:
    """What ``event`` changed, as change-log entries (a rename is a drop and an add)."""
    database, table = event.database, event.table or ""
    kind = event.event_type
    if kind in DATABASE_EVENTS:
        verb = {"CREATE_DATABASE": ChangeKind.ADDED, "DROP_DATABASE": ChangeKind.DROPPED}.get(kind, ChangeKind.CHANGED)
        return [(verb, CatalogObject.for_database(database))]
    if kind == "CREATE_TABLE":
        return [(ChangeKind.ADDED, CatalogObject.for_table(database, table))]
    if kind == "DROP_TABLE":
        return [(ChangeKind.DROPPED, CatalogObject.for_table(database, table))]
    if kind == "ALTER_TABLE":
        if event.renamed:
            return [(ChangeKind.DROPPED, CatalogObject.for_table(database, table)),
                    (ChangeKind.ADDED, CatalogObject.for_table(event.new_database or database, event.new_table or ""))]
        return [(ChangeKind.CHANGED, CatalogObject.for_table(database, table))]
    if kind == "INSERT" and not event.partitions:
        return [(ChangeKind.CHANGED, CatalogObject("files", database, table))]
    verb = {"ADD_PARTITION": ChangeKind.ADDED, "DROP_PARTITION": ChangeKind.DROPPED}.get(kind, ChangeKind.CHANGED)
    if kind in _CONTENT_EVENTS:
        return [(verb, CatalogObject("partition", database, table, p.name)) for p in event.partitions]
    return []


@dataclass(frozen=True)
class BatchOutcome:
    """What applying one batch did: events applied (an own DDL's event counts: the DDL applied it), superseded
    by a later event of the batch (logged only), ignored (nothing cached for their kind), and changes logged."""

    applied: int = 0
    superseded: int = 0
    ignored: int = 0
    changes: int = 0


@dataclass
class EventApplier:
    """Turns batches of events into cache invalidations and change-log entries for one catalog.

    ``on_database``: told of a database whose own definition changed or that was dropped, so the catalog
    can forget its handle.
    """

    caches: CatalogCaches
    on_database: Callable[[str], None] = lambda name: None

    def apply_batch(self, events: Sequence[MetastoreEvent]) -> BatchOutcome:
        """Apply a fetched batch in one pass: gather what each event makes stale (grouped by table), drop it,
        then log the batch's changes together, so that whoever the change log wakes finds the caches dropped.

        Events a later one of the batch supersedes are logged but not applied; an event of this catalog's own
        DDL is neither (the DDL applied and logged it already)."""
        kept, superseded = without_superseded(events)
        chosen = {id(event) for event in kept}
        drops = Invalidations()
        changes: list[tuple[ChangeKind, CatalogObject]] = []
        applied = ignored = 0
        for event in events:  # in order, so the change log reads as the metastore's history
            gather = _GATHER.get(event.event_type)
            if gather is None:
                ignored += 1
                continue
            if self.caches.self_events.consume(event.event_type, event.database, event.table or ""):
                applied += id(event) in chosen
                continue
            changes.extend(changes_of(event))
            if id(event) in chosen:
                gather(self, event, drops)
                applied += 1
        drops.drop(self.caches, self.on_database)
        if changes:
            self.caches.versions.record_all(changes, ChangeSource.EVENT)
        return BatchOutcome(applied, superseded, ignored, len(changes))

    def apply(self, event: MetastoreEvent) -> bool:
        """:meth:`apply_batch` of one event; False when the catalog caches nothing for its kind."""
        return self.apply_batch([event]).applied == 1

    def _create_database(self, event: MetastoreEvent, drops: Invalidations) -> None:
        drops.names(None)

    def _drop_database(self, event: MetastoreEvent, drops: Invalidations) -> None:
        drops.database(event.database)

    def _alter_database(self, event: MetastoreEvent, drops: Invalidations) -> None:
        drops.forgotten.add(event.database)

    def _create_table(self, event: MetastoreEvent, drops: Invalidations) -> None:
        self._name_changed(event.database, event.table or "", drops)

    def _drop_table(self, event: MetastoreEvent, drops: Invalidations) -> None:
        self._name_changed(event.database, event.table or "", drops)

    def _alter_table(self, event: MetastoreEvent, drops: Invalidations) -> None:
        table = event.table or ""
        if event.renamed:
            self._name_changed(event.database, table, drops)
            self._name_changed(event.new_database or event.database, event.new_table or "", drops)
            return
        drops.table(event.database, table)

    def _add_partition(self, event: MetastoreEvent, drops: Invalidations) -> None:
        drops.partitions(event.database, event.table or "", [p.name for p in event.partitions],
                         [p.location for p in event.partitions if p.location])

    def _drop_partition(self, event: MetastoreEvent, drops: Invalidations) -> None:
        table = event.table or ""
        names = [p.name for p in event.partitions]
        drops.partitions(event.database, table, names, self._locations(event.database, table, names))

    def _alter_partition(self, event: MetastoreEvent, drops: Invalidations) -> None:
        table = event.table or ""
        changed = [*event.previous_partitions, *event.partitions]
        names = list(dict.fromkeys(p.name for p in changed))
        locations = {p.location for p in changed if p.location} | set(self._locations(event.database, table, names))
        renamed = {p.name for p in event.previous_partitions} - {p.name for p in event.partitions}
        drops.partitions(event.database, table, names, locations, name_lists=bool(renamed))

    def _insert(self, event: MetastoreEvent, drops: Invalidations) -> None:
        """New files: the written partition's listing (all the table's listings when it cannot be told)."""
        table = event.table or ""
        if not event.partitions:
            drops.listings(event.database, table)
            return
        names = [p.name for p in event.partitions]
        known = [p.location for p in event.partitions if p.location] or self._locations(event.database, table, names)
        drops.partitions(event.database, table, names, known, name_lists=False)
        if not known:
            drops.listings(event.database, table)

    @staticmethod
    def _name_changed(database: str, table: str, drops: Invalidations) -> None:
        """A name that appeared or vanished: the database's table list and anything cached under it."""
        drops.names(database)
        drops.table(database, table)

    def _locations(self, database: str, table: str, names: Sequence[str]) -> list[str]:
        """Locations of partitions the cache knows (to drop their listings); unknown ones are skipped:
        a listing is only reached through its partition, which the names list no longer offers."""
        found = []
        for name in names:
            partition = self.caches.partitions.peek((database, table, name))
            location = getattr(getattr(partition, "sd", None), "location", None)
            if location:
                found.append(location)
        return found


_Gather = Callable[[EventApplier, MetastoreEvent, Invalidations], None]
_GATHER: dict[str, _Gather] = {
    "CREATE_DATABASE": EventApplier._create_database,
    "DROP_DATABASE": EventApplier._drop_database,
    "ALTER_DATABASE": EventApplier._alter_database,
    "CREATE_TABLE": EventApplier._create_table,
    "DROP_TABLE": EventApplier._drop_table,
    "ALTER_TABLE": EventApplier._alter_table,
    "ADD_PARTITION": EventApplier._add_partition,
    "DROP_PARTITION": EventApplier._drop_partition,
    "ALTER_PARTITION": EventApplier._alter_partition,
    "INSERT": EventApplier._insert,
}
