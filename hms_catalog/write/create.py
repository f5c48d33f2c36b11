"""The commit of CREATE [OR REPLACE] TABLE .. AS SELECT: the table appears with its data, or not at all.

The query's files wait in ``<table folder>/.hms-staging-<job>/``. At commit the staged folders move to
their places under the table's folder (renames inside a folder no table reads yet), then the table is
created and its partitions added in batches; if a call fails, what was made is dropped and the files
deleted. A replace drops the old table (keeping its files), deletes the files it had in the new table's
folder, then creates the new one: a reader between the two calls finds no table, and a crash there
leaves none (the files of the new one stay in the staging folder until the next write or RECOVER).
"""

from __future__ import annotations

import posixpath

from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.context import DdlContext
from hms_catalog.ddl.structs import table_struct
from hms_catalog.errors import AlreadyExistsError, NotFoundError
from hms_catalog.formats.partition_names import DEFAULT_PARTITION
from hms_catalog.write import staging
from hms_catalog.write.commit import BATCH, CommitRequest, WriteOutcome, _drop_unlisted, _groups
from hms_catalog.write.jobs import WriteJob
from hms_catalog.write.statistics import written_parameters

__all__ = ["commit_create"]


def commit_create(ctx: DdlContext, job: WriteJob, request: CommitRequest) -> WriteOutcome:
    assert job.create is not None
    database, name = job.database, job.table
    full = f"{ctx.catalog.name}.{database}.{name}"
    client = ctx.client
    with ctx.changing([(database, name)], events=(), source=ChangeSource.WRITE) as changes:
        request = _drop_unlisted(job.staging, request)
        try:
            old: ttypes.Table | None = ctx.catalog.client.get_table(database, name)
        except NotFoundError:
            old = None
        if old is not None and not job.replace:
            raise AlreadyExistsError("table", full)
        struct = table_struct(job.create, job.root)
        keys = [k.name.lower() for k in struct.partitionKeys or []]
        groups = _groups(keys, request.files) if keys else {}
        if old is not None:
            ctx.catalog.caches.self_events.expect("DROP_TABLE", database, name, 1)
            client.drop_table(database, name, delete_data=False)
            _delete_replaced(old, job.root)
        moved = _move_in(job, request, groups)
        struct.parameters = written_parameters(struct.parameters or {}, request.files) if not keys else struct.parameters
        ctx.catalog.caches.self_events.expect("CREATE_TABLE", database, name, 1)
        try:
            client.create_table(struct)
            partitions = [ttypes.Partition(values=[DEFAULT_PARTITION if v is None else v for v in group.values],
                                           dbName=database, tableName=name,
                                           sd=ttypes.StorageDescriptor(**{**struct.sd.__dict__, "location": f"{job.root}/{group.folder}"}),
                                           parameters=written_parameters({}, group.files)) for group in groups.values()]
            if partitions:
                ctx.catalog.caches.self_events.expect("ADD_PARTITION", database, name, -(-len(partitions) // BATCH))
            for start in range(0, len(partitions), BATCH):
                client.add_partitions(partitions[start : start + BATCH])
        except BaseException as error:
            try:
                client.drop_table(database, name, delete_data=False)
            except NotFoundError:
                pass
            except Exception as cleanup:  # noqa: BLE001 - reported with the error that made it necessary
                error.add_note(f"dropping the half-made table failed too ({cleanup}): drop it with DROP TABLE {full}")
            for location in moved:
                staging.delete_any(location)
            raise
        staging.delete_folder(job.staging)
        changes.append((ChangeKind.CHANGED if old is not None else ChangeKind.ADDED, CatalogObject.for_table(database, name)))
    rows = sum(f.rows for f in request.files)
    verb = "replaced" if old is not None else "created"
    message = (f"{verb} {full} with {len(request.files)} file(s), {rows} row(s)"
               + (f" in {len(groups)} partition(s)" if keys else ""))
    return WriteOutcome(message, ctx.version_of(changes), len(request.files), rows, added=len(groups))


def _move_in(job: WriteJob, request: CommitRequest, groups: dict) -> list[str]:  # type: ignore[type-arg]
    """Move the staged files (or partition folders) to their places under the table's folder."""
    moved = []
    if groups:
        for group in groups.values():
            target = f"{job.root}/{group.folder}"
            staging.move(f"{job.staging}/{group.folder}", target)
            moved.append(target)
    else:
        for written in request.files:
            target = f"{job.root}/{posixpath.basename(written.path)}"
            staging.move(f"{job.staging}/{written.path}", target)
            moved.append(target)
    return moved


def _delete_replaced(old: ttypes.Table, root: str) -> None:
    """The replaced table's files in the new table's folder (a managed table's elsewhere too)."""
    location = old.sd.location if old.sd is not None else None
    if not location:
        return
    if staging.normalized(staging.table_root(location)) == staging.normalized(root) or old.tableType == "MANAGED_TABLE":
        for child in staging.visible_children(staging.table_root(location)):
            staging.delete_any(child)
        for folder in staging.stale_staging(staging.table_root(location), (), ()):
            if staging.committed(folder):
                staging.delete_folder(folder)
