"""Schemas of Hudi tables: the schema of the latest completed commit, read through hudi-rs.

Hudi's hive sync registers partition fields as metastore partition keys and leaves them out of the
data columns, so the metastore's keys decide which columns are partition columns (with their declared
types); the commit's schema gives everything else, Hudi's five ``_hoodie_*`` meta columns included.

hudi-rs reaches the store with its own client, whose retries cannot be set: with the catalog's storage, each
table load (opening the table and reading what it needs) is one call held to the catalog's request timeout
(:func:`read_hudi_table`, :mod:`hms_catalog.storage.bounded`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import SchemaError
from hms_catalog.formats.detect import Detection
from hms_catalog.formats.schema import Column, TableSchema
from hms_catalog.storage.bounded import bounded_call
from hms_catalog.storage.engines import object_store_timeouts
from hms_catalog.storage.locations import normalize_location
from hms_catalog.types import from_arrow_schema, parse_hive_type

if TYPE_CHECKING:
    import pyarrow as pa
    from hudi import HudiTable

    from hms_catalog.storage.resolver import StorageResolver

__all__ = ["hudi_schema", "open_hudi_table", "read_hudi_table", "hudi_storage_options"]

META_PREFIX = "_hoodie_"
T = TypeVar("T")


def _location(table: ttypes.Table) -> str:
    location = table.sd.location if table.sd else None
    if not location:
        raise SchemaError(f"Hudi table {table.dbName}.{table.tableName} has no location")
    return normalize_location(location)


def open_hudi_table(table: ttypes.Table, io_properties: Mapping[str, str],
                    storage: StorageResolver | None = None) -> HudiTable:
    """hudi-rs's table for the metastore table's location, reached with the catalog's storage settings
    (``io_properties``: pyiceberg's names, which :func:`hudi_storage_options` turns into hudi-rs's), each
    attempt of its requests held to the catalog's timeouts when its ``storage`` is given. Opening reads the
    store: call it within :func:`read_hudi_table`."""
    import hudi

    location = _location(table)
    try:
        builder = hudi.HudiTableBuilder.from_base_uri(location)
        options = hudi_storage_options(io_properties)
        settings = storage.s3_settings(location) if storage is not None else None
        if settings is not None:
            options.update(object_store_timeouts(settings))
        return (builder.with_storage_options(options) if options else builder).build()
    except Exception as error:  # hudi-rs raises its own HudiCoreError and OSError
        raise SchemaError(f"cannot open the Hudi table at {table.sd.location}: {error}") from error


def read_hudi_table(table: ttypes.Table, io_properties: Mapping[str, str], storage: StorageResolver | None,
                    read: Callable[[HudiTable], T]) -> T:
    """``read(hudi_table)`` on the opened table: one call for a whole table load, which fails with the
    catalog's error once the store stops answering within the request timeout (without ``storage``, as it
    comes). ``read`` runs on a worker thread that may be left behind: it must only read."""
    def call() -> T:
        return read(open_hudi_table(table, io_properties, storage))

    if storage is None:
        return call()
    location = _location(table)
    return bounded_call(storage, location, call, probe=f"{location.rstrip('/')}/.hoodie/hoodie.properties",
                        doing="read the Hudi table at")


class _Read(NamedTuple):
    """What a schema is made of, read from the store in one call."""

    arrow: pa.Schema
    partition_schema: pa.Schema
    latest: str
    options: dict[str, str]
    table_type: str


def _read_schema(hudi_table: HudiTable) -> _Read:
    try:
        arrow = hudi_table.get_schema_with_meta_fields()
    except Exception as error:
        raise SchemaError(f"cannot read the Hudi schema at {hudi_table.base_url}: {error}") from error
    partition_schema = hudi_table.get_partition_schema()
    try:
        latest = hudi_table.get_timeline().get_latest_commit_timestamp()
    except Exception as error:
        if "no completed commit" not in str(error).lower():
            raise SchemaError(f"cannot read the Hudi timeline at {hudi_table.base_url}: {error}") from error
        latest = "none"  # an empty table: created, nothing committed yet
    return _Read(arrow, partition_schema, latest, hudi_table.hudi_options(), hudi_table.table_type)


def hudi_schema(table: ttypes.Table, detection: Detection, io_properties: Mapping[str, str],
                storage: StorageResolver | None = None) -> TableSchema:
    found = read_hudi_table(table, io_properties, storage, _read_schema)
    arrow, partition_schema = found.arrow, found.partition_schema
    keys = list(table.partitionKeys or [])
    key_names = {k.name.lower() for k in keys}
    # The metastore lower-cases partition key names; Hudi's schema keeps the case the writer used.
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
    details = {
        "table-type": found.table_type,
        "table-version": found.options.get("hoodie.table.version", ""),
        "latest-commit": found.latest,
        "query": detection.hudi_query or "read_optimized",
    }
    return TableSchema(tuple(columns), source=f"Hudi commit {found.latest}", details=details)


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
