"""Finding the catalog table a data source option names, on the driver."""

from __future__ import annotations

from collections.abc import Mapping

from hms_catalog.errors import ConfigurationError
from hms_catalog.manager import CatalogManager
from hms_catalog.model import ExternalCatalog, ExternalTable
from hms_catalog.store import CatalogStore, default_home

__all__ = ["table_handle"]

# The driver's catalogs by home directory, so repeated reads share one pool and warm caches (the data
# source API hands us only string options, never objects).
_MANAGERS: dict[str, CatalogManager] = {}


def table_handle(options: Mapping[str, str]) -> tuple[ExternalCatalog, ExternalTable]:
    """The catalog and table named by ``path`` (``cat.db.table``) under ``home``."""
    name = options.get("path") or options.get("table")
    if not name:
        raise ConfigurationError("the hms data source needs a table: load('catalog.database.table') or option('plan', ...)")
    parts = [part.strip("`") for part in name.split(".")]
    if len(parts) != 3:
        raise ConfigurationError(f"table '{name}' must be named as catalog.database.table")
    home = options.get("home") or str(default_home())
    manager = _MANAGERS.get(home)
    if manager is None:
        manager = _MANAGERS.setdefault(home, CatalogManager(CatalogStore(home)))
    catalog = manager.catalog(parts[0])
    return catalog, catalog.table(parts[1], parts[2])
