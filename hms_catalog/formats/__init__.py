"""Table formats: detection from the metastore's table, and each format's schema."""

from __future__ import annotations

from hms_catalog.formats.detect import Detection, TableFormat, TableKind, TextFormat, detect
from hms_catalog.formats.metadata import TableMetadata, load_table_metadata
from hms_catalog.formats.schema import Column, TableSchema

__all__ = [
    "Column",
    "Detection",
    "TableFormat",
    "TableKind",
    "TableMetadata",
    "TableSchema",
    "TextFormat",
    "detect",
    "load_table_metadata",
]
