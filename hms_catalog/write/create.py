"""The commit of CREATE [OR REPLACE] TABLE .. AS SELECT: the table appears with its data, or not at all.

The query's files wait in ``<table folder>/.hms-staging-<job>/``. At commit, a replace first drops the
old table (its definition and partitions written to the undo log, to be made again if a later step
fails) and sets aside its files in the new table's folder; then the staged folders move to their places
under the table's folder, the table is created and its partitions added in batches. Every step is
written to the commit's :class:`~hms_catalog.commits.undo.UndoLog` first, so a failure, or a process
killed at any point, leaves the old table (or none) as it was; the set-aside files are deleted only once
the commit is done.
"""

from __future__ import annotations

from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.commits import staging
from hms_catalog.commits.undo import UndoLog, encode_struct
from hms_catalog.ddl.context import DdlContext
from hms_catalog.ddl.structs import table_struct
from hms_catalog.errors import AlreadyExistsError, NotFoundError
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name
from hms_catalog.write.commit import move_files_in, set_aside
from hms_catalog.write.jobs import WriteJob, jobs_of
from hms_catalog.write.request import CommitRequest, WriteOutcome, drop_unlisted, group_files
from hms_catalog.write.statistics import written_parameters

__all__ = ["commit_create", "existing_table"]


def commit_create(ctx: DdlContext, job: WriteJob, request: CommitRequest) -> WriteOutcome:
    assert job.create is not None
    database, name = job.database, job.table
    full = f"{ctx.catalog.name}.{database}.{name}"
    client = ctx.client
    with ctx.changing([(database, name)], source=ChangeSource.WRITE) as changes:
        jobs_of(ctx.catalog).finish_unfinished(ctx.catalog, (database, name))
        request = drop_unlisted(ctx.catalog.storage, job.staging, request)
        old = existing_table(ctx, database, name, replace=job.replace)
        struct = table_struct(job.create, job.root)
        keys = [k.name.lower() for k in struct.partitionKeys or []]
        groups = group_files(keys, request.files) if keys else {}
        log = jobs_of(ctx.catalog).undo_log(job)
        with log.whole(client):
            if old is not None:
                changes.expect("DROP_TABLE", database, name, 1)
                _drop_old(ctx, log, job, old)
            if groups:
                for group in groups.values():
                    log.will_move(f"{job.staging}/{group.folder}", f"{job.root}/{group.folder}")
            else:
                move_files_in(log, job, job.root, list(request.files))
                struct.parameters = written_parameters(struct.parameters or {}, request.files)
            changes.expect("CREATE_TABLE", database, name, 1)
            log.will("created_table", database=database, table=name)
            client.create_table(struct)
            partitions = [ttypes.Partition(values=[DEFAULT_PARTITION if v is None else v for v in group.values],
                                           dbName=database, tableName=name,
                                           sd=ttypes.StorageDescriptor(**{**struct.sd.__dict__, "location": f"{job.root}/{group.folder}"}),
                                           parameters=written_parameters({}, group.files)) for group in groups.values()]
            for start in range(0, len(partitions), ctx.partition_batch):
                batch = partitions[start : start + ctx.partition_batch]
                changes.expect("ADD_PARTITION", database, name, 1)
                log.will("added_partitions", database=database, table=name, names=[make_partition_name(keys, p.values) for p in batch])
                client.add_partitions(batch)
            log.delete_later(job.staging)
        changes.append((ChangeKind.CHANGED if old is not None else ChangeKind.ADDED, CatalogObject.for_table(database, name)))
    log.mark_recorded()
    log.finish()
    rows = sum(f.rows for f in request.files)
    verb = "replaced" if old is not None else "created"
    message = (f"{verb} {full} with {len(request.files)} file(s), {rows} row(s)"
               + (f" in {len(groups)} partition(s)" if keys else ""))
    return WriteOutcome(message, ctx.version_of(changes), len(request.files), rows, added=len(groups))


def existing_table(ctx: DdlContext, database: str, name: str, *, replace: bool) -> ttypes.Table | None:
    """The table a CREATE [OR REPLACE] TABLE AS replaces, None when there is none; AlreadyExistsError when
    there is one and the statement does not replace it."""
    try:
        existing = ctx.catalog.client.get_table(database, name)
    except NotFoundError:
        return None
    if not replace:
        raise AlreadyExistsError("table", f"{ctx.catalog.name}.{database}.{name}")
    return existing


def _drop_old(ctx: DdlContext, log: UndoLog, job: WriteJob, old: ttypes.Table) -> None:
    """Drop the replaced table (kept in the log, with its partitions, to be made again by an undo) and set
    aside its files where the new table goes (a managed table's wherever they are)."""
    partitions = ctx.catalog.client.get_partitions_by_filter(job.database, job.table, "") if old.partitionKeys else []
    log.will("dropped_table", database=job.database, table=job.table, old=encode_struct(old),
             partitions=[encode_struct(p) for p in partitions])
    ctx.client.drop_table(job.database, job.table, delete_data=False)
    location = old.sd.location if old.sd is not None else None
    if not location:
        return
    root = staging.table_root(location)
    if staging.normalized(root) == staging.normalized(job.root) or old.tableType == "MANAGED_TABLE":
        set_aside(log, job, root)
