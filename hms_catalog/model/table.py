"""A table of an external catalog: a handle that asks the metastore for its definition on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hms_catalog.errors import NotFoundError
from hms_catalog.model._lazy import Lazy

if TYPE_CHECKING:
    from hmsclient.genthrift.hive_metastore import ttypes

    from hms_catalog.client.metastore import MetastoreClient

__all__ = ["ExternalTable"]


class ExternalTable:
    """``catalog.database.table``; creating one costs nothing, the first :attr:`metadata` one get_table."""

    def __init__(self, catalog: str, database: str, name: str, client: MetastoreClient) -> None:
        self.catalog = catalog
        self.database = database
        self.name = name
        self._client = client
        self._metadata: Lazy[ttypes.Table] = Lazy(self._load)

    @property
    def full_name(self) -> str:
        return f"{self.catalog}.{self.database}.{self.name}"

    @property
    def loaded(self) -> bool:
        return self._metadata.loaded

    @property
    def metadata(self) -> ttypes.Table:
        """The metastore's Table struct, fetched once."""
        return self._metadata.get()

    def refresh(self) -> None:
        """Forget the definition; the next use fetches it again."""
        self._metadata.reset()

    def _load(self) -> ttypes.Table:
        try:
            return self._client.get_table(self.database, self.name)
        except NotFoundError:
            pass
        # Only on this error path: tell a missing database from a missing table.
        try:
            self._client.get_database(self.database)
        except NotFoundError:
            raise NotFoundError("database", f"{self.catalog}.{self.database}") from None
        raise NotFoundError("table", self.full_name)

    def __repr__(self) -> str:
        return f"ExternalTable({self.full_name!r}, loaded={self.loaded})"
