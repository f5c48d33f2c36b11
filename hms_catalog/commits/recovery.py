"""Commits a killed process left unfinished: undone, or finished when they were marked done.

Every process keeps its commits' undo logs in a folder of its own, ``<catalog commits>/<pid>/`` (the
catalog's commit folder is ``<home>/commits/<catalog id>/``), so that processes sharing a home (two
``serve`` replicas, a notebook) never touch a commit another one is making. A folder whose process is
gone is taken over by the next that looks: at a service's start, before a table's next write, and by
RECOVER PARTITIONS, always before the staging folders of dead jobs are deleted (an unfinished commit's
set-aside files live there).

A log marked done has its deletes taken, and its change recorded when the process died before recording
it; a log whose whole change was written down first (ADD PARTITION's, a write's commit, a RENAME) is
completed and recorded the same way (:mod:`hms_catalog.commits.completion` says why), or dropped with its
staging folder when its table is gone; any other is undone step by step, newest first. Either way the
table's caches are dropped.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from hms_catalog._locks import TableLocks
from hms_catalog.cache import CatalogCaches
from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.client.writes import MetastoreWrites
from hms_catalog.commits.undo import UndoLog
from hms_catalog.errors import ConfigurationError
from hms_catalog.storage import files
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["process_folder", "finish_unfinished", "RecoveringCatalog"]

_log = logging.getLogger(__name__)


class RecoveringCatalog(Protocol):
    """What recovery needs of a catalog (an ExternalCatalog): its locks, caches and metastore client."""

    @property
    def name(self) -> str: ...
    @property
    def ddl_locks(self) -> TableLocks: ...
    @property
    def caches(self) -> CatalogCaches: ...
    @property
    def client(self) -> object: ...
    @property
    def storage(self) -> StorageResolver: ...


def process_folder(root: Path | None) -> Path | None:
    """This process's folder of undo logs under a catalog's commit folder."""
    return None if root is None else root / str(os.getpid())


def finish_unfinished(catalog: RecoveringCatalog, root: Path | None, running: set[str],
                      table: tuple[str, str] | None = None) -> int:
    """Finish or undo the unfinished commits under ``root`` (only ``table``'s when given), leaving this
    process's ``running`` jobs alone; how many there were."""
    count = 0
    for log in _unfinished(root, running, catalog.storage):
        database, name = log.table
        if table is not None and (database, name) != table:
            continue
        with catalog.ddl_locks.hold((database, name)):
            try:
                if log.done:
                    _record_and_finish(catalog, log)
                elif log.forward is not None:
                    _log.warning("completing the unfinished change %s of %s.%s.%s", log.path, catalog.name, database, name)
                    if not isinstance(catalog.client, MetastoreWrites):
                        raise ConfigurationError(f"catalog '{catalog.name}' has no metastore to complete {log.path} in")
                    if log.complete(catalog.client):
                        _record_and_finish(catalog, log)
                    else:
                        _drop(catalog, log)
                else:
                    _log.warning("undoing the unfinished commit %s of %s.%s.%s", log.path, catalog.name, database, name)
                    if not isinstance(catalog.client, MetastoreWrites):
                        raise ConfigurationError(f"catalog '{catalog.name}' has no metastore to undo {log.path} in")
                    log.undo(catalog.client)
                    _drop(catalog, log)
            finally:
                catalog.caches.invalidate_table(database, name)
        count += 1
    return count


def _record_and_finish(catalog: RecoveringCatalog, log: UndoLog) -> None:
    """Log a done change the dead process had not logged, mark that in the log, then take its deletes and
    remove it: a kill in between logs it again at worst, never not at all."""
    if not log.recorded:
        for kind, obj in _changes_of(log):
            catalog.caches.versions.record(kind, obj, ChangeSource(log.source))
        log.mark_recorded()
    log.finish()


def _drop(catalog: RecoveringCatalog, log: UndoLog) -> None:
    """Remove a log whose change was undone or cannot happen, with the dead job's staging folder (its files,
    and what it had set aside, moved back by the undo)."""
    log.remove()
    if log.staging:
        files.delete_folder(catalog.storage, log.staging)


def _changes_of(log: UndoLog) -> list[tuple[ChangeKind, CatalogObject]]:
    """What a finished log's change logs as, the way the statement would have: a RENAME drops the old name
    and adds the new one, an ADD PARTITION changes the table's partitions; any other change is a change of
    its table."""
    forward = log.forward or {}
    if forward.get("op") == "add_partitions":
        return [(ChangeKind.CHANGED, CatalogObject("partitions", *log.table))]
    if forward.get("op") == "rename_table":
        return [(ChangeKind.DROPPED, CatalogObject.for_table(forward["database"], forward["table"])),
                (ChangeKind.ADDED, CatalogObject.for_table(forward["new_database"], forward["new_table"]))]
    for step in log.steps:
        if step["op"] == "renamed_table":
            return [(ChangeKind.DROPPED, CatalogObject.for_table(step["database"], step["table"])),
                    (ChangeKind.ADDED, CatalogObject.for_table(step["new_database"], step["new_table"]))]
    return [(ChangeKind.CHANGED, CatalogObject.for_table(*log.table))]


def _unfinished(root: Path | None, running: set[str], storage: StorageResolver) -> Iterator[UndoLog]:
    if root is None or not root.is_dir():
        return
    own = str(os.getpid())
    for folder in sorted(root.iterdir()):
        if not folder.is_dir() or (folder.name != own and _alive(folder.name)):
            continue
        for path in sorted(folder.glob("*.jsonl")):
            if folder.name == own and path.stem in running:
                continue
            yield UndoLog.load(path, storage)
        if folder.name != own:
            with contextlib.suppress(OSError):
                folder.rmdir()  # empty once its logs are done


def _alive(pid: str) -> bool:
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
