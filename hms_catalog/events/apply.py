"""Applying decoded metastore events to a catalog's caches, precisely, and logging them as changes.

Each event drops exactly what it made stale: a new partition drops the table's partition name lists
(and any listing of its directory), not the table's definition; an INSERT drops the listing of the
partition it wrote; an ALTER_TABLE (an Iceberg commit is one: its ``metadata_location`` moves) drops
the table's entries; a rename is a drop of the old name plus a create of the new one. Everything is
found by lookup (:class:`CatalogCaches` groups keys by table), so an event about a table that was never
loaded costs a few dictionary lookups and a change-log entry.

Within one batch, events made pointless by a later one (changes to a table that is dropped further on,
two ALTERs of one table) are not applied, as Doris's event batching does; they are still logged, since
the change log is a history of what happened, not of what was applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hms_catalog.cache import CatalogCaches
from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.events.messages import MetastoreEvent

__all__ = ["EventApplier", "changes_of", "without_superseded", "TABLE_EVENTS", "DATABASE_EVENTS"]

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


@dataclass
class EventApplier:
    """Turns events into cache invalidations and change-log entries for one catalog.

    ``on_database``: told of a database whose own definition changed or that was dropped, so the catalog
    can forget its handle.
    """

    caches: CatalogCaches
    on_database: Callable[[str], None] = lambda name: None

    def apply(self, event: MetastoreEvent) -> bool:
        """Log and apply one event; False when the event is of a kind the catalog caches nothing for. An event
        of one of this catalog's own DDLs is neither: the DDL applied and logged it already."""
        handler = getattr(self, "_" + event.event_type.lower(), None)
        if handler is None:
            return False
        if self.caches.self_events.consume(event.event_type, event.database, event.table or ""):
            return True
        self.log(event)
        handler(event)
        return True

    def log(self, event: MetastoreEvent) -> None:
        """Only log what ``event`` changed (for an event a later one of its batch made pointless to apply)."""
        if self.caches.self_events.consume(event.event_type, event.database, event.table or ""):
            return
        for kind, obj in changes_of(event):
            self.caches.versions.record(kind, obj, ChangeSource.EVENT)

    def _create_database(self, event: MetastoreEvent) -> None:
        self.caches.invalidate_table_names(None)

    def _drop_database(self, event: MetastoreEvent) -> None:
        self.caches.invalidate_database(event.database)
        self.on_database(event.database)

    def _alter_database(self, event: MetastoreEvent) -> None:
        self.on_database(event.database)

    def _create_table(self, event: MetastoreEvent) -> None:
        self._name_changed(event.database, event.table or "")

    def _drop_table(self, event: MetastoreEvent) -> None:
        self._name_changed(event.database, event.table or "")

    def _alter_table(self, event: MetastoreEvent) -> None:
        table = event.table or ""
        if event.renamed:
            self._name_changed(event.database, table)
            self._name_changed(event.new_database or event.database, event.new_table or "")
            return
        self.caches.invalidate_table(event.database, table)

    def _add_partition(self, event: MetastoreEvent) -> None:
        self.caches.invalidate_partitions(event.database, event.table or "", [p.name for p in event.partitions],
                                          [p.location for p in event.partitions if p.location])

    def _drop_partition(self, event: MetastoreEvent) -> None:
        table = event.table or ""
        names = [p.name for p in event.partitions]
        self.caches.invalidate_partitions(event.database, table, names, self._locations(event.database, table, names))

    def _alter_partition(self, event: MetastoreEvent) -> None:
        table = event.table or ""
        changed = [*event.previous_partitions, *event.partitions]
        names = list(dict.fromkeys(p.name for p in changed))
        locations = {p.location for p in changed if p.location} | set(self._locations(event.database, table, names))
        renamed = {p.name for p in event.previous_partitions} - {p.name for p in event.partitions}
        self.caches.invalidate_partitions(event.database, table, names, locations, name_lists=bool(renamed))

    def _insert(self, event: MetastoreEvent) -> None:
        """New files: the written partition's listing (all the table's listings when it cannot be told)."""
        table = event.table or ""
        if not event.partitions:
            self.caches.invalidate_listings(event.database, table)
            return
        names = [p.name for p in event.partitions]
        known = [p.location for p in event.partitions if p.location] or self._locations(event.database, table, names)
        self.caches.invalidate_partitions(event.database, table, names, known, name_lists=False)
        if not known:
            self.caches.invalidate_listings(event.database, table)

    def _name_changed(self, database: str, table: str) -> None:
        """A name that appeared or vanished: the database's table list and anything cached under it."""
        self.caches.invalidate_table_names(database)
        self.caches.invalidate_table(database, table)

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
