"""A catalog's versions and change log kept in a store that several service replicas share.

The store numbers every change (one transaction allocates the version and writes the row), so a change
has the same number on every replica, and the log outlives a restart. This process keeps a mirror of the
newest entries for ``SHOW CHANGES`` and the long poll, and catches up with the store:

- after each change it records itself (its own entry, and any others' logged in between);
- whenever a reader asks for the log (so every replica answers the same);
- every fraction of a second, from the replica's store follower thread, which is how another replica's
  REFRESH, DDL or write reaches this one: each entry recorded elsewhere is handed to the listeners (the
  catalog drops what it cached of the object).

Load tickets stay local (:attr:`ticket`): what spoils a load in flight is what this process cut, and every
change absorbed from the store cuts here too, under a local number.

Changes a load finds (a reload that differs) are recorded while the cache holds its lock, so they wait in
an outbox and reach the store on the next flush, never with a lock held. When the store cannot be reached
a change stays in the outbox (caches here are already dropped) and goes in when it is back: lost nowhere.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from hms_catalog.cache.versions import (
    CHANGE_LOG_CAPACITY,
    CatalogObject,
    CatalogVersions,
    Change,
    ChangeKind,
    ChangeLog,
    ChangeSource,
)
from hms_catalog.errors import StoreUnavailableError

__all__ = ["SharedChangeLog", "SharedCatalogVersions", "PendingChange"]

_log = logging.getLogger(__name__)

PendingChange = tuple[ChangeKind, CatalogObject, ChangeSource]
Listener = Callable[[Sequence[Change]], None]


class SharedChangeLog(Protocol):
    """What the store offers a catalog's versions (see :class:`hms_catalog.state.journal.ChangeJournal`)."""

    replica: str

    def append(self, catalog_id: str, changes: Sequence[PendingChange], *, position: object | None = None) -> int:
        """Log ``changes`` in one transaction; the version of the last. ``position``: a lease's fencing
        token and event id, checked and stored in the same transaction (LeaseLostError when taken over)."""

    def after(self, catalog_id: str, version: int, limit: int) -> tuple[list[tuple[Change, str]], int]:
        """The newest ``limit`` changes above ``version`` (oldest first, each with the replica that logged
        it) and the catalog's newest version."""


class SharedCatalogVersions(CatalogVersions):
    """:class:`CatalogVersions` whose log is the store's (``shared``), for the catalog ``catalog_id``."""

    def __init__(self, shared: SharedChangeLog, catalog_id: str, capacity: int = CHANGE_LOG_CAPACITY,
                 fingerprints: int = 100_000) -> None:
        super().__init__(capacity, fingerprints)
        self.shared = shared
        self.catalog_id = catalog_id
        self._current = 0  # the newest store version absorbed
        self._started = False
        self._outbox: list[PendingChange] = []
        self._flushing = threading.RLock()  # one flush at a time keeps the outbox's order in the store
        self._fenced = threading.local()
        self._listeners: list[Listener] = []
        # The newest version that changed each catalog, database or table (anything of a table counts as the
        # table): what a table's or database's version is on every replica alike (If-Match across replicas).
        self._touched: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._touched_floor = 0

    @property
    def current(self) -> int:
        with self._lock:
            return self._current

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` with each batch of changes other replicas logged, as they are absorbed."""
        self._listeners.append(listener)

    def record(self, kind: ChangeKind, obj: CatalogObject, source: ChangeSource) -> int:
        """Cut here at once; log in the store (now, or with the fenced batch this thread is in)."""
        return self.record_all(((kind, obj),), source)

    def record_all(self, changes: Sequence[tuple[ChangeKind, CatalogObject]], source: ChangeSource) -> int:
        """:meth:`record` of several changes in one store transaction (a follower's batch of events)."""
        pending = [(kind, obj, source) for kind, obj in changes]
        buffer: list[PendingChange] | None = getattr(self._fenced, "buffer", None)
        with self._lock:
            for kind, obj, _ in pending:
                self._tick += 1
                self._note(kind, obj, source, self._tick)
        if buffer is not None:
            buffer.extend(pending)
            return self.current
        try:
            with self._flushing:  # after whatever waits in the outbox, which was recorded before
                self.flush()
                version = self.shared.append(self.catalog_id, pending)
        except StoreUnavailableError as error:  # kept in the outbox; the follower thread tries again
            with self._lock:
                self._outbox.extend(pending)
            _log.warning("catalog %s: the change log is not reachable, %s waits: %s", self.catalog_id,
                         ", ".join(str(obj) for _, obj, _ in pending[:3]) + (" ..." if len(pending) > 3 else ""), error)
            return self.current
        self.catch_up()
        return version

    @contextlib.contextmanager
    def fenced(self, position: object) -> Iterator[None]:
        """Log what this thread records in the block as one transaction with ``position`` (a lease's fencing
        token and the event applied): the event and its changes are stored together or not at all."""
        buffer: list[PendingChange] = []
        self._fenced.buffer = buffer
        try:
            yield
        finally:
            self._fenced.buffer = None
        self.shared.append(self.catalog_id, buffer, position=position)
        self.catch_up()

    def changes(self, since: int = 0) -> ChangeLog:
        self.flush()
        return super().changes(since)

    def wait_for_change(self, since: int, timeout: float) -> ChangeLog:
        self.flush()
        return super().wait_for_change(since, timeout)

    def pending(self) -> bool:
        """Whether changes wait in the outbox for the store."""
        with self._lock:
            return bool(self._outbox)

    def flush(self) -> None:
        """Log the outbox in the store, then catch up with what every replica logged."""
        with self._flushing:
            with self._lock:
                pending, self._outbox = self._outbox, []
            if pending:
                try:
                    self.shared.append(self.catalog_id, pending)
                except BaseException:
                    with self._lock:
                        self._outbox[:0] = pending
                    raise
        self.catch_up()

    def catch_up(self) -> list[Change]:
        """Absorb the store's changes newer than ours; those other replicas logged go to the listeners."""
        with self._flushing:
            with self._lock:
                since = self._current
            found, newest = self.shared.after(self.catalog_id, since, self.capacity)
            elsewhere: list[Change] = []
            with self._lock:
                first = not self._started
                self._started = True
                if found and found[0][0].version > self._current + 1:
                    self._forgotten = found[0][0].version - 1  # older ones were bounded away (or never here)
                for change, replica in found:
                    if change.version <= self._current:
                        continue
                    self._current = change.version
                    self._append(change)
                    self._touch(change)
                    if replica != self.shared.replica and not first:
                        self._tick += 1
                        self._note(change.kind, change.object, change.source, self._tick, elsewhere=True)
                        elsewhere.append(change)
                if first and not found:
                    self._current = self._forgotten = max(self._current, newest)
                if found:
                    self._logged.notify_all()  # once for all absorbed: a batch logged together wakes a long poll once
        for listener in self._listeners if elsewhere else ():
            listener(elsewhere)
        return elsewhere

    def changed_at(self, obj: CatalogObject) -> int | None:
        with self._lock:
            found = max(self._touched_floor, self._touched.get(("", ""), 0))
            if obj.database:
                found = max(found, self._touched.get((obj.database, ""), 0))
            if obj.table:
                found = max(found, self._touched.get((obj.database, obj.table), 0))
            return found

    def _touch(self, change: Change) -> None:
        """Remember ``change`` as the newest of its table, database or catalog (callers hold the lock)."""
        obj = change.object
        key = ("", "") if obj.kind in ("catalog", "databases") else (obj.database, obj.table)
        self._touched[key] = change.version
        self._touched.move_to_end(key)
        while len(self._touched) > self.capacity:
            _, forgotten = self._touched.popitem(last=False)
            self._touched_floor = max(self._touched_floor, forgotten)

    def _newest(self) -> int:
        return self._current

    def _record(self, kind: ChangeKind, obj: CatalogObject, source: ChangeSource) -> int:
        """A change a load found, under the lock: cut now, log on the next flush."""
        self._tick += 1
        self._note(kind, obj, source, self._tick)
        self._outbox.append((kind, obj, source))
        return self._tick
