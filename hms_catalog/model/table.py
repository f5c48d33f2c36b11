"""A table of an external catalog: a handle whose definition lives in the catalog's schema cache."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.errors import NotFoundError
from hms_catalog.formats.metadata import TableMetadata, load_table_metadata

if TYPE_CHECKING:
    from hms_catalog.cache import CatalogCaches
    from hms_catalog.client.calls import MetastoreCalls
    from hms_catalog.client.hive_thrift import ttypes
    from hms_catalog.formats import Detection, TableSchema
    from hms_catalog.storage.resolver import StorageResolver

__all__ = ["ExternalTable"]


class ExternalTable:
    """``catalog.database.table``; creating one costs nothing, the first use one get_table.

    The loaded definition (thrift table, format detection, schema) is kept in the catalog's schema
    cache, so its lifetime follows ``schema.cache.ttl-second`` and REFRESH, and concurrent first uses
    load it once.
    """

    def __init__(
        self,
        catalog: str,
        database: str,
        name: str,
        client: MetastoreCalls,
        caches: CatalogCaches,
        io_properties: Mapping[str, str],
        storage: StorageResolver | None = None,
    ) -> None:
        self.catalog = catalog
        self.database = database
        self.name = name
        self._client = client
        self._caches = caches
        self._io_properties = io_properties
        self._storage = storage  # the catalog's: its schema's reads of the store are held to its timeouts

    @property
    def full_name(self) -> str:
        return f"{self.catalog}.{self.database}.{self.name}"

    @property
    def key(self) -> tuple[str, str]:
        return (self.database, self.name)

    @property
    def loaded(self) -> bool:
        return self._caches.schema.peek(self.key) is not None

    @property
    def metadata(self) -> TableMetadata:
        """The table as loaded (fetched once, then served from the schema cache)."""
        return self._caches.schema.get(self.key, self._load)

    @property
    def thrift(self) -> ttypes.Table:
        return self.metadata.table

    @property
    def detection(self) -> Detection:
        return self.metadata.detection

    @property
    def schema(self) -> TableSchema:
        return self.metadata.schema

    @property
    def version(self) -> int | None:
        """The catalog version this table's definition was loaded at (None when it is not loaded); with a log
        shared by replicas, the version of the newest change of the table, the same on every replica."""
        shared = self._caches.versions.changed_at(CatalogObject.for_table(*self.key))
        return shared if shared is not None else self._caches.schema.version_of(self.key)

    def refresh(self) -> None:
        """Drop this table's schema, partitions and file listings from every cache."""
        self._caches.versions.record(ChangeKind.INVALIDATED, CatalogObject.for_table(*self.key), ChangeSource.REFRESH)
        self._caches.invalidate_table(self.database, self.name)

    def _load(self) -> TableMetadata:
        try:
            return load_table_metadata(self._client.get_table(self.database, self.name), self._io_properties, self.catalog,
                                       self._storage)
        except NotFoundError as error:
            if error.name == self.full_name:
                raise  # a client that names the table as the catalog does said why itself (a folder not promoted)
        # Only on this error path: tell a missing database from a missing table.
        try:
            self._client.get_database(self.database)
        except NotFoundError:
            raise NotFoundError("database", f"{self.catalog}.{self.database}") from None
        raise NotFoundError("table", self.full_name)

    def __repr__(self) -> str:
        return f"ExternalTable({self.full_name!r}, loaded={self.loaded})"
