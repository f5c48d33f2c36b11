"""Schemas of Hudi tables: the schema of the latest completed commit, read through hudi-rs.

Hudi's hive sync registers partition fields as metastore partition keys and leaves them out of the
data columns, so the metastore's keys decide which columns are partition columns (with their declared
types); the commit's schema gives everything else, Hudi's five ``_hoodie_*`` meta columns included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import SchemaError
from hms_catalog.formats._paths import normalize_location
from hms_catalog.formats.detect import Detection
from hms_catalog.formats.schema import Column, TableSchema
from hms_catalog.types import from_arrow_schema, parse_hive_type

if TYPE_CHECKING:
    from hudi import HudiTable

__all__ = ["hudi_schema", "open_hudi_table", "hudi_storage_options"]

META_PREFIX = "_hoodie_"


def open_hudi_table(table: ttypes.Table, io_properties: Mapping[str, str]) -> HudiTable:
    """hudi-rs's table for the metastore table's location, reached with the catalog's storage settings
    (``io_properties``: pyiceberg's names, which :func:`hudi_storage_options` turns into hudi-rs's)."""
    import hudi

    location = table.sd.location if table.sd else None
    if not location:
        raise SchemaError(f"Hudi table {table.dbName}.{table.tableName} has no location")
    try:
        builder = hudi.HudiTableBuilder.from_base_uri(normalize_location(location))
        options = hudi_storage_options(io_properties)
        return (builder.with_storage_options(options) if options else builder).build()
    except Exception as error:  # hudi-rs raises its own HudiCoreError and OSError
        raise SchemaError(f"cannot open the Hudi table at {location}: {error}") from error


def hudi_schema(table: ttypes.Table, detection: Detection, io_properties: Mapping[str, str]) -> TableSchema:
    hudi_table = open_hudi_table(table, io_properties)
    try:
        arrow = hudi_table.get_schema_with_meta_fields()
    except Exception as error:
        raise SchemaError(f"cannot read the Hudi schema at {hudi_table.base_url}: {error}") from error
    keys = list(table.partitionKeys or [])
    key_names = {k.name.lower() for k in keys}
    # The metastore lower-cases partition key names; Hudi's schema keeps the case the writer used.
    partition_schema = hudi_table.get_partition_schema()
    written_names = {f.name.lower(): f.name for f in [*arrow, *partition_schema]}
    columns = []
    for field in from_arrow_schema(arrow).fields:
        if field.name.lower() in key_names:
            continue
        meta = field.name.startswith(META_PREFIX)
        columns.append(Column(
            field.name, field.type, str(arrow.field(field.name).type), nullable=field.nullable,
            comment="Hudi meta field" if meta else (field.comment or ""), meta=meta,
        ))
    if keys:
        for key in keys:
            name = written_names.get(key.name.lower(), key.name)
            columns.append(Column(name, parse_hive_type(key.type, column=key.name), key.type, partition=True,
                                  comment=key.comment or ""))
    else:
        declared = {f.name.lower() for f in partition_schema}
        columns = [Column(**{**c.__dict__, "partition": c.name.lower() in declared}) for c in columns]
    try:
        latest = hudi_table.get_timeline().get_latest_commit_timestamp()
    except Exception as error:
        if "no completed commit" not in str(error).lower():
            raise SchemaError(f"cannot read the Hudi timeline at {hudi_table.base_url}: {error}") from error
        latest = "none"  # an empty table: created, nothing committed yet
    options = hudi_table.hudi_options()
    details = {
        "table-type": hudi_table.table_type,
        "table-version": options.get("hoodie.table.version", ""),
        "latest-commit": latest,
        "query": detection.hudi_query or "read_optimized",
    }
    return TableSchema(tuple(columns), source=f"Hudi commit {latest}", details=details)


_HUDI_NAMES = {"s3.endpoint": "aws_endpoint_url", "s3.region": "aws_region", "s3.access-key-id": "aws_access_key_id",
               "s3.secret-access-key": "aws_secret_access_key", "s3.session-token": "aws_session_token"}


def hudi_storage_options(io_properties: Mapping[str, str]) -> dict[str, str]:
    """hudi-rs's (object_store's) names for the S3 settings among ``io_properties``; empty when none are set."""
    options = {name: io_properties[key] for key, name in _HUDI_NAMES.items() if io_properties.get(key)}
    endpoint = options.get("aws_endpoint_url", "")
    if endpoint.startswith("http://"):
        options["aws_allow_http"] = "true"
    if io_properties.get("s3.path-style-access", "").lower() == "true":
        options["aws_virtual_hosted_style_request"] = "false"
    return options
