"""A database of an external catalog: the factory and home of its table handles."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from hms_catalog.errors import NotFoundError
from hms_catalog.model._lazy import Lazy
from hms_catalog.model.table import ExternalTable

if TYPE_CHECKING:
    from hmsclient.genthrift.hive_metastore import ttypes

    from hms_catalog.client.metastore import MetastoreClient

__all__ = ["ExternalDatabase"]


class ExternalDatabase:
    """``catalog.database``: table names and the database's own definition are each fetched on first use."""

    def __init__(self, catalog: str, name: str, client: MetastoreClient) -> None:
        self.catalog = catalog
        self.name = name
        self._client = client
        self._lock = threading.Lock()
        self._tables: dict[str, ExternalTable] = {}
        self._table_names: Lazy[tuple[str, ...]] = Lazy(self._load_table_names)
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
        return self._table_names.get()

    def table(self, name: str) -> ExternalTable:
        """The handle of ``name``; makes no metastore call (the table loads when first used)."""
        key = name.lower()
        with self._lock:
            found = self._tables.get(key)
            if found is None:
                found = ExternalTable(self.catalog, self.name, key, self._client)
                self._tables[key] = found
            return found

    def loaded_tables(self) -> list[ExternalTable]:
        with self._lock:
            return list(self._tables.values())

    def refresh(self) -> None:
        """Forget the table names, the table handles and the database's definition."""
        self._table_names.reset()
        self._definition.reset()
        with self._lock:
            self._tables.clear()

    def refresh_table(self, name: str) -> None:
        with self._lock:
            table = self._tables.pop(name.lower(), None)
        if table is not None:
            table.refresh()

    def _load_table_names(self) -> tuple[str, ...]:
        names = self._client.get_all_tables(self.name)
        if not names:
            # Hive answers an empty list for a database that does not exist; tell the two apart.
            _ = self.definition
        return tuple(sorted(name.lower() for name in names))

    def __repr__(self) -> str:
        return f"ExternalDatabase({self.full_name!r})"
