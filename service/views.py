"""How the API shows catalogs, tables and statement results as JSON, and the cache of table views.

A table's view is made once per load of it and kept beside the load (a reload is a new TableMetadata, so
views of replaced loads go with them); only its version, which moves without a reload, is added per request.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from hms_catalog import types as canonical
from hms_catalog.execution import Result
from hms_catalog.formats.metadata import TableMetadata
from hms_catalog.properties import mask_properties
from hms_catalog.remote.values import encode_value
from hms_catalog.store import CatalogDefinition

__all__ = ["TableViews", "definition_json", "etag", "result_json", "table_view"]


class TableViews:
    """Table views by the load they show, shared by every request (thread-safe, weakly held)."""

    def __init__(self) -> None:
        self._views: weakref.WeakKeyDictionary[TableMetadata, dict[str, Any]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self, catalog: str, database: str, name: str, metadata: TableMetadata) -> dict[str, Any]:
        with self._lock:
            view = self._views.get(metadata)
        if view is None:
            view = table_view(catalog, database, name, metadata)
            with self._lock:
                self._views[metadata] = view
        return view


def etag(definition: CatalogDefinition) -> str:
    return f'"{definition.version}"'


def definition_json(definition: CatalogDefinition) -> dict[str, Any]:
    return {
        "name": definition.name, "type": definition.type, "comment": definition.comment, "id": definition.id,
        "version": definition.version, "created_at": definition.created_at, "updated_at": definition.updated_at,
        "properties": mask_properties(definition.properties),
    }


def result_json(result: Result) -> dict[str, Any]:
    return {"columns": list(result.columns), "rows": [[encode_value(value) for value in row] for row in result.rows]}


def table_view(catalog: str, database: str, name: str, metadata: TableMetadata) -> dict[str, Any]:
    """The table as the API shows it, but its version (which moves without a reload)."""
    detection = metadata.detection
    schema = metadata.schema if detection.readable else None
    columns = [] if schema is None else [
        {"name": c.name, "type": c.source_type, "nullable": c.nullable, "partition_key": c.partition,
         "comment": c.comment}
        for c in schema.columns
    ]
    spark_schema = None
    if schema is not None:
        readable = [c for c in schema.columns if c.readable]
        spark_schema = schema.spark_schema([c.name for c in readable]).jsonValue()
        for field, column in zip(spark_schema["fields"], readable):
            _annotate_field_ids(field, column.type, column.field_id)
            if column.comment:  # as Spark's own catalog gives a column's comment: DESCRIBE and SHOW CREATE TABLE show it
                field.setdefault("metadata", {})["comment"] = column.comment
    return {
        "catalog": catalog, "database": database.lower(), "name": name.lower(),
        "format": detection.format.value, "file_format": detection.file_format, "reason": detection.reason,
        "location": detection.location, "partition_keys": metadata.partition_key_names,
        "columns": columns, "spark_schema": spark_schema, "spark_provider": detection.spark_provider,
        "storage": _storage_view(metadata),
    }


def _annotate_field_ids(field: dict[str, Any], kind: Any, field_id: int | None) -> None:
    """Iceberg's field ids on a Spark JSON field, as Spark's Parquet reader matches them (``parquet.field.id``),
    so renamed columns are read by id, not by name; nested struct fields too."""
    if field_id is not None:
        field.setdefault("metadata", {})["parquet.field.id"] = field_id
    _annotate_type(field["type"], kind)


def _annotate_type(spark_type: Any, kind: Any) -> None:
    if isinstance(kind, canonical.StructType) and isinstance(spark_type, dict) and spark_type.get("type") == "struct":
        for inner, member in zip(spark_type["fields"], kind.fields):
            _annotate_field_ids(inner, member.type, member.field_id)
    elif isinstance(kind, canonical.ArrayType) and isinstance(spark_type, dict) and spark_type.get("type") == "array":
        _annotate_type(spark_type["elementType"], kind.element)
    elif isinstance(kind, canonical.MapType) and isinstance(spark_type, dict) and spark_type.get("type") == "map":
        _annotate_type(spark_type["keyType"], kind.key)
        _annotate_type(spark_type["valueType"], kind.value)


def _storage_view(metadata: TableMetadata) -> dict[str, Any]:
    """What Hive's own readers need of a table's storage: input format, serde and their parameters."""
    sd = metadata.table.sd
    serde = sd.serdeInfo if sd is not None else None
    return {
        "input_format": sd.inputFormat if sd is not None else None,
        "output_format": sd.outputFormat if sd is not None else None,
        "serde": serde.serializationLib if serde is not None else None,
        "serde_parameters": dict(serde.parameters or {}) if serde is not None else {},
        "table_parameters": mask_properties(dict(metadata.table.parameters or {})),
    }
