"""What every DDL operation runs in: the catalog, its metastore's write calls, per-table locks, and the
bookkeeping that makes a DDL a catalog event.

A DDL's shape (Impala's catalogd is the model): take the locks of the objects it changes; say which
metastore events it will cause (the follower skips them); make the metastore calls; then, in ``finally``
whether they succeeded or not, drop what the caches hold of those objects (a write that failed halfway
may still have changed something, as Trino's caching metastore assumes); on success record the change in
the version log with source ``ddl`` and tell the other processes of this home. The statement's answer
carries the version after it.
"""

from __future__ import annotations

import contextlib
import functools
import secrets
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Concatenate, ParamSpec

from hms_catalog._locks import TableLocks
from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from hms_catalog.client.writes import MetastoreWrites
from hms_catalog.commits.undo import UndoLog
from hms_catalog.errors import ConfigurationError
from hms_catalog.model import ExternalCatalog

__all__ = ["DdlContext", "DdlOutcome", "Announce", "RecordedChanges", "table_locked", "writes_of"]

Announce = Callable[[str | None, str | None], None]  # (database, table) changed: tell the other processes
_Args = ParamSpec("_Args")


@dataclass(frozen=True)
class DdlOutcome:
    """What a DDL did, in words, and the catalog's version after it."""

    message: str
    version: int
    changes: tuple[str, ...] = ()


def writes_of(catalog: ExternalCatalog) -> MetastoreWrites:
    """The catalog's write calls, or an error saying why it has none (a filesystem catalog)."""
    client = catalog.client
    if not isinstance(client, MetastoreWrites):
        raise ConfigurationError(
            f"catalog '{catalog.name}' serves folders, not a metastore: DDL changes metastores (use ALTER TABLE ... "
            "PROMOTE | SET FORMAT | REFRESH METADATA here, or CREATE TABLE ... LIKE PATH in an hms catalog)")
    return client


class RecordedChanges(list[tuple[ChangeKind, CatalogObject]]):
    """The changes a statement made, and (once recorded) the version of the last: its answer's version.

    :meth:`expect` says, from inside the block, which metastore events a call about to be made will cause
    (a write knows how many partitions it adds only once it has read the table); like the events given to
    :meth:`DdlContext.changing`, they are withdrawn if the block fails, so a stale expectation never
    swallows a later event of another writer."""

    version: int | None = None

    def __init__(self, expect: Callable[[str, str, str, int], None] = lambda *event: None) -> None:
        super().__init__()
        self._expect = expect
        self.recorded: list[Callable[[], None]] = []  # called once the changes are recorded

    def expect(self, event_type: str, database: str, table: str, count: int = 1) -> None:
        if count > 0:
            self._expect(event_type, database, table, count)


@dataclass
class DdlContext:
    catalog: ExternalCatalog
    announce: Announce = lambda database, table: None

    @property
    def locks(self) -> TableLocks:
        return self.catalog.ddl_locks

    @property
    def client(self) -> MetastoreWrites:
        return writes_of(self.catalog)

    @property
    def partition_batch(self) -> int:
        """Partitions per add/drop/alter call (``hive.metastore.partition.batch.size``)."""
        return self.catalog.config.client.partition_batch_size

    @contextlib.contextmanager
    def changing(self, objects: Sequence[tuple[str, str]], *, events: Sequence[tuple[str, str, str, int]] = (),
                 invalidate: Callable[[], None] | None = None, source: ChangeSource = ChangeSource.DDL,
                 ) -> Iterator[RecordedChanges]:
        """Lock ``objects``, expect ``events`` (type, database, table, count), run the block, drop caches in
        ``finally``, and on success record the changes the block appended to the yielded list (as ``source``:
        a DDL, or a write's commit)."""
        caches = self.catalog.caches
        with self.locks.hold(*objects):
            expected = [caches.self_events.expect(*event) for event in events]
            changes = RecordedChanges(lambda *event: expected.append(caches.self_events.expect(*event)))
            succeeded = False
            try:
                yield changes
                succeeded = True
            finally:
                if invalidate is not None:
                    invalidate()
                else:
                    for database, table in objects:
                        if table:
                            caches.invalidate_table(database, table)
                            caches.invalidate_table_names(database)
                        else:
                            caches.invalidate_database(database)
                            caches.invalidate_table_names(None)
                            self.catalog.forget_database(database)
                if not succeeded:
                    for expectation in expected:
                        caches.self_events.withdraw(expectation)
            for kind, obj in changes:
                changes.version = caches.versions.record(kind, obj, source)
            for then in changes.recorded:
                then()
            for database, table in objects:
                self.announce(database, table or None)

    @contextlib.contextmanager
    def undoable(self, changes: RecordedChanges, database: str, table: str) -> Iterator[UndoLog]:
        """A DDL of many metastore calls made whole, inside :meth:`changing` (whose ``changes`` it takes):
        each call written to an undo log before it is made (see :mod:`hms_catalog.commits`). A failure undoes
        the calls before it; a process killed in the middle leaves the log, which the next start undoes, or
        once the block ended (the log marked done) records the change if the kill came before that."""
        log: UndoLog = self.catalog.write_jobs.open_log(f"ddl-{secrets.token_hex(8)}", database, table, source=ChangeSource.DDL.value)
        with log.whole(self.client):
            yield log

        def recorded() -> None:
            log.mark_recorded()
            log.finish()

        changes.recorded.append(recorded)

    def outcome(self, message: str, changes: Sequence[tuple[ChangeKind, CatalogObject]] = ()) -> DdlOutcome:
        return DdlOutcome(message, self.version_of(changes), tuple(f"{kind.value} {obj}" for kind, obj in changes))

    def version_of(self, changes: Sequence[tuple[ChangeKind, CatalogObject]]) -> int:
        """The version of the last change ``changes`` recorded (others' changes may have come since), else the
        catalog's current version (a statement that changed nothing)."""
        recorded = getattr(changes, "version", None)
        return recorded if recorded is not None else self.catalog.versions.current


def table_locked(operation: Callable[Concatenate[DdlContext, str, str, _Args], DdlOutcome]
                 ) -> Callable[Concatenate[DdlContext, str, str, _Args], DdlOutcome]:
    """Hold the table's DDL lock from the operation's first read of the table to its last write.

    An ALTER reads the table's definition, changes it and writes it back whole (the metastore has no
    partial update): read outside the lock, two concurrent ALTERs would each write back what they read
    and one change would be lost. The locks are reentrant, so :meth:`DdlContext.changing` inside takes
    the same lock again.
    """

    @functools.wraps(operation)
    def locked(ctx: DdlContext, database: str, name: str, /, *args: _Args.args, **kwargs: _Args.kwargs) -> DdlOutcome:
        with ctx.locks.hold((database, name)):
            return operation(ctx, database, name, *args, **kwargs)

    return locked
