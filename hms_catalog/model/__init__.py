"""The lazily initialised catalog model: ExternalCatalog -> ExternalDatabase -> ExternalTable."""

from __future__ import annotations

from hms_catalog.model.catalog import ExternalCatalog
from hms_catalog.model.database import ExternalDatabase
from hms_catalog.model.table import ExternalTable

__all__ = ["ExternalCatalog", "ExternalDatabase", "ExternalTable"]
