"""What one batch of events makes stale, gathered first and dropped in one pass, grouped by table.

A batch of 500 events about 30 tables drops each table's partition name lists once, not once per event, and
a table or database the batch drops whole is not also dropped partition by partition. Dropping is the same
whatever the order (every step only removes entries), so gathering changes nothing of what is dropped: what
would have been dropped event by event is dropped once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from hms_catalog.cache import CatalogCaches

__all__ = ["Invalidations"]

TableKey = tuple[str, str]


@dataclass
class _TableParts:
    """Parts of one table to drop: its partition name lists, some partitions, some listings or all of them."""

    name_lists: bool = False
    partitions: set[str] = field(default_factory=set)
    locations: set[str] = field(default_factory=set)
    listings: bool = False


@dataclass
class Invalidations:
    """The drops of one batch; :meth:`drop` applies them. Names are lower-case, as the caches' keys."""

    database_names: bool = False
    table_names: set[str] = field(default_factory=set)  # databases whose list of table names goes
    databases: set[str] = field(default_factory=set)  # dropped whole
    forgotten: set[str] = field(default_factory=set)  # database handles to forget (definition changed)
    tables: set[TableKey] = field(default_factory=set)  # dropped whole (definition, partitions, listings)
    parts: dict[TableKey, _TableParts] = field(default_factory=dict)

    def names(self, database: str | None) -> None:
        """A database's list of table names, or (None) the list of database names."""
        if database is None:
            self.database_names = True
        else:
            self.table_names.add(database)

    def database(self, database: str) -> None:
        self.databases.add(database)
        self.forgotten.add(database)

    def table(self, database: str, table: str) -> None:
        self.tables.add((database, table))

    def partitions(self, database: str, table: str, names: Iterable[str], locations: Iterable[str], *,
                   name_lists: bool = True) -> None:
        parts = self.parts.setdefault((database, table), _TableParts())
        parts.name_lists |= name_lists
        parts.partitions.update(names)
        parts.locations.update(locations)

    def listings(self, database: str, table: str) -> None:
        self.parts.setdefault((database, table), _TableParts()).listings = True

    def drop(self, caches: CatalogCaches, forget: Callable[[str], None]) -> None:
        """Drop everything gathered, each thing once; ``forget``: told of each database handle to forget."""
        for database in sorted(self.databases):
            caches.invalidate_database(database)  # its table names and the database names with it
        if self.database_names and not self.databases:
            caches.invalidate_table_names(None)
        for database in sorted(self.table_names - self.databases):
            caches.invalidate_table_names(database)
        for database, table in sorted(self.tables):
            if database not in self.databases:
                caches.invalidate_table(database, table)
        for (database, table), parts in sorted(self.parts.items()):
            if database in self.databases or (database, table) in self.tables:
                continue
            if parts.listings:
                caches.invalidate_listings(database, table)
            caches.invalidate_partitions(database, table, sorted(parts.partitions),
                                         () if parts.listings else sorted(parts.locations), name_lists=parts.name_lists)
        for database in sorted(self.forgotten):
            forget(database)
