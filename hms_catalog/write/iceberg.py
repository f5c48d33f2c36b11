"""Writes to Iceberg tables: Spark writes Parquet data files (with Iceberg's field ids) into a folder of
the job under the table's ``data/``, and the commit adds them as one snapshot with pyiceberg.

Each data file's metrics (counts, nulls, bounds by field id) and partition tuple are read from its
footer, as Iceberg's own writers record them; the table's partition spec must be identity transforms (or
none), which the writer honours by writing each partition's rows to files of their own. A dynamic
overwrite first deletes the files of the partitions written, a STATIC one those its spec matches, in the
same transaction (two snapshots, one commit). A commit that loses a race with another writer is retried
on the table's new metadata, as Iceberg's protocol says. Files nobody committed are never referenced,
so a failed job leaves the table as it was; its folder is deleted by its abort.
"""

from __future__ import annotations

import functools
from typing import Any

from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.context import DdlContext
from hms_catalog.ddl.iceberg import iceberg_catalog
from hms_catalog.errors import ConfigurationError, UnsupportedTableError, WriteConflictError
from hms_catalog.write.commit import CommitRequest, WriteOutcome, _drop_unlisted
from hms_catalog.write.jobs import WriteJob
from hms_catalog.write.target import WriteTarget

__all__ = ["iceberg_target", "commit_iceberg", "RETRIES"]

RETRIES = 4  # commits retried on the table's new metadata when another writer committed first


def _table(ctx: DdlContext, database: str, name: str) -> Any:
    return iceberg_catalog(ctx.catalog).load_table((database, name))


def iceberg_target(ctx: DdlContext, struct: ttypes.Table, full_name: str) -> WriteTarget:
    table = _table(ctx, struct.dbName, struct.tableName)
    spec = table.spec()
    schema = table.schema()
    keys = []
    for field in spec.fields:
        if str(field.transform) != "identity":
            source = schema.find_column_name(field.source_id)
            raise UnsupportedTableError(f"{full_name} is an Iceberg table partitioned by {field.transform}({source}): writes through "
                                        "this catalog take Iceberg tables partitioned by columns (identity) or not at all")
        keys.append(schema.find_column_name(field.source_id).lower())
    codec = table.properties.get("write.parquet.compression-codec", "zstd")
    return WriteTarget(database=struct.dbName.lower(), table=struct.tableName.lower(), location=f"{table.location().rstrip('/')}/data",
                       writer="parquet", hive_table=False, partition_keys=tuple(keys), options={"compression": codec},
                       iceberg=True)


def commit_iceberg(ctx: DdlContext, job: WriteJob, request: CommitRequest) -> WriteOutcome:
    from pyiceberg.exceptions import CommitFailedException
    from pyiceberg.io.pyarrow import parquet_file_to_data_file

    database, name = job.database, job.table
    full = f"{ctx.catalog.name}.{database}.{name}"
    request = _drop_unlisted(job.staging, request)
    with ctx.changing([(database, name)], events=[("ALTER_TABLE", database, name, 1)], source=ChangeSource.WRITE) as changes:
        for attempt in range(RETRIES + 1):
            table = _table(ctx, database, name)
            files = [parquet_file_to_data_file(table.io, table.metadata, f"{job.staging}/{f.path}") for f in request.files]
            try:
                with table.transaction() as transaction:
                    deleted = _overwritten(table, job.target, request)
                    if deleted is not None:
                        transaction.delete(delete_filter=deleted)
                    with transaction.update_snapshot().fast_append() as append:
                        for data_file in files:
                            append.append_data_file(data_file)
                break
            except CommitFailedException as error:
                if attempt == RETRIES:
                    raise WriteConflictError(f"write conflict on {full}: other commits kept winning ({error}); nothing of this "
                                             "write was applied (run it again)") from error
        changes.append((ChangeKind.CHANGED, CatalogObject.for_table(database, name)))
    rows = sum(f.rows for f in request.files)
    verb = "appended to" if request.mode == "append" else "overwrote"
    return WriteOutcome(f"{verb} Iceberg table {full}: {len(request.files)} file(s), {rows} row(s) in one commit",
                        ctx.version_of(changes), len(request.files), rows)


def _overwritten(table: Any, target: WriteTarget, request: CommitRequest) -> Any:
    """The rows an overwrite replaces, as a pyiceberg filter (None for an append)."""
    from pyiceberg import expressions

    always: Any = expressions.AlwaysTrue
    both: Any = expressions.And
    either: Any = expressions.Or
    equal: Any = expressions.EqualTo
    null: Any = expressions.IsNull
    if request.mode == "append":
        return None
    schema = table.schema()
    names = {key: schema.find_field(key, case_sensitive=False).name for key in target.partition_keys}

    def spec_filter(values: dict[str, str | None]) -> Any:
        terms = [null(names[key]) if value is None else equal(names[key], _typed(schema, names[key], value))
                 for key, value in values.items()]
        return functools.reduce(both, terms) if len(terms) > 1 else terms[0] if terms else always()

    if request.mode == "overwrite":
        unknown = sorted(set(request.static) - set(names))
        if unknown:
            raise ConfigurationError(f"'{unknown[0]}' is not a partition column of {target.database}.{target.table}")
        return spec_filter({k.lower(): v for k, v in request.static.items()})
    if not target.partition_keys:
        return always()
    written = {tuple(f.values) for f in request.files}
    if not written:
        return None
    return functools.reduce(either, [spec_filter(dict(zip(target.partition_keys, values))) for values in sorted(written, key=repr)]) \
        if len(written) > 1 else spec_filter(dict(zip(target.partition_keys, next(iter(written)))))


def _typed(schema: Any, column: str, value: str) -> Any:
    """A partition value (as Spark's writer names it) as the column's Python value."""
    import datetime
    import decimal

    kind = str(schema.find_field(column).field_type)
    if kind in ("int", "long"):
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

