"""Writes to Iceberg tables: Spark writes Parquet data files (with Iceberg's field ids) into a folder of
the job under the table's ``data/``, and the commit adds them as one snapshot with pyiceberg.

Tables partitioned by any of Iceberg's transforms (identity, year, month, day, hour, bucket[N],
truncate[W], void) take writes: the writer (the connector's ``IcebergFanoutWriter``) computes each row's
partition with the same transforms and writes each partition's rows to files of their own; the commit
proves each file's partition tuple with pyiceberg's transforms (:mod:`hms_catalog.write.iceberg_files`),
refusing a file whose rows span two partitions. Each mode has Spark's meaning, as Iceberg's own
``SparkWrite`` gives it:

- append adds the files;
- a dynamic overwrite deletes the files of the current spec's partitions the write touched (those of
  its new files' tuples), then adds the new ones, in one snapshot;
- an overwrite by filter deletes the files whose rows all match the filter (decided per file by the
  filter's strict projection on the file's partition, or on its column bounds), keeps those none of
  whose rows can match, and refuses a filter that matches only some rows of a file, naming it (Iceberg
  refuses it the same way): deleting those rows would mean rewriting the file.

A commit that loses a race with another writer is retried on the table's new metadata, as Iceberg's
protocol says. Files nobody committed are never referenced, so a failed job leaves the table as it was;
its folder is deleted by its abort.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.context import DdlContext
from hms_catalog.ddl.iceberg import iceberg_catalog
from hms_catalog.errors import ConfigurationError, UnsupportedTableError, WriteConflictError
from hms_catalog.write.iceberg_files import data_file
from hms_catalog.write.jobs import WriteJob
from hms_catalog.write.request import CommitRequest, WriteOutcome, drop_unlisted
from hms_catalog.write.target import WriteTarget

__all__ = ["IcebergWriteTarget", "iceberg_target", "target_of", "commit_iceberg", "RETRIES"]

RETRIES = 4  # commits retried on the table's new metadata when another writer committed first
CODEC_PROPERTY = "write.parquet.compression-codec"
CODEC_DEFAULT = "zstd"


@dataclasses.dataclass(frozen=True)
class IcebergWriteTarget(WriteTarget):
    """An Iceberg table's writer: ``partitioning`` its spec's fields as the connector's writer computes them
    (name, top-level source column, transform, width), ``field_ids`` the schema's ids by column name (a
    struct's as ``{"id": n, "fields": {...}}``) for files of a table not created yet."""

    partitioning: tuple[dict[str, Any], ...] = ()
    field_ids: dict[str, Any] = dataclasses.field(default_factory=dict)

    def descriptor(self) -> dict[str, Any]:
        return {**super().descriptor(), "iceberg_partition": [dict(f) for f in self.partitioning],
                "iceberg_field_ids": self.field_ids}


def _table(ctx: DdlContext, database: str, name: str) -> Any:
    return iceberg_catalog(ctx.catalog).load_table((database, name))


def iceberg_target(ctx: DdlContext, struct: ttypes.Table, full_name: str) -> WriteTarget:
    table = _table(ctx, struct.dbName, struct.tableName)
    return target_of(struct.dbName.lower(), struct.tableName.lower(), table.location(), table.schema(), table.spec(),
                     table.properties, full_name)


def target_of(database: str, name: str, location: str, schema: Any, spec: Any, properties: Mapping[str, str],
              full_name: str) -> IcebergWriteTarget:
    """The writer of an Iceberg table of ``schema`` and ``spec`` whose data files go under ``location/data``."""
    fields = []
    top = {f.field_id: f.name for f in schema.fields}
    for field in spec.fields:
        transform = str(field.transform)
        kind, _, width = transform.partition("[")
        if field.source_id not in top:
            raise UnsupportedTableError(f"{full_name} is partitioned by {transform}({schema.find_column_name(field.source_id)}), "
                                        "a nested field: writes through this catalog take partitions of top-level columns")
        if kind not in ("identity", "year", "month", "day", "hour", "bucket", "truncate", "void"):
            raise UnsupportedTableError(f"{full_name} is partitioned by the transform {transform}, which this catalog's "
                                        "writers do not know")
        fields.append({"name": field.name, "source": top[field.source_id], "transform": kind,
                       "width": int(width.rstrip("]")) if width else None})
    codec = properties.get(CODEC_PROPERTY, CODEC_DEFAULT)
    return IcebergWriteTarget(database=database, table=name, location=f"{location.rstrip('/')}/data", writer="parquet",
                              hive_table=False, partition_keys=(), options={"compression": codec}, iceberg=True,
                              partitioning=tuple(fields), field_ids=_field_ids(schema.as_struct()))


def _field_ids(struct: Any) -> dict[str, Any]:
    from pyiceberg.types import StructType

    return {f.name: {"id": f.field_id, "fields": _field_ids(f.field_type) if isinstance(f.field_type, StructType) else {}}
            for f in struct.fields}


def commit_iceberg(ctx: DdlContext, job: WriteJob, request: CommitRequest) -> WriteOutcome:
    """One snapshot of the job's files into an existing table (a CREATE TABLE AS's table is created with
    them by :mod:`hms_catalog.write.iceberg_create`)."""
    from pyiceberg.exceptions import CommitFailedException

    database, name = job.database, job.table
    full = f"{ctx.catalog.name}.{database}.{name}"
    request = drop_unlisted(ctx.catalog.storage, job.staging, request)
    replaced = 0
    with ctx.changing([(database, name)], events=[("ALTER_TABLE", database, name, 1)], source=ChangeSource.WRITE) as changes:
        for attempt in range(RETRIES + 1):
            table = _table(ctx, database, name)
            files = [data_file(table.io, table.metadata, f"{job.staging}/{f.path}") for f in request.files]
            doomed = _replaced(table, request, files)
            replaced = len(doomed or ())
            try:
                if doomed is None or files or doomed:
                    with table.transaction() as transaction:
                        producer = transaction.update_snapshot().fast_append() if doomed is None \
                            else transaction.update_snapshot().overwrite()
                        with producer as snapshot:
                            for old in doomed or ():
                                snapshot.delete_data_file(old)
                            for new in files:
                                snapshot.append_data_file(new)
                break
            except CommitFailedException as error:
                if attempt == RETRIES:
                    raise WriteConflictError(f"write conflict on {full}: other commits kept winning ({error}); nothing of this "
                                             "write was applied (run it again)") from error
        changes.append((ChangeKind.CHANGED, CatalogObject.for_table(database, name)))
    rows = sum(f.rows for f in request.files)
    verb = "appended to" if request.mode == "append" else f"overwrote ({replaced} file(s) replaced)"
    return WriteOutcome(f"{verb} Iceberg table {full}: {len(request.files)} file(s), {rows} row(s) in one commit",
                        ctx.version_of(changes), len(request.files), rows, replaced=replaced)


def _current_files(table: Any) -> list[Any]:
    snapshot = table.current_snapshot()
    if snapshot is None:
        return []
    from pyiceberg.manifest import ManifestContent

    return [entry.data_file for manifest in snapshot.manifests(table.io) if manifest.content == ManifestContent.DATA
            for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True)]


def _replaced(table: Any, request: CommitRequest, files: list[Any]) -> list[Any] | None:
    """The data files an overwrite deletes (None for an append)."""
    if request.mode == "append":
        return None
    current = _current_files(table)
    if request.mode == "dynamic":
        spec_id = table.spec().spec_id
        written = {tuple(f.partition) for f in files}
        return [f for f in current if f.spec_id == spec_id and tuple(f.partition) in written]
    row_filter = _static_filter(table.schema(), request.static, f"{table.name()[-2]}.{table.name()[-1]}")
    return [f for f in current if _all_rows_match(table, row_filter, f)]


def _all_rows_match(table: Any, row_filter: Any, file: Any) -> bool:
    """Whether every row of ``file`` matches ``row_filter`` (False: none can); a file of which only some
    rows may match is refused."""
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.expressions.visitors import (
        ROWS_CANNOT_MATCH,
        ROWS_MUST_MATCH,
        _InclusiveMetricsEvaluator,
        _StrictMetricsEvaluator,
        expression_evaluator,
        inclusive_projection,
        strict_projection,
    )
    from pyiceberg.schema import Schema

    if isinstance(row_filter, AlwaysTrue):
        return True
    schema = table.schema()
    spec = table.specs()[file.spec_id]
    partition_schema = Schema(*spec.partition_type(schema).fields)
    if expression_evaluator(partition_schema, strict_projection(schema, spec, False)(row_filter), False)(file.partition):
        return True
    if _StrictMetricsEvaluator(schema, row_filter, False).eval(file) == ROWS_MUST_MATCH:
        return True
    if not expression_evaluator(partition_schema, inclusive_projection(schema, spec, False)(row_filter), False)(file.partition):
        return False
    if _InclusiveMetricsEvaluator(schema, row_filter, False).eval(file) == ROWS_CANNOT_MATCH:
        return False
    raise ConfigurationError(f"cannot overwrite where {row_filter}: data file {file.file_path} holds rows that match it and rows "
                             "that may not, and an overwrite here replaces whole data files (overwrite whole partitions, "
                             "or use overwritePartitions())")


def _static_filter(schema: Any, static: Mapping[str, str | None], table: str) -> Any:
    """The rows an overwrite by filter replaces: the equalities Spark's filter named, on the table's columns."""
    from pyiceberg import expressions

    equal: Any = expressions.EqualTo
    null: Any = expressions.IsNull
    terms: list[Any] = []
    for key, value in static.items():
        field = schema.find_field(key, case_sensitive=False) if _has(schema, key) else None
        if field is None:
            raise ConfigurationError(f"'{key}' is not a column of {table}")
        terms.append(null(field.name) if value is None else equal(field.name, _typed(field, value)))
    if not terms:
        return expressions.AlwaysTrue()
    return functools.reduce(expressions.And, terms)


def _has(schema: Any, key: str) -> bool:
    try:
        schema.find_field(key, case_sensitive=False)
    except ValueError:
        return False
    return True


def _typed(field: Any, value: str) -> Any:
    """A literal of Spark's filter (as the connector sends it: a timestamp in microseconds, a date in ISO)
    as the column's Python value."""
    import datetime
    import decimal

    kind = str(field.field_type)
    if kind in ("int", "long") or (kind.startswith("timestamp") and value.lstrip("-").isdigit()):
        return int(value)
    if kind in ("float", "double"):
        return float(value)
    if kind == "boolean":
        return value.lower() == "true"
    if kind == "date":
        return datetime.date.fromisoformat(value)
    if kind.startswith("decimal"):
        return decimal.Decimal(value)
    return value
