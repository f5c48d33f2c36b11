"""A write's commit: the files a job wrote become the table's, whole or not at all, as one catalog event.

The job's files wait in its staging folder. The commit, under the table's lock:

1. deletes what the job's failed task attempts left there (any file not in the committed list);
2. works out, per partition written, whether it is new, appended to or replaced, and for an overwrite
   which partitions it empties (a data source table's STATIC overwrite drops the matching partitions it
   did not write);
3. moves a new partition's folder to its place under the table (one rename), then makes the metastore
   calls: ``add_partitions`` in batches for new partitions, one ``alter_partitions`` that points each
   replaced partition at its folder in the staging folder and updates the statistics of every changed
   one, ``drop_partitions`` for emptied ones; an unpartitioned table's overwrite is one ``alter_table``
   to the new folder. If a call fails, the calls before it are undone and the job's files deleted: the
   table is as it was;
4. only then appends files to existing folders (a reader may see part of an append while it is moved in,
   each file whole), waits :data:`RETAIN_OLD_SECONDS` and deletes the folders the swap left behind, and
   answers.

A reader that listed or planned before step 3 reads the old folders whole: they stay for
:data:`RETAIN_OLD_SECONDS` after the swap, longer than a plan takes to start reading. One that plans
after reads the new ones whole. When the write has answered, the old folders are gone.
"""

from __future__ import annotations

import dataclasses
import posixpath
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.context import DdlContext
from hms_catalog.errors import AlreadyExistsError, ConfigurationError, WriteConflictError
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name
from hms_catalog.write import staging
from hms_catalog.write.jobs import WHOLE_TABLE, WriteJob
from hms_catalog.write.statistics import appended_parameters, written_parameters
from hms_catalog.write.target import write_target

__all__ = ["WrittenFile", "CommitRequest", "WriteOutcome", "commit_write", "BATCH"]

BATCH = 1000  # partitions per add_partitions call
RETAIN_OLD_SECONDS = 2.0  # how long replaced folders outlive the swap, for readers that listed them just before
_MODES = ("append", "overwrite", "dynamic")


@dataclass(frozen=True)
class WrittenFile:
    """One file a committed task wrote: its path under the staging folder (``k=v/part-...``), its
    partition's values (None for NULL) and what the writer counted."""

    path: str
    values: tuple[str | None, ...] = ()
    bytes: int = 0
    rows: int = 0


@dataclass(frozen=True)
class CommitRequest:
    """``mode``: append; overwrite (of what ``static`` names: every partition when empty); dynamic (of the
    partitions written). A Hive table's overwrite replaces only the partitions written, whatever the mode,
    as Spark overwrites a STORED AS table. A full static spec's partition is replaced even when the query
    gives no rows: it is left present and empty, as Spark leaves its own."""

    mode: str
    files: tuple[WrittenFile, ...] = ()
    static: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in _MODES:
            raise ConfigurationError(f"write mode must be one of {', '.join(_MODES)}, got '{self.mode}'")


@dataclass(frozen=True)
class WriteOutcome:
    message: str
    version: int
    files: int
    rows: int
    added: int = 0
    replaced: int = 0
    appended: int = 0
    dropped: int = 0


@dataclass
class _Partition:
    values: tuple[str | None, ...]
    folder: str  # relative to the staging folder
    files: list[WrittenFile] = field(default_factory=list)


def commit_write(ctx: DdlContext, job: WriteJob, request: CommitRequest) -> WriteOutcome:
    database, name = job.database, job.table
    full = f"{ctx.catalog.name}.{database}.{name}"
    with ctx.changing([(database, name)], events=(), source=ChangeSource.WRITE) as changes:
        struct = ctx.catalog.client.get_table(database, name)
        target = write_target(struct, full)
        request = _drop_unlisted(job.staging, request)
        if target.partition_keys:
            counts, old = _commit_partitioned(ctx, job, struct, request)
        else:
            counts, old = _commit_unpartitioned(ctx, job, struct, request)
        changes.append((ChangeKind.CHANGED, CatalogObject.for_table(database, name)))
    _delete_old(job.root, old)  # after the caches dropped the old plans and the change is recorded
    rows = sum(f.rows for f in request.files)
    verb = "appended to" if request.mode == "append" else "overwrote"
    detail = ", ".join(f"{n} partition(s) {what}" for what, n in zip(("added", "replaced", "appended to", "dropped"), counts) if n)
    message = f"{verb} {full}: {len(request.files)} file(s), {rows} row(s)" + (f"; {detail}" if detail else "")
    return WriteOutcome(message, ctx.version_of(changes), len(request.files), rows, *counts)


def _drop_unlisted(folder: str, request: CommitRequest) -> CommitRequest:
    """Delete the files of failed or speculative task attempts (what is under the staging folder but not
    listed); the request with each file's size as the folder has it."""
    listed = {posixpath.normpath(f.path): f for f in request.files}
    for relative in listed:
        if relative.startswith(("/", "..")) or staging.is_hidden(relative):
            raise ConfigurationError(f"written file '{relative}' is not a visible file under the job's staging folder")
    present = staging.files_under(folder)
    staging.delete_files(location for relative, (location, _) in present.items() if relative not in listed)
    missing = sorted(set(listed) - set(present))
    if missing:
        raise ConfigurationError(f"{len(missing)} written file(s) are not in the job's staging folder {folder} "
                                 f"(first: {missing[0]}): nothing was committed")
    files = tuple(dataclasses.replace(f, path=relative, bytes=present[relative][1]) for relative, f in listed.items())
    return dataclasses.replace(request, files=files)


def _groups(keys: Sequence[str], files: Sequence[WrittenFile]) -> dict[str, _Partition]:
    groups: dict[str, _Partition] = {}
    for written in files:
        if len(written.values) != len(keys):
            raise ConfigurationError(f"written file '{written.path}' has {len(written.values)} partition value(s); "
                                     f"the table has {len(keys)} partition column(s)")
        name = make_partition_name(keys, list(written.values))
        group = groups.setdefault(name, _Partition(written.values, posixpath.dirname(posixpath.normpath(written.path))))
        group.files.append(written)
    return groups


def _static_values(keys: Sequence[str], static: dict[str, str | None]) -> list[str] | None:
    """The static spec as get_partition_names_ps values ('' for a key left open), None when it names no key."""
    given = {k.lower(): v for k, v in static.items()}
    unknown = sorted(set(given) - set(keys))
    if unknown:
        raise ConfigurationError(f"'{unknown[0]}' is not a partition column (partition columns: {', '.join(keys)})")
    if not given:
        return None
    return [(given[k] or DEFAULT_PARTITION) if k in given else "" for k in keys]


_Counts = tuple[tuple[int, int, int, int], list[str]]  # (added, replaced, appended, dropped), folders to delete


def _commit_partitioned(ctx: DdlContext, job: WriteJob, struct: ttypes.Table, request: CommitRequest) -> _Counts:
    database, name = job.database, job.table
    keys = [k.name.lower() for k in struct.partitionKeys or []]
    target = job.target
    client = ctx.catalog.client
    written = _groups(keys, request.files)
    overwrite = request.mode != "append"
    static = {k.lower(): v for k, v in request.static.items()} if overwrite else {}
    if overwrite and static and set(static) == set(keys):
        full_spec = tuple(static[k] for k in keys)
        spec_name = make_partition_name(keys, list(full_spec))
        written.setdefault(spec_name, _Partition(full_spec, spec_name))  # INSERT OVERWRITE .. PARTITION (all keys): present, even empty
    existing = {make_partition_name(keys, [None if v == DEFAULT_PARTITION else v for v in p.values]): p
                for start in range(0, len(written), BATCH)
                for p in client.get_partitions_by_names(database, name, sorted(written)[start : start + BATCH])}
    dropped: list[str] = []
    if overwrite and not target.hive_table and request.mode == "overwrite":
        spec_values = _static_values(keys, static)
        matching = client.get_partition_names(database, name) if spec_values is None else \
            client.get_partition_names_ps(database, name, spec_values)
        dropped = sorted(set(matching) - set(written))
        for start in range(0, len(dropped), BATCH):
            existing.update({make_partition_name(keys, [None if v == DEFAULT_PARTITION else v for v in p.values]): p
                             for p in client.get_partitions_by_names(database, name, dropped[start : start + BATCH])})
    if overwrite:
        _check_conflicts(ctx, job, set(written) | set(dropped))
    new = {n: g for n, g in written.items() if n not in existing}
    replaced = {n: g for n, g in written.items() if n in existing and overwrite}
    appended = {n: g for n, g in written.items() if n in existing and not overwrite}
    moved = _place_new(job, struct, new)
    events = [("ADD_PARTITION", database, name, -(-len(new) // BATCH)), ("ALTER_PARTITION", database, name, len(replaced) + len(appended)),
              ("DROP_PARTITION", database, name, len(dropped))]
    expectations = [ctx.catalog.caches.self_events.expect(*event) for event in events if event[3]]
    old_folders = [existing[n].sd.location for n in list(replaced) + dropped if existing.get(n) and existing[n].sd]
    try:
        _swap(ctx, job, struct, keys, new, moved, replaced, appended, existing, dropped)
    except BaseException:
        for expectation in expectations:
            ctx.catalog.caches.self_events.withdraw(expectation)
        for location in moved.values():
            staging.delete_folder(location)
        raise
    for n, group in appended.items():
        location = existing[n].sd.location
        for written_file in group.files:
            staging.move(f"{job.staging}/{written_file.path}", _free_name(location, job, written_file))
    if replaced or any(n not in moved for n in new):  # partitions now live in the staging folder
        staging.mark_committed(job.staging)
    else:
        staging.delete_folder(job.staging)
    ctx.catalog.write_jobs.record(job, set(written) | set(dropped))
    return (len(new), len(replaced), len(appended), len(dropped)), old_folders


def _free_name(folder: str, job: WriteJob, written: WrittenFile) -> str:
    """Where an appended file goes in ``folder``: its own name, or with the job's id before it if a file of
    that name is there (a rename would replace it)."""
    name = posixpath.basename(written.path)
    target = f"{folder.rstrip('/')}/{name}"
    return target if not staging.exists(target) else f"{folder.rstrip('/')}/{job.id}-{name}"


def _check_conflicts(ctx: DdlContext, job: WriteJob, names: set[str]) -> None:
    touched, other = ctx.catalog.write_jobs.touched_since(job, names or {WHOLE_TABLE})
    if touched:
        shown = ", ".join(sorted(n or "the whole table" for n in touched)[:5])
        raise WriteConflictError(f"write conflict on {ctx.catalog.name}.{job.database}.{job.table}: {shown} "
                                 f"{'was' if len(touched) == 1 else 'were'} written by job {other} since this job began; "
                                 "nothing of this write was applied (run it again)")


def _place_new(job: WriteJob, struct: ttypes.Table, new: dict[str, _Partition]) -> dict[str, str]:
    """Move each new partition's folder to ``<table>/k=v`` when nothing is there (one rename); the
    locations moved to, by partition name. A folder already there (files no partition lists) is left
    alone and the partition stays in the staging folder."""
    moved: dict[str, str] = {}
    for n, group in new.items():
        source = f"{job.staging}/{group.folder}"
        target = f"{job.root}/{group.folder}"
        if group.files and not staging.exists(target):
            staging.move(source, target)
            moved[n] = target
    return moved


def _partition_location(job: WriteJob, group: _Partition, moved: dict[str, str], n: str) -> str:
    location = moved.get(n, f"{job.staging}/{group.folder}")
    if n not in moved:
        staging.make_folder(location)
    return location


def _swap(ctx: DdlContext, job: WriteJob, struct: ttypes.Table, keys: list[str], new: dict[str, _Partition],
          moved: dict[str, str], replaced: dict[str, _Partition], appended: dict[str, _Partition],
          existing: dict[str, ttypes.Partition], dropped: list[str]) -> None:
    """The metastore calls, undone in reverse order when a later one fails."""
    database, name = job.database, job.table
    client = ctx.client
    added: list[str] = []
    try:
        parts = []
        for n, group in new.items():
            location = _partition_location(job, group, moved, n)
            sd = ttypes.StorageDescriptor(**{**struct.sd.__dict__, "location": location})
            parts.append((n, ttypes.Partition(values=[DEFAULT_PARTITION if v is None else v for v in group.values], dbName=struct.dbName,
                                              tableName=struct.tableName, sd=sd, parameters=written_parameters({}, group.files))))
        for start in range(0, len(parts), BATCH):
            batch = parts[start : start + BATCH]
            try:
                client.add_partitions([p for _, p in batch])
            except AlreadyExistsError as error:
                raise WriteConflictError(f"write conflict on {ctx.catalog.name}.{database}.{name}: a partition this job adds "
                                         f"was added by another writer since it began ({error}); nothing of this write was "
                                         "applied (run it again)") from error
            added += [n for n, _ in batch]
        changed = []
        for n, group in replaced.items():
            old = existing[n]
            location = _partition_location(job, group, moved, n)
            changed.append(ttypes.Partition(**{**old.__dict__, "sd": ttypes.StorageDescriptor(**{**old.sd.__dict__, "location": location}),
                                               "parameters": written_parameters(old.parameters or {}, group.files)}))
        for n, group in appended.items():
            old = existing[n]
            changed.append(ttypes.Partition(**{**old.__dict__, "parameters": appended_parameters(old, group.files)}))
        client.alter_partitions(database, name, changed, keep_statistics=True)
        try:
            if dropped:
                client.drop_partitions(database, name, dropped, delete_data=False, if_exists=True)
        except BaseException:
            client.add_partitions([existing[n] for n in dropped if n in existing], if_not_exists=True)
            client.alter_partitions(database, name, [existing[n] for n in list(replaced) + list(appended)])
            raise
    except BaseException as error:
        if added:
            try:
                client.drop_partitions(database, name, added, delete_data=False, if_exists=True)
            except Exception as cleanup:  # noqa: BLE001 - reported with the error that made it necessary
                error.add_note(f"dropping the {len(added)} partition(s) this commit added failed too ({cleanup}): "
                               "drop them with ALTER TABLE .. DROP PARTITION")
        raise


def _commit_unpartitioned(ctx: DdlContext, job: WriteJob, struct: ttypes.Table, request: CommitRequest) -> _Counts:
    database, name = job.database, job.table
    location = job.target.location
    if request.mode == "append":
        parameters = appended_parameters(struct, request.files)
        new_struct = ttypes.Table(**{**struct.__dict__, "parameters": parameters})
        ctx.catalog.caches.self_events.expect("ALTER_TABLE", database, name, 1)
        ctx.client.alter_table(database, name, new_struct, keep_statistics=True)
        for written_file in request.files:
            staging.move(f"{job.staging}/{written_file.path}", _free_name(location, job, written_file))
        staging.delete_folder(job.staging)
        ctx.catalog.write_jobs.record(job, set())
        return (0, 0, 1, 0), []
    _check_conflicts(ctx, job, {WHOLE_TABLE})
    staging.make_folder(job.staging)
    sd = ttypes.StorageDescriptor(**{**struct.sd.__dict__, "location": job.staging})
    if sd.serdeInfo is not None and "path" in (sd.serdeInfo.parameters or {}):
        sd.serdeInfo = ttypes.SerDeInfo(**{**sd.serdeInfo.__dict__, "parameters": {**sd.serdeInfo.parameters, "path": job.staging}})
    new_struct = ttypes.Table(**{**struct.__dict__, "sd": sd, "parameters": written_parameters(struct.parameters or {}, request.files)})
    expectation = ctx.catalog.caches.self_events.expect("ALTER_TABLE", database, name, 1)
    try:
        ctx.client.alter_table(database, name, new_struct, keep_statistics=True)
    except BaseException:
        ctx.catalog.caches.self_events.withdraw(expectation)
        raise
    staging.mark_committed(job.staging)
    ctx.catalog.write_jobs.record(job, {WHOLE_TABLE})
    return (0, 1, 0, 0), [location]


def _delete_old(root: str, locations: Sequence[str]) -> None:
    """Delete what the swap left: a folder under the table whole (its visible files only when it is the
    table's root, which holds the staging folders), one elsewhere emptied of its visible files; then the
    staging folders that no longer hold anything visible."""
    if not locations:
        return
    time.sleep(RETAIN_OLD_SECONDS)
    emptied = set()
    for location in locations:
        location = location.rstrip("/")
        if staging.normalized(location) == staging.normalized(root):
            for child in staging.visible_children(location):
                staging.delete_any(child)
        elif staging.is_within(location, root):
            staging.delete_folder(location)
            folder = staging.staging_ancestor(root, location)
            if folder is not None:
                emptied.add(folder)
        else:
            for child in staging.visible_children(location):
                staging.delete_any(child)
    for folder in emptied:
        if not staging.files_under(folder):
            staging.delete_folder(folder)

