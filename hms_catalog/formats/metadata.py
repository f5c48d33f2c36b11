"""What the schema cache holds per table: the metastore's table, its detection, and its schema.

The schema is loaded on first use from whatever the format needs (the metastore's columns, an Iceberg
metadata file, the Hudi timeline), never with a further metastore call, so a batch load of many tables
(SHOW TABLE STATUS) can fill the cache without paying for schemas nobody asked for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from hms_catalog._lazy import Lazy
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import StorageError
from hms_catalog.formats.detect import Detection, TableFormat, detect
from hms_catalog.formats.hive_schema import hive_schema
from hms_catalog.formats.hudi_schema import hudi_schema
from hms_catalog.formats.iceberg_schema import iceberg_schema
from hms_catalog.formats.schema import TableSchema

if TYPE_CHECKING:
    from hms_catalog.storage.resolver import StorageResolver

__all__ = ["TableMetadata", "load_table_metadata"]

SchemaLoader = Callable[[ttypes.Table, Detection, Mapping[str, str], "StorageResolver | None"], TableSchema]

_LOADERS: dict[TableFormat, SchemaLoader] = {
    TableFormat.HIVE: lambda table, detection, *_: hive_schema(table, detection),
    TableFormat.UNKNOWN: lambda table, detection, *_: hive_schema(table, detection),
    TableFormat.ICEBERG: iceberg_schema,
    TableFormat.HUDI: hudi_schema,
}


class TableMetadata:
    """One table as loaded: thrift struct, detection, and a schema loaded once on first use.

    ``storage``: the catalog's resolver, which holds the formats' readers of the store to its request timeout
    and words their errors as the catalog's (without it, readers wait and word them as they do)."""

    def __init__(self, table: ttypes.Table, detection: Detection, io_properties: Mapping[str, str], catalog: str = "",
                 storage: StorageResolver | None = None) -> None:
        self.table = table
        self.detection = detection
        self.io_properties = io_properties
        self.catalog = catalog  # named in a store's refusal, which the format's reader cannot name
        self.storage = storage
        self.loaded_at = time.time()
        self._schema: Lazy[TableSchema] = Lazy(self._load_schema)

    def _load_schema(self) -> TableSchema:
        try:
            return _LOADERS[self.detection.format](self.table, self.detection, self.io_properties, self.storage)
        except StorageError as error:
            if not self.catalog or str(error).startswith("catalog "):
                raise
            raise StorageError(f"catalog '{self.catalog}': {error}") from None

    @property
    def schema(self) -> TableSchema:
        return self._schema.get()

    @property
    def schema_loaded(self) -> bool:
        return self._schema.loaded

    @property
    def partition_key_names(self) -> list[str]:
        return [key.name for key in self.table.partitionKeys or []]


def load_table_metadata(table: ttypes.Table, io_properties: Mapping[str, str], catalog: str = "",
                        storage: StorageResolver | None = None) -> TableMetadata:
    return TableMetadata(table, detect(table), io_properties, catalog, storage)
