"""Beginning, committing and aborting a write job, and clearing what crashed jobs left.

A job begins before any file is written: the table must take writes (:func:`write_target` says why not),
and a CREATE TABLE AS must name a database that exists and a table that does not (unless it replaces
it). An abort deletes the job's staging folder, and for a CREATE TABLE AS the table's folder too when
the job made it. A crashed job's staging folder (no live job, no unfinished commit's undo log, no
location pointing into it) is deleted by the next write of the table, and by ALTER TABLE .. RECOVER
PARTITIONS.
"""

from __future__ import annotations

import dataclasses

from hms_catalog.commits.staging import remove_stale_staging, table_root
from hms_catalog.ddl.context import DdlContext
from hms_catalog.ddl.specs import TableSpec
from hms_catalog.ddl.structs import table_struct
from hms_catalog.ddl.tables import default_location
from hms_catalog.errors import NotFoundError
from hms_catalog.formats.detect import TableFormat, detect
from hms_catalog.storage.files import delete_folder, files_under
from hms_catalog.write.commit import commit_write
from hms_catalog.write.create import commit_create, existing_table
from hms_catalog.write.iceberg import commit_iceberg, iceberg_target
from hms_catalog.write.iceberg_create import begin_iceberg_create, commit_iceberg_create
from hms_catalog.write.jobs import WriteJob, jobs_of
from hms_catalog.write.request import CommitRequest, WriteOutcome
from hms_catalog.write.target import write_target

__all__ = ["begin_write", "begin_create", "abort_write", "commit_job"]


def begin_write(ctx: DdlContext, database: str, table: str) -> WriteJob:
    database, table = database.lower(), table.lower()
    full = f"{ctx.catalog.name}.{database}.{table}"
    struct = ctx.catalog.client.get_table(database, table)
    if detect(struct).format is TableFormat.ICEBERG:
        target = iceberg_target(ctx, struct, full)
        return jobs_of(ctx.catalog).begin(database, table, target.location, target)
    target = write_target(struct, full)
    root = table_root(target.location)
    remove_stale_staging(ctx.catalog, struct, root)
    return jobs_of(ctx.catalog).begin(database, table, root, target)


def begin_create(ctx: DdlContext, spec: TableSpec, *, replace: bool) -> WriteJob:
    """A CREATE [OR REPLACE] TABLE .. AS SELECT: nothing is made in the metastore before the commit."""
    database, name = spec.database.lower(), spec.name.lower()
    full = f"{ctx.catalog.name}.{database}.{name}"
    if (spec.provider or "").lower() == "iceberg":
        return begin_iceberg_create(ctx, dataclasses.replace(spec, database=database, name=name), replace=replace)
    location = spec.location or default_location(ctx, database, name)
    existing_table(ctx, database, name, replace=replace)
    spec = dataclasses.replace(spec, database=database, name=name)
    struct = table_struct(spec, location)
    struct.dbName, struct.tableName = database, name
    target = write_target(struct, full)
    root = location.rstrip("/")
    return jobs_of(ctx.catalog).begin(database, name, root, target, create=spec, replace=replace)


def commit_job(ctx: DdlContext, job: WriteJob, request: CommitRequest) -> WriteOutcome:
    """Commit ``job`` with the commit of its kind (CREATE TABLE AS, an Iceberg table's snapshot, a Hive or
    data source table's files); the job ends either way, and a failed commit's files are deleted, unless its
    undo failed too (the metastore out of reach): its staging folder then holds what it set aside, and the
    undo is tried again by the table's next write, RECOVER or the next start."""
    if job.target.iceberg:
        commit = commit_iceberg_create if job.create is not None else commit_iceberg
    else:
        commit = commit_create if job.create is not None else commit_write
    try:
        outcome = commit(ctx, job, request)
    except BaseException:
        if jobs_of(ctx.catalog).left_unfinished(job.id):
            jobs_of(ctx.catalog).end(job.id)  # its undo failed: the staging folder holds what it set aside
        else:
            abort_write(ctx, job)
        raise
    jobs_of(ctx.catalog).end(job.id)
    return outcome


def abort_write(ctx: DdlContext, job: WriteJob) -> None:
    """Delete what the job wrote; a CREATE TABLE AS's folder too, when the table does not exist and the
    folder holds nothing visible."""
    try:
        delete_folder(ctx.catalog.storage, job.staging)
        if job.create is not None and not files_under(ctx.catalog.storage, job.root):
            try:
                ctx.catalog.client.get_table(job.database, job.table)
            except NotFoundError:
                delete_folder(ctx.catalog.storage, job.root)
    finally:
        jobs_of(ctx.catalog).end(job.id)
