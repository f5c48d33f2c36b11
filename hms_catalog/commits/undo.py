"""A commit's steps and how to undo each, written down before the step is taken, so that a commit that
fails, or a process killed in the middle of one, leaves the table as it was (or, once the commit was
recorded as done, as it became).

The shape is Trino's ``SemiTransactionalHiveMetastore``: a commit collects reversible steps (renames,
partitions added, altered or dropped, a table altered, created or dropped), then marks itself done, and
only then takes the irreversible ones (deleting what the commit replaced). Each step is appended to the
log *before* it is taken: a step that may or may not have happened when the process died is undone
anyway, so every undo is idempotent (a rename back only when the target is there and the source is not,
``if_exists`` drops, ``if_not_exists`` adds, a restore of the old definition).

A killed process's last call may still be running in the metastore when the next start looks: the
metastore finishes a call whose client went away, and nothing tells when. An undo that reverses what that
call does could run before it lands, and the call land after the undo. A change whose whole intent is written
down first (:meth:`UndoLog.will_complete`: ADD PARTITION's partitions, a write's commit, a RENAME) is
therefore completed by a restart instead of undone (:mod:`hms_catalog.commits.completion` says why that
converges whatever the abandoned call does): the renames written down are taken where they were not, then
the change's calls are made again as their abandoned twins would leave the table. A failure in a running
process is still undone (its calls have answered), and a change whose undo began is undone by a restart too.

The log is a JSON file in the process's commit folder (see :mod:`hms_catalog.commits.recovery`), replaced
atomically at each step. Without a folder (a catalog built in memory) it is kept in memory only: a
failure is still undone, a killed process's commit is not.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.writes import MetastoreWrites
from hms_catalog.commits.completion import COMPLETIONS
from hms_catalog.commits.rename_completion import follow_path
from hms_catalog.commits.structs import decode_struct, encode_struct
from hms_catalog.errors import AlreadyExistsError, NotFoundError
from hms_catalog.storage import files
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["UndoLog", "encode_struct", "decode_struct"]


@dataclass
class UndoLog:
    """One commit's log: a JSON-lines file, one line a step, appended and synced before the step is taken
    (a line cut short by a crash was not taken). Renames are written down in batches, one line for all the
    renames of one phase, so a commit of thousands of partitions costs a handful of syncs. ``path`` None
    keeps the log in memory only."""

    path: Path | None
    table: tuple[str, str]
    steps: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False
    deletes: list[str] = field(default_factory=list)  # taken after the commit is done, in this order
    recorded: bool = False  # the change is in the catalog's log (a restart that finishes the commit records it otherwise)
    staging: str = ""  # the job's staging folder: deleted with what it holds once a killed process's commit is undone
    source: str = "write"  # what made the change (a ChangeSource value), for a restart that records it
    closed: Callable[[], None] = lambda: None  # told when the log is removed
    storage: StorageResolver = field(default_factory=StorageResolver)  # the catalog's: how its files are reached
    forward: dict[str, Any] | None = None  # what completes the change, taken by a restart instead of the undo
    _moves: list[tuple[str, str]] = field(default_factory=list)  # renames written down with the next step

    @classmethod
    def begin(cls, folder: Path | None, name: str, database: str, table: str, *, staging: str = "", source: str = "write",
              closed: Callable[[], None] = lambda: None, storage: StorageResolver) -> UndoLog:
        log = cls(None if folder is None else folder / f"{name}.jsonl", (database, table), staging=staging, source=source,
                  closed=closed, storage=storage)
        log._append({"table": [database, table], "staging": staging, "source": source})
        return log

    def will_move(self, source: str, target: str) -> None:
        """Rename ``source`` to ``target`` (a file or a folder) with the next step written down, or at
        :meth:`move_now`; renames keep their order."""
        self._moves.append((source, target))

    def move_now(self) -> None:
        """Write down the renames asked for so far, in one line, then take them in order. A folder on an
        object store is written down object by object (its move is a copy and a delete of each), so an undo
        after a failure half-way puts back exactly the objects that moved; the renames of one batch must be
        independent (none moves what another moves or makes), as a commit's are."""
        self._take(self._write_moves())

    def _write_moves(self) -> list[tuple[tuple[str, str], list[tuple[str, str]] | None]]:
        """Write down the renames asked for so far (each folder on an object store as its objects), not yet taken."""
        if not self._moves:
            return []
        moves, self._moves = self._moves, []
        expanded = [(pair, files.object_moves(self.storage, *pair)) for pair in moves]
        folders = [list(pair) for pair, objects in expanded if objects is not None]
        listed = [list(each) for pair, objects in expanded for each in (objects if objects is not None else [pair])]
        self._step({"op": "moved", "moves": listed, **({"folders": folders} if folders else {})})
        return expanded

    def _take(self, expanded: list[tuple[tuple[str, str], list[tuple[str, str]] | None]]) -> None:
        for (source, target), objects in expanded:
            if objects is None:
                files.move(self.storage, source, target)
            else:
                files.move_objects(self.storage, source, objects)

    def will(self, op: str, **step: Any) -> None:
        """Write down a step about to be taken (undone on failure whether or not it was taken)."""
        self.move_now()
        self._step({"op": op, **step})

    def will_complete(self, op: str, **intent: Any) -> None:
        """Write down the whole of the change before its first call: a restart after a kill completes it (see
        the module's docstring) rather than undoing it. The renames asked for so far are written down before it
        and taken after it, so a restart that finds the intent finds every rename the change takes."""
        moves = self._write_moves()
        self.forward = {"op": op, **intent}
        self._append({"forward": self.forward})
        self._take(moves)

    def undo_instead(self) -> None:
        """The change is being undone (it failed in a running process): a restart that finds the log, its undo
        cut short, goes on undoing it rather than completing it."""
        if self.forward is not None:
            self.forward = None
            self._append({"forward": None})

    def complete(self, client: MetastoreWrites) -> bool:
        """Complete a killed process's change from its written-down intent: its renames taken where they were
        not, then its calls (:data:`~hms_catalog.commits.completion.COMPLETIONS`); the log is then marked done,
        with the intent's deletes and the staging folder to take. False when the change cannot happen any more
        (its table is gone): the log is then not marked done, and the change is not the catalog's to log."""
        assert self.forward is not None, "only a change written down with will_complete is completed"
        for step in self.steps:
            if step["op"] == "moved":
                _moved_again(self.storage, step)
        if not COMPLETIONS[self.forward["op"]](client, self.forward, self.storage):
            return False
        self.deletes = [*self.forward.get("deletes", []), *([self.staging] if self.staging else [])]
        self.mark_done()
        return True

    def forget_last(self) -> None:
        """The last step written down was not taken and must not be undone (it failed without effect)."""
        self.steps.pop()
        self._append({"forget": True})

    def delete_later(self, location: str) -> None:
        """Delete ``location`` once the commit is done."""
        self.deletes.append(location)

    def mark_done(self) -> None:
        """The commit is whole: from here a restart finishes it (its deletes) instead of undoing it."""
        self.move_now()
        self.done = True
        self._append({"done": True, "deletes": self.deletes})

    def mark_recorded(self) -> None:
        self.recorded = True
        self._append({"recorded": True})

    @contextlib.contextmanager
    def whole(self, client: MetastoreWrites) -> Iterator[None]:
        """The block's steps, whole or not at all: the log is marked done when the block ends, and every step
        written down is undone when it fails (an undo that fails too is told in a note of the error)."""
        try:
            yield
            self.mark_done()
        except BaseException as error:
            try:
                self.undo_instead()
                self.undo(client)
            except Exception as failure:  # noqa: BLE001 - reported with the error that made the undo necessary
                error.add_note(str(failure))
            raise

    def undo(self, client: MetastoreWrites) -> None:
        """Undo every step written down, newest first; the log is removed once all were undone."""
        self._moves = []
        failures: list[str] = []
        for step in reversed(self.steps):
            try:
                if step["op"] == "moved":
                    _moved(self.storage, step)
                else:
                    _UNDO[step["op"]](client, step)
            except Exception as error:  # noqa: BLE001 - every step is tried; the failures are raised together
                failures.append(f"{step['op']}: {error}")
        if failures:
            raise RuntimeError(f"undoing a commit of {'.'.join(self.table)} failed at {len(failures)} step(s) "
                               f"(first: {failures[0]}); the log {self.path} is kept and is tried again at the next start")
        self.remove()

    def finish(self) -> None:
        """Take the deletes of a commit that is done; the log is removed once they are."""
        for location in self.deletes:
            files.delete_any(self.storage, location)
        self.remove()

    def remove(self) -> None:
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        self.closed()

    def _step(self, step: dict[str, Any]) -> None:
        self.steps.append(step)
        self._append(step)

    def _append(self, record: dict[str, Any]) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
            out.flush()
            os.fsync(out.fileno())

    @classmethod
    def load(cls, path: Path, storage: StorageResolver) -> UndoLog:
        """The log as a killed process left it; a last line cut short is a step that was not taken."""
        records = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                break
        header: dict[str, Any] = records[0] if records else {"table": ["", ""]}
        log = cls(path, (header["table"][0], header["table"][1]), staging=header.get("staging", ""),
                  source=header.get("source", "write"), storage=storage)
        for record in records[1:]:
            if "op" in record:
                log.steps.append(record)
            elif "forward" in record:
                log.forward = record["forward"]
            elif record.get("forget"):
                log.steps.pop()
            elif record.get("done"):
                log.done, log.deletes = True, list(record["deletes"])
            elif record.get("recorded"):
                log.recorded = True
        return log


def _moved(storage: StorageResolver, step: dict[str, Any]) -> None:
    """Rename back, newest first, each that was taken. An empty folder where a source was is taken away
    first: the metastore makes a partition's folder when a partition whose folder is missing is added (a
    later step's undo re-adds a dropped partition before this one moves its files back)."""
    for source, target in reversed(step["moves"]):
        if not files.exists(storage, target):
            continue
        if files.exists(storage, source):
            if not files.is_empty_folder(storage, source):
                continue
            files.delete_folder(storage, source)
        files.move(storage, target, source)
    for _, target in step.get("folders", []):  # an object store's folders moved object by object: their markers
        files.delete_if_no_objects(storage, target)


def _moved_again(storage: StorageResolver, step: dict[str, Any]) -> None:
    """Take, in order, each rename not taken yet: its source still there and its target not (a kill in the middle
    of the step's renames); an object store's emptied folders then lose their markers, as the move does."""
    for source, target in step["moves"]:
        if files.exists(storage, source) and not files.exists(storage, target):
            files.move(storage, source, target)
    for source, _ in step.get("folders", []):
        files.delete_if_no_objects(storage, source)


def _added_partitions(client: MetastoreWrites, step: dict[str, Any]) -> None:
    client.drop_partitions(step["database"], step["table"], step["names"], delete_data=False, if_exists=True)


def _altered_partitions(client: MetastoreWrites, step: dict[str, Any]) -> None:
    old = [decode_struct(text, ttypes.Partition) for text in step["old"]]
    client.alter_partitions(step["database"], step["table"], old, keep_statistics=True)


def _dropped_partitions(client: MetastoreWrites, step: dict[str, Any]) -> None:
    client.add_partitions([decode_struct(text, ttypes.Partition) for text in step["old"]], if_not_exists=True)


def _altered_table(client: MetastoreWrites, step: dict[str, Any]) -> None:
    client.alter_table(step["database"], step["table"], decode_struct(step["old"], ttypes.Table), keep_statistics=True)


def _created_table(client: MetastoreWrites, step: dict[str, Any]) -> None:
    with contextlib.suppress(NotFoundError):
        client.drop_table(step["database"], step["table"], delete_data=False)


def _dropped_table(client: MetastoreWrites, step: dict[str, Any]) -> None:
    with contextlib.suppress(AlreadyExistsError):
        client.create_table(decode_struct(step["old"], ttypes.Table))
    partitions = [decode_struct(text, ttypes.Partition) for text in step.get("partitions", [])]
    for start in range(0, len(partitions), 1000):
        client.add_partitions(partitions[start : start + 1000], if_not_exists=True)


def _renamed_table(client: MetastoreWrites, step: dict[str, Any]) -> None:
    """Rename back: the metastore moves a managed table's folder back as it moved it (its location is sent
    unchanged), then a data source table's ``path`` follows it. Either half may already be done."""
    from hms_catalog.client.calls import MetastoreCalls

    reads = cast(MetastoreCalls, client)  # a catalog's client reads as well as writes
    try:
        current = reads.get_table(step["new_database"], step["new_table"])
    except NotFoundError:
        current = None
    if current is not None:
        back = ttypes.Table(**{**current.__dict__, "dbName": step["database"], "tableName": step["table"]})
        client.alter_table(step["new_database"], step["new_table"], back)
    follow_path(client, step["database"], step["table"])


_UNDO: dict[str, Callable[[MetastoreWrites, dict[str, Any]], None]] = {
    "added_partitions": _added_partitions, "altered_partitions": _altered_partitions,
    "dropped_partitions": _dropped_partitions, "altered_table": _altered_table, "created_table": _created_table,
    "dropped_table": _dropped_table, "renamed_table": _renamed_table,
}
