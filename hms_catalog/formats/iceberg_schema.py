"""Schemas of Iceberg tables: the current schema of the metadata file the metastore points at.

The metastore's own columns of an Iceberg table are a copy pyiceberg or the engine wrote at commit
time (and Hive 2.3 cannot even hold every Iceberg type), so the metadata file is read instead: one
small file read, no metastore call. Renamed and dropped columns follow the current schema id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import SchemaError, StorageError
from hms_catalog.formats.detect import Detection
from hms_catalog.formats.schema import Column, TableSchema
from hms_catalog.storage.locations import normalize_location
from hms_catalog.types import from_iceberg_schema

if TYPE_CHECKING:
    from pyiceberg.table.metadata import TableMetadata

    from hms_catalog.storage.resolver import StorageResolver

__all__ = ["iceberg_schema", "load_iceberg_metadata"]


def load_iceberg_metadata(table: ttypes.Table, io_properties: Mapping[str, str],
                          storage: StorageResolver | None = None) -> TableMetadata:
    """pyiceberg's TableMetadata of the file named by the table's ``metadata_location``; a store that cannot be
    reached is worded by the catalog's ``storage`` when given (the endpoint, and a timeout as the catalog's)."""
    from pyiceberg.io import load_file_io
    from pyiceberg.serializers import FromInputFile

    location = (table.parameters or {}).get("metadata_location")
    if not location:
        raise SchemaError(f"Iceberg table {table.dbName}.{table.tableName} has no metadata_location parameter")
    location = normalize_location(location)
    try:
        io = load_file_io(properties=dict(io_properties), location=location)
        return FromInputFile.table_metadata(io.new_input(location))
    except FileNotFoundError as error:
        raise SchemaError(f"cannot read Iceberg metadata {location}: {error}") from error
    except OSError as error:  # the store refused or could not be reached (credentials, bucket, endpoint)
        if storage is not None:
            raise storage.error(location, error, "read Iceberg metadata") from None
        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise StorageError(f"cannot read Iceberg metadata {location}: {text}") from None
    except ValueError as error:
        raise SchemaError(f"cannot read Iceberg metadata {location}: {error}") from error


def iceberg_schema(table: ttypes.Table, detection: Detection, io_properties: Mapping[str, str],
                   storage: StorageResolver | None = None) -> TableSchema:
    metadata = load_iceberg_metadata(table, io_properties, storage)
    current = metadata.schema()
    struct = from_iceberg_schema(current)
    by_id = {f.field_id: f for f in current.fields}
    columns = []
    for translated in struct.fields:
        source = by_id.get(translated.field_id) if translated.field_id is not None else None
        columns.append(Column(
            translated.name, translated.type, str(source.field_type) if source else "", nullable=translated.nullable,
            comment=translated.comment or "", field_id=translated.field_id,
        ))
    spec = metadata.spec()
    names = {f.field_id: f.name for f in current.fields}
    spec_text = ", ".join(f"{f.name}={f.transform}({names.get(f.source_id, f.source_id)})" for f in spec.fields)
    snapshot = metadata.current_snapshot_id
    details = {
        "format-version": str(metadata.format_version),
        "schema-id": str(current.schema_id),
        "partition-spec": spec_text or "unpartitioned",
        "current-snapshot-id": str(snapshot) if snapshot is not None else "none",
        "metadata-location": (table.parameters or {}).get("metadata_location", ""),
    }
    return TableSchema(tuple(columns), source=f"Iceberg metadata (schema id {current.schema_id})", details=details)
