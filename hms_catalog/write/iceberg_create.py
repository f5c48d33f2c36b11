"""CREATE [OR REPLACE] TABLE .. USING iceberg AS SELECT: the Iceberg table appears with its data, or not
at all.

When the job begins, the new table's schema (with the field ids pyiceberg will give it) and partition
spec are fixed, so Spark's writer puts those ids in the files and partitions rows by the spec's
transforms. At commit the table is created by one pyiceberg create transaction whose first snapshot adds
the files (each file's partition tuple proved as for any Iceberg write, see
:mod:`hms_catalog.write.iceberg_files`): a failure before it leaves no table. A replace drops the old
Iceberg table from the metastore first (its files stay). Both steps are written to the commit's undo log
first (:mod:`hms_catalog.commits`): if the create fails, or the service is killed between them, the new
table is dropped and the old one's definition made again, so the old table is back as it was.
"""

from __future__ import annotations

from typing import Any

from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.commits.undo import encode_struct
from hms_catalog.ddl.context import DdlContext
from hms_catalog.ddl.iceberg import arrow_schema_of, iceberg_catalog, partition_transform
from hms_catalog.ddl.specs import TableSpec
from hms_catalog.ddl.tables import default_location
from hms_catalog.errors import AlreadyExistsError, ConfigurationError, UnsupportedTableError
from hms_catalog.formats.detect import TableFormat, detect
from hms_catalog.write.create import existing_table
from hms_catalog.write.iceberg import target_of
from hms_catalog.write.iceberg_files import data_file
from hms_catalog.write.jobs import WriteJob, jobs_of
from hms_catalog.write.request import CommitRequest, WriteOutcome, drop_unlisted

__all__ = ["begin_iceberg_create", "commit_iceberg_create", "new_schema_and_spec"]

_NAMES = {"identity": "{0}", "bucket": "{0}_bucket_{1}", "truncate": "{0}_trunc_{1}", "year": "{0}_year", "month": "{0}_month",
          "day": "{0}_day", "hour": "{0}_hour"}


def new_schema_and_spec(spec: TableSpec) -> tuple[Any, Any]:
    """The schema (fresh field ids, as pyiceberg's create gives them) and partition spec of ``spec``."""
    from pyiceberg.catalog import Catalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import assign_fresh_schema_ids
    from pyiceberg.transforms import parse_transform

    if spec.partition_columns:
        raise ConfigurationError("an Iceberg table is partitioned by its own columns: PARTITIONED BY (col, days(ts), ...)")
    schema = assign_fresh_schema_ids(Catalog._convert_schema_if_needed(arrow_schema_of(spec.columns)))
    fields = []
    for position, text in enumerate(spec.partition_transforms):
        source, kind, width = partition_transform(text)
        try:
            column = schema.find_field(source, case_sensitive=False)
        except ValueError as error:
            raise ConfigurationError(f"PARTITIONED BY names '{source}', which is not a column of the table") from error
        fields.append(PartitionField(source_id=column.field_id, field_id=1000 + position,
                                     transform=parse_transform(f"{kind}[{width}]" if width else kind),
                                     name=_NAMES[kind].format(column.name, width)))
    return schema, PartitionSpec(*fields, spec_id=0)


def begin_iceberg_create(ctx: DdlContext, spec: TableSpec, *, replace: bool) -> WriteJob:
    database, name = spec.database.lower(), spec.name.lower()
    full = f"{ctx.catalog.name}.{database}.{name}"
    ctx.catalog.client.get_database(database)
    existing = existing_table(ctx, database, name, replace=replace)
    if existing is not None and detect(existing).format is not TableFormat.ICEBERG:
        raise UnsupportedTableError(f"CREATE OR REPLACE TABLE {full} USING iceberg AS SELECT: {full} is not an Iceberg table; "
                                    "drop it first")
    location = (spec.location or default_location(ctx, database, name)).rstrip("/")
    schema, partitioning = new_schema_and_spec(spec)
    target = target_of(database, name, location, schema, partitioning, dict(spec.properties), full)
    return jobs_of(ctx.catalog).begin(database, name, target.location, target, create=spec, replace=replace)


def commit_iceberg_create(ctx: DdlContext, job: WriteJob, request: CommitRequest) -> WriteOutcome:
    assert job.create is not None
    from pyiceberg.exceptions import NoSuchTableError

    database, name = job.database, job.table
    full = f"{ctx.catalog.name}.{database}.{name}"
    iceberg = iceberg_catalog(ctx.catalog)
    identifier = (database, name)
    schema, partitioning = new_schema_and_spec(job.create)
    location = job.root.removesuffix("/data")
    properties = dict(job.create.properties)
    if job.create.comment:
        properties["comment"] = job.create.comment
    with ctx.changing([(database, name)], source=ChangeSource.WRITE) as changes:
        request = drop_unlisted(ctx.catalog.storage, job.staging, request)
        try:
            old: Any = iceberg.load_table(identifier)
        except NoSuchTableError:
            old = None
        if old is not None and not job.replace:
            raise AlreadyExistsError("table", full)
        log = jobs_of(ctx.catalog).undo_log(job)
        with log.whole(ctx.client):
            if old is not None:  # the replaced table's definition is kept in the log, made again by an undo
                changes.expect("DROP_TABLE", database, name, 1)
                log.will("dropped_table", database=database, table=name, old=encode_struct(ctx.catalog.client.get_table(database, name)))
                iceberg.drop_table(identifier)
            changes.expect("CREATE_TABLE", database, name, 1)
            log.will("created_table", database=database, table=name)
            transaction = iceberg.create_table_transaction(identifier, schema, location, partitioning, properties=properties)
            metadata = transaction.table_metadata
            if metadata.schema().as_struct() != schema.as_struct():
                raise ConfigurationError(f"the new Iceberg table {full} got other field ids than its files were written with")
            files = [data_file(transaction._table.io, metadata, f"{job.staging}/{f.path}") for f in request.files]
            if files:
                with transaction.update_snapshot().fast_append() as append:
                    for new in files:
                        append.append_data_file(new)
            transaction.commit_transaction()
        changes.append((ChangeKind.CHANGED if old is not None else ChangeKind.ADDED, CatalogObject.for_table(database, name)))
    log.mark_recorded()
    log.finish()
    rows = sum(f.rows for f in request.files)
    verb = "replaced" if old is not None else "created"
    return WriteOutcome(f"{verb} Iceberg table {full} with {len(request.files)} file(s), {rows} row(s) in one commit",
                        ctx.version_of(changes), len(request.files), rows, added=len(request.files))
