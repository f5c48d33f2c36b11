"""A write's commit: the files a job wrote become the table's, whole or not at all, as one catalog event.

The job's files wait in its hidden staging folder. The commit, under the table's lock:

1. deletes what the job's failed task attempts left there (any file not in the committed list);
2. asks the write's mode (:mod:`hms_catalog.write.modes`) which existing partitions lose their rows, and
   from that which partitions are added, replaced, appended to or dropped;
3. puts the files in place, where Spark's own insert puts them: a new partition's folder is renamed to
   ``<table>/k=v``; a replaced partition's folder (or an unpartitioned table's visible files) is set aside
   into the staging folder and the job's folder renamed to its location; appended files are moved in;
4. makes the metastore calls: ``add_partitions`` in batches, one ``alter_partitions`` with the statistics
   of every changed partition, ``drop_partitions`` for dropped ones (an unpartitioned table: one
   ``alter_table``);
5. marks itself done, records the change, and only then, outside the table's lock, deletes what it set
   aside and the staging folder.

Each step of 3 and 4 is written to the commit's :class:`~hms_catalog.commits.undo.UndoLog` before it is
taken, and the whole of 4 before the first rename of 3 (:func:`~hms_catalog.commits.write_completion.write_intent`):
a step that fails in a running process undoes all before it; a process killed at any point leaves a log
that the next start (or the table's next write, or RECOVER) undoes when it was killed before the intent was
written, completes after that, and finishes once marked done. A killed process's last metastore call may
still land after the restart has looked, so undoing it then could be undone in turn;
:mod:`hms_catalog.commits.write_completion` says why completing it cannot. So a table's location never
changes and never names a hidden folder, as with Spark's own inserts; a reader that lists a partition while
it is swapped may find it missing a moment, as with Spark's own overwrites, but never finds rows of two
writes mixed in one partition.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.commits import staging
from hms_catalog.commits.structs import located
from hms_catalog.commits.undo import UndoLog, encode_struct
from hms_catalog.commits.write_completion import write_intent
from hms_catalog.ddl.context import DdlContext, RecordedChanges
from hms_catalog.errors import AlreadyExistsError, WriteConflictError
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name
from hms_catalog.storage.files import exists, files_under, make_folder, visible_children
from hms_catalog.write.jobs import WHOLE_TABLE, WriteJob, jobs_of
from hms_catalog.write.modes import PartitionChanges, PartitionNames, WriteMode, write_mode
from hms_catalog.write.request import (
    CommitRequest,
    WriteOutcome,
    WrittenFile,
    WrittenPartition,
    drop_unlisted,
    group_files,
)
from hms_catalog.write.statistics import appended_parameters, written_parameters
from hms_catalog.write.target import write_target

__all__ = ["WrittenFile", "CommitRequest", "WriteOutcome", "commit_write", "set_aside", "move_files_in"]

_drop_unlisted = drop_unlisted  # the name the Iceberg commit imports
_groups = group_files


def commit_write(ctx: DdlContext, job: WriteJob, request: CommitRequest) -> WriteOutcome:
    database, name = job.database, job.table
    full = f"{ctx.catalog.name}.{database}.{name}"
    with ctx.changing([(database, name)], source=ChangeSource.WRITE) as changes:
        jobs_of(ctx.catalog).finish_unfinished(ctx.catalog, (database, name))
        struct = ctx.catalog.client.get_table(database, name)
        target = write_target(struct, full)
        request = drop_unlisted(ctx.catalog.storage, job.staging, request)
        keys = [k.name.lower() for k in struct.partitionKeys or []]
        mode = write_mode(request, keys, target.hive_table)
        log = jobs_of(ctx.catalog).undo_log(job)
        commit = _Commit(ctx, job, struct, mode, log, changes)
        with log.whole(ctx.client):
            counts = commit.partitioned(keys, request) if keys else commit.unpartitioned(request)
            log.delete_later(job.staging)
        changes.append((ChangeKind.CHANGED, CatalogObject.for_table(database, name)))
    log.mark_recorded()
    log.finish()  # the irreversible deletes, last and outside the table's lock
    rows = sum(f.rows for f in request.files)
    detail = ", ".join(f"{n} partition(s) {what}" for what, n in zip(("added", "replaced", "appended to", "dropped"), counts) if n)
    message = f"{mode.verb} {full}: {len(request.files)} file(s), {rows} row(s)" + (f"; {detail}" if detail else "")
    return WriteOutcome(message, ctx.version_of(changes), len(request.files), rows, *counts)


def set_aside(log: UndoLog, job: WriteJob, location: str) -> None:
    """Move what ``location`` holds aside, into the job's staging folder (or beside it, hidden, when it lies
    outside the table's folder), deleted once the commit is done: the folder itself in one rename, or its
    visible entries one by one when it holds the staging folder (a table's root)."""
    if not exists(log.storage, location):
        return
    if staging.is_within(location, job.root):
        backup = f"{job.staging}/.replaced/{len(log.deletes)}"
    else:  # a partition's own LOCATION elsewhere, maybe on another filesystem: set aside beside it, hidden
        backup = f"{posixpath.dirname(location.rstrip('/'))}/.hms-replaced-{job.id}-{len(log.deletes)}"
    log.delete_later(backup)
    if staging.is_within(job.staging, location):
        for child in visible_children(log.storage, location):
            log.will_move(child, f"{backup}/{posixpath.basename(child.rstrip('/'))}")
    else:
        log.will_move(location, backup)


def move_files_in(log: UndoLog, job: WriteJob, location: str, files: list[WrittenFile]) -> None:
    """Move the job's ``files`` into the folder ``location``, each under its own name, or with the job's id
    before it when a file of that name is there (a rename would replace it)."""
    for written in files:
        name = posixpath.basename(written.path)
        target = f"{location.rstrip('/')}/{name}"
        taken = exists(log.storage, target)
        log.will_move(f"{job.staging}/{written.path}", f"{location.rstrip('/')}/{job.id}-{name}" if taken else target)


@dataclass
class _Commit:
    ctx: DdlContext
    job: WriteJob
    struct: ttypes.Table
    mode: WriteMode
    log: UndoLog
    changes: RecordedChanges

    def partitioned(self, keys: list[str], request: CommitRequest) -> tuple[int, int, int, int]:
        job, client = self.job, self.ctx.catalog.client
        database, name = job.database, job.table
        written = group_files(keys, request.files)
        spec = self.mode.spec_partition(keys)
        if spec is not None:
            written.setdefault(spec.folder, spec)  # INSERT OVERWRITE .. PARTITION (all keys): present, even empty
        existing = self._partitions(keys, sorted(written))
        matched = self.mode.matching(PartitionNames(client, database, name), written, set(existing))
        if self.mode.drops_unwritten():
            existing.update(self._partitions(keys, sorted(matched - set(existing))))
        if self.mode.replaces:
            _check_conflicts(self.ctx, job, set(written) | matched)
        plan = PartitionChanges.of(self.mode, written, existing, matched)
        added, changed = self._new_structs(plan.new), self._changed_structs(plan, existing)
        for group in plan.new.values():
            self._place(f"{job.root}/{group.folder}", group, keep=not self.mode.replaces)
        for n, group in plan.replaced.items():
            self._place(changed[n].sd.location, group, keep=False)
            if changed[n].sd.location != existing[n].sd.location:  # a folder an older release swapped in: deleted once done
                self.log.delete_later(existing[n].sd.location)
        for n, group in plan.appended.items():
            move_files_in(self.log, job, existing[n].sd.location, group.files)
        for n in plan.dropped:
            set_aside(self.log, job, existing[n].sd.location)
        self.log.will_complete("write", **write_intent(database, name, keys, added=added, changed=list(changed.values()),
                                                       replaced=set(plan.replaced), dropped=plan.dropped, new_table=None,
                                                       deletes=self.log.deletes))
        self._metastore(added, changed, existing, plan.dropped)
        jobs_of(self.ctx.catalog).record(job, set(written) | set(plan.dropped) if self.mode.replaces else set())
        return len(plan.new), len(plan.replaced), len(plan.appended), len(plan.dropped)

    def unpartitioned(self, request: CommitRequest) -> tuple[int, int, int, int]:
        """An append moves the files in; an overwrite (any mode: the whole table matches) first sets aside
        what the table's folder holds. A location that an older release pointed into a staging folder goes
        back to the table's own folder, its files moved along by an append."""
        job, struct = self.job, self.struct
        location, root = struct.sd.location, job.root
        files = list(request.files)
        parameters = appended_parameters(self.ctx.catalog.storage, struct, files)
        if self.mode.replaces:
            _check_conflicts(self.ctx, job, {WHOLE_TABLE})
            parameters = written_parameters(struct.parameters or {}, files)
            set_aside(self.log, job, root)
        if staging.normalized(location) != staging.normalized(root):
            if not self.mode.replaces:
                for relative, (path, _) in files_under(self.ctx.catalog.storage, location).items():
                    self.log.will_move(path, f"{root}/{job.id}-{relative.replace('/', '-')}")
            self.log.delete_later(location)
        move_files_in(self.log, job, root, files)
        new = ttypes.Table(**{**struct.__dict__, "sd": located(struct.sd, root), "parameters": parameters})
        self.changes.expect("ALTER_TABLE", job.database, job.table, 1)
        self.log.will_complete("write", **write_intent(job.database, job.table, [], added=[], changed=[], replaced=set(),
                                                       dropped=[], new_table=new, deletes=self.log.deletes))
        self.log.will("altered_table", database=job.database, table=job.table, old=encode_struct(struct))
        self.ctx.client.alter_table(job.database, job.table, new, keep_statistics=True)
        jobs_of(self.ctx.catalog).record(job, {WHOLE_TABLE} if self.mode.replaces else set())
        return (0, 1, 0, 0) if self.mode.replaces else (0, 0, 1, 0)

    def _partitions(self, keys: list[str], names: list[str]) -> dict[str, ttypes.Partition]:
        client = self.ctx.catalog.client
        return {make_partition_name(keys, [None if v == DEFAULT_PARTITION else v for v in p.values]): p
                for start in range(0, len(names), self.ctx.partition_batch)
                for p in client.get_partitions_by_names(self.job.database, self.job.table, names[start : start + self.ctx.partition_batch])}

    def _place(self, location: str, group: WrittenPartition, *, keep: bool) -> None:
        """Make ``location`` hold the group's files: its folder renamed there (what was there set aside
        first), or with ``keep`` (an append to a folder no partition listed) the files moved in."""
        if keep and exists(self.ctx.catalog.storage, location):
            move_files_in(self.log, self.job, location, group.files)
            return
        set_aside(self.log, self.job, location)
        source = f"{self.job.staging}/{group.folder}"
        if not group.files:
            make_folder(self.ctx.catalog.storage, source)  # a full spec's partition that no row went to: present and empty
        self.log.will_move(source, location)

    def _new_structs(self, new: dict[str, WrittenPartition]) -> list[ttypes.Partition]:
        struct, root = self.struct, self.job.root
        parts = []
        for group in new.values():
            location = f"{root}/{group.folder}"
            sd = located(struct.sd, location)
            values = [DEFAULT_PARTITION if v is None else v for v in group.values]
            parameters = written_parameters({}, group.files)
            if not self.mode.replaces and exists(self.ctx.catalog.storage, location):  # files of no partition stay, and count
                parameters = appended_parameters(self.ctx.catalog.storage, ttypes.Partition(parameters={}, sd=sd), group.files)
            parts.append(ttypes.Partition(values=values, dbName=struct.dbName, tableName=struct.tableName, sd=sd, parameters=parameters))
        return parts

    def _changed_structs(self, plan: PartitionChanges, existing: dict[str, ttypes.Partition]) -> dict[str, ttypes.Partition]:
        """The replaced partitions (statistics of the written files; a location in an older release's staging
        folder back to ``<table>/k=v``) and the appended ones (statistics counted with what is there)."""
        changed = {}
        for n, group in plan.replaced.items():
            old = existing[n]
            location = old.sd.location
            if staging.staging_ancestor(self.job.root, location) is not None:
                location = f"{self.job.root}/{group.folder}"
            changed[n] = ttypes.Partition(**{**old.__dict__, "sd": located(old.sd, location),
                                             "parameters": written_parameters(old.parameters or {}, group.files)})
        for n, group in plan.appended.items():
            old = existing[n]
            changed[n] = ttypes.Partition(**{**old.__dict__, "parameters": appended_parameters(self.ctx.catalog.storage, old, group.files)})
        return changed

    def _metastore(self, added: list[ttypes.Partition], changed: dict[str, ttypes.Partition], existing: dict[str, ttypes.Partition],
                   dropped: list[str]) -> None:
        """The metastore calls, each written to the log before it is made."""
        job, client = self.job, self.ctx.client
        database, name = job.database, job.table
        keys = [k.name.lower() for k in self.struct.partitionKeys]
        for start in range(0, len(added), self.ctx.partition_batch):
            batch = added[start : start + self.ctx.partition_batch]
            self.changes.expect("ADD_PARTITION", database, name, 1)
            self.log.will("added_partitions", database=database, table=name, names=[make_partition_name(keys, p.values) for p in batch])
            try:
                client.add_partitions(batch)
            except AlreadyExistsError as error:
                self.log.forget_last()  # the partitions are another writer's: the undo must not drop them
                raise WriteConflictError(f"write conflict on {self.ctx.catalog.name}.{database}.{name}: a partition this job adds "
                                         f"was added by another writer since it began ({error}); nothing of this write was "
                                         "applied (run it again)") from error
        if changed:
            self.changes.expect("ALTER_PARTITION", database, name, len(changed))
            self.log.will("altered_partitions", database=database, table=name, old=[encode_struct(existing[n]) for n in changed])
            client.alter_partitions(database, name, list(changed.values()), keep_statistics=True)
        if dropped:
            self.changes.expect("DROP_PARTITION", database, name, len(dropped))
            self.log.will("dropped_partitions", database=database, table=name, old=[encode_struct(existing[n]) for n in dropped])
            client.drop_partitions(database, name, dropped, delete_data=False, if_exists=True)


def _check_conflicts(ctx: DdlContext, job: WriteJob, names: set[str]) -> None:
    touched, other = jobs_of(ctx.catalog).touched_since(job, names or {WHOLE_TABLE})
    if touched:
        shown = ", ".join(sorted(n or "the whole table" for n in touched)[:5])
        raise WriteConflictError(f"write conflict on {ctx.catalog.name}.{job.database}.{job.table}: {shown} "
                                 f"{'was' if len(touched) == 1 else 'were'} written by job {other} since this job began; "
                                 "nothing of this write was applied (run it again)")
