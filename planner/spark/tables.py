"""Finding the catalog table a data source option names, on the driver."""

from __future__ import annotations

from collections.abc import Mapping

from hms_catalog.errors import ConfigurationError, NotFoundError
from hms_catalog.model import ExternalCatalog, ExternalTable
from hms_catalog.registry import shared_manager
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["table_handle", "plan_storage"]


def table_handle(options: Mapping[str, str]) -> tuple[ExternalCatalog, ExternalTable]:
    """The catalog and table named by ``path`` (``cat.db.table``) under ``home``."""
    name = options.get("path") or options.get("table")
    if not name:
        raise ConfigurationError("the hms data source needs a table: load('catalog.database.table') or option('plan', ...)")
    parts = [part.strip("`") for part in name.split(".")]
    if len(parts) != 3:
        raise ConfigurationError(f"table '{name}' must be named as catalog.database.table")
    # The process's manager for the home (the data source API hands us only strings, never objects):
    # the same live catalogs as the session that ran REFRESH, so a read never plans from older caches.
    catalog = shared_manager(options.get("home") or None).catalog(parts[0])
    return catalog, catalog.table(parts[1], parts[2])


def plan_storage(options: Mapping[str, str], catalog: str) -> StorageResolver:
    """How the files of a plan made for ``catalog`` are reached: that catalog's storage settings when the
    options name a ``home`` that defines it; otherwise no settings (local files, and object stores the
    environment's credentials reach), as a plan read where its catalog is unknown can only be."""
    home = options.get("home")
    if not home:
        return StorageResolver()
    try:
        return shared_manager(home).catalog(catalog).storage
    except NotFoundError:
        return StorageResolver()
