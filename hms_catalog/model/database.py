"""A database of an external catalog: the factory and home of its table handles."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hms_catalog._lazy import Lazy
from hms_catalog.cache.versions import CatalogObject
from hms_catalog.client.batches import in_batches
from hms_catalog.errors import NotFoundError
from hms_catalog.formats.metadata import TableMetadata, load_table_metadata
from hms_catalog.model.table import ExternalTable

if TYPE_CHECKING:
    from hms_catalog.cache import CatalogCaches
    from hms_catalog.client.calls import MetastoreCalls
    from hms_catalog.client.hive_thrift import ttypes
    from hms_catalog.storage.resolver import StorageResolver

__all__ = ["ExternalDatabase", "TABLE_BATCH_SIZE"]

# Hive's own hive.metastore.batch.retrieve.max: the server fetches this many tables per query anyway.
TABLE_BATCH_SIZE = 300


class ExternalDatabase:
    """``catalog.database``: table names and the database's own definition are each fetched on first use."""

    def __init__(
        self,
        catalog: str,
        name: str,
        client: MetastoreCalls,
        caches: CatalogCaches,
        io_properties: Mapping[str, str],
        *,
        parallelism: int = 1,
        storage: StorageResolver | None = None,
    ) -> None:
        self.catalog = catalog
        self.parallelism = max(1, parallelism)
        self.name = name
        self._client = client
        self._caches = caches
        self._io_properties = io_properties
        self._storage = storage  # the catalog's, passed on to its tables
        self._lock = threading.Lock()
        self._tables: dict[str, ExternalTable] = {}
        self._definition: Lazy[ttypes.Database] = Lazy(lambda: self._client.get_database(self.name))

    @property
    def full_name(self) -> str:
        return f"{self.catalog}.{self.name}"

    @property
    def definition(self) -> ttypes.Database:
        """The metastore's Database struct (raises NotFoundError when the database does not exist)."""
        try:
            return self._definition.get()
        except NotFoundError:
            raise NotFoundError("database", self.full_name) from None

    def table_names(self) -> tuple[str, ...]:
        """Names of the tables, lower-case and sorted: one get_all_tables, none per table."""
        return self._caches.names.get((self.name,), self._load_table_names)

    def table(self, name: str) -> ExternalTable:
        """The handle of ``name``; makes no metastore call (the table loads when first used)."""
        key = name.lower()
        with self._lock:
            found = self._tables.get(key)
            if found is None:
                found = ExternalTable(self.catalog, self.name, key, self._client, self._caches, self._io_properties,
                                      self._storage)
                self._tables[key] = found
            return found

    def tables_metadata(self, names: Sequence[str], *, batch_size: int = TABLE_BATCH_SIZE) -> list[TableMetadata]:
        """Metadata of many tables: cached ones as they are, the rest with get_table_objects_by_name in batches.

        Batches run in parallel on up to ``parallelism`` pooled connections. Tables dropped since their
        names were listed are left out.
        """
        keys = [name.lower() for name in names]
        found: dict[str, TableMetadata] = {}
        missing = []
        for key in keys:
            cached = self._caches.schema.peek((self.name, key), used=True)
            if cached is not None:
                found[key] = cached
            else:
                missing.append(key)
        ticket = self._caches.schema.ticket()  # a REFRESH or a drop during the batch load must not be undone by it
        answers = in_batches(lambda batch: self._client.get_table_objects_by_name(self.name, batch),
                             missing, batch_size, self.parallelism)
        for _, tables in answers:
            for table in tables:
                metadata = load_table_metadata(table, self._io_properties, self.catalog, self._storage)
                found[table.tableName.lower()] = metadata
                self._caches.schema.put((self.name, table.tableName.lower()), metadata, ticket=ticket)
        return [found[key] for key in keys if key in found]

    def refresh(self) -> None:
        """Forget the table names, every table's cached metadata, and the database's definition."""
        self._caches.invalidate_database(self.name)
        self._definition.reset()

    def table_version(self, name: str) -> int | None:
        """The catalog version the table's cached definition was loaded at (None when not cached); with a log
        shared by replicas, the version of the newest change of the table, the same on every replica."""
        shared = self._caches.versions.changed_at(CatalogObject.for_table(self.name, name.lower()))
        return shared if shared is not None else self._caches.schema.version_of((self.name, name.lower()))

    def refresh_table(self, name: str) -> None:
        self.table(name).refresh()

    def _load_table_names(self) -> tuple[str, ...]:
        names = self._client.get_all_tables(self.name)
        if not names:
            # Hive answers an empty list for a database that does not exist; tell the two apart.
            _ = self.definition
        return tuple(sorted(name.lower() for name in names))

    def __repr__(self) -> str:
        return f"ExternalDatabase({self.full_name!r})"
