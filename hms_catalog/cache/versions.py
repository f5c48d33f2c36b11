"""One catalog's version counter, change log and delete log.

Every change the catalog learns of (an event, a REFRESH, a load that found something different) takes
the next number of one monotonically increasing counter, and every cached value is stamped with the
version at which it was loaded. This gives users a change log (``SHOW CHANGES``) and gives loads a safe
way to know whether what they fetched is already stale.

A load reads the counter before it asks the metastore (its *ticket*). When it has its answer, it may
store it only if nothing on the object's line (the catalog, its database, its table, the object itself)
was dropped or invalidated after the ticket: a table dropped while its definition was being fetched is
not brought back by that fetch. That is the delete log's job, as in Impala's catalog, and it is precise:
a REFRESH of one table does not spoil loads of others.

Both logs are bounded. A ticket older than the oldest forgotten cut is treated as spoiled (the load
still answers its caller; it just is not cached), so bounding never makes the check unsafe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple

__all__ = [
    "CatalogObject", "CATALOG", "ChangeKind", "ChangeSource", "Change", "ChangeLog", "CatalogVersions",
    "CHANGE_LOG_CAPACITY", "DIFFED_LIST_LIMIT", "Members",
]

CHANGE_LOG_CAPACITY = 10_000
# Name lists longer than this are remembered by a hash only (a 100,000-partition table must not keep
# 100,000 names for the change log): a reload that differs logs the list as changed, not each name.
DIFFED_LIST_LIMIT = 10_000


class Members(NamedTuple):
    """A list of names as :meth:`CatalogVersions.loaded` compares it with the last: the names (the loaded list
    itself, not a copy) and what makes the object a name stands for, asked only for names that appeared or
    vanished. Making an object for every name of a 1,001-database list was a sixth of a cold listing's time."""

    names: tuple[Hashable, ...]
    member: Callable[[Any], CatalogObject]


class CatalogObject(NamedTuple):
    """Something a catalog caches: the catalog itself, a database, a table, or a part of a table.

    ``kind``: catalog, databases (the list of names), database, tables (a database's list of names),
    table, partitions (a table's partition names), partition, files (one directory's listing).
    """

    kind: str
    database: str = ""
    table: str = ""
    detail: str = ""

    def lineage(self) -> tuple[CatalogObject, ...]:
        """The object and every object whose drop or invalidation also makes it stale, outermost first."""
        line = [CATALOG]
        if self.database and self.kind != "database":
            line.append(CatalogObject("database", self.database))
        if self.table and self.kind != "table":
            line.append(CatalogObject("table", self.database, self.table))
        if self != CATALOG:
            line.append(self)
        return tuple(line)

    def __str__(self) -> str:
        if self.kind == "catalog":
            return "catalog"
        if self.kind == "databases":
            return "databases"
        if self.kind in ("database", "tables"):
            return f"{self.kind} {self.database}"
        name = f"{self.database}.{self.table}"
        if self.kind == "table":
            return f"table {name}"
        if self.kind == "partitions":
            return f"partitions {name}"
        return f"{self.kind} {name} {self.detail}".rstrip()

    @staticmethod
    def for_database(database: str) -> CatalogObject:
        return CatalogObject("database", database)

    @staticmethod
    def for_table(database: str, table: str) -> CatalogObject:
        return CatalogObject("table", database, table)


CATALOG = CatalogObject("catalog")


class ChangeKind(str, Enum):
    ADDED = "added"
    CHANGED = "changed"
    DROPPED = "dropped"
    INVALIDATED = "invalidated"


class ChangeSource(str, Enum):
    EVENT = "event"
    REFRESH = "refresh"
    LOAD = "load"
    DDL = "ddl"
    WRITE = "write"
    THRIFT = "thrift"  # a change a client made through the service's Hive Metastore thrift endpoint
    ICEBERG_REST = "iceberg-rest"  # a change a client made through the service's Iceberg REST catalog endpoint


# Sources whose change was made (or learnt of from an event) and logged as such, not found by a load.
_MADE_HERE = frozenset((ChangeSource.EVENT, ChangeSource.DDL, ChangeSource.WRITE, ChangeSource.THRIFT,
                        ChangeSource.ICEBERG_REST))


class Change(NamedTuple):
    version: int
    kind: ChangeKind
    object: CatalogObject
    source: ChangeSource


@dataclass(frozen=True)
class ChangeLog:
    """Changes after some version, with what a reader needs to know whether it has missed any.

    ``oldest``: the oldest version still in the log (0 when it is empty). A reader who last saw version
    ``n`` has missed changes when ``truncated`` is true: changes after ``n`` were dropped to bound the log.
    """

    changes: tuple[Change, ...]
    oldest: int
    current: int
    truncated: bool


class CatalogVersions:
    """The version counter, the bounded change log and the bounded delete log of one catalog."""

    def __init__(self, capacity: int = CHANGE_LOG_CAPACITY, fingerprints: int = 100_000) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self._lock = threading.Lock()
        self._logged = threading.Condition(self._lock)  # notified on every logged change
        self._tick = 0  # this process's counter: load tickets, cuts and cache stamps
        self._log: deque[Change] = deque(maxlen=capacity)
        self._forgotten = 0  # the newest version dropped from the change log
        self._cuts: OrderedDict[CatalogObject, int] = OrderedDict()  # drop/invalidation versions
        self._cut_floor = 0  # the newest cut forgotten to bound the delete log
        self._fingerprints: OrderedDict[CatalogObject, Hashable] = OrderedDict()
        self._fingerprint_capacity = fingerprints

    @property
    def current(self) -> int:
        """The catalog's version: the newest change logged (or, in one process, any version handed out)."""
        with self._lock:
            return self._tick

    @property
    def ticket(self) -> int:
        """Read before a load; :meth:`spoiled` tells afterwards whether a drop or invalidation came since.

        The same number as :attr:`current` while the log is this process's own; a log shared by replicas
        numbers its changes in the store, and tickets stay local.
        """
        with self._lock:
            return self._tick

    def record(self, kind: ChangeKind, obj: CatalogObject, source: ChangeSource) -> int:
        """Log a change; drops and invalidations also cut the object (spoiling loads in flight)."""
        return self.record_all(((kind, obj),), source)

    def record_all(self, changes: Sequence[tuple[ChangeKind, CatalogObject]], source: ChangeSource) -> int:
        """Log ``changes`` in order, together: a follower's batch of events is one announcement, so a long poll
        wakes once and finds all of it, never the first half. Returns the newest version."""
        with self._lock:
            for kind, obj in changes:
                self._record(kind, obj, source)
            self._logged.notify_all()
            return self._tick

    def cut(self, obj: CatalogObject) -> int:
        """Spoil the loads in flight of ``obj`` and everything under it, without logging a change."""
        with self._lock:
            self._tick += 1
            self._cut(obj, self._tick)
            return self._tick

    def spoiled(self, obj: CatalogObject | None, ticket: int) -> bool:
        """Whether a load of ``obj`` that began at ``ticket`` must not be stored (Impala's
        wasObjectRemovedAfter): something on its line was dropped or invalidated after the ticket."""
        with self._lock:
            # The usual answer, found without building the object's lineage: no cut at all since the ticket. Every cut
            # moves to the end of _cuts with the newest version, so the last one is the newest cut there has been.
            if not self._cuts or ticket >= next(reversed(self._cuts.values())):
                return False
            if ticket < self._cut_floor:
                return True
            line = (CATALOG,) if obj is None else obj.lineage()
            return any(self._cuts.get(each, 0) > ticket for each in line)

    def loaded(self, obj: CatalogObject | None, fingerprint: Hashable | None = None,
               children: Members | Iterable[CatalogObject] | None = None) -> int:
        """The version to stamp a stored load with; logs what the load found changed since the last one.

        ``fingerprint``: a hashable summary of the loaded value; a reload whose fingerprint differs from
        the last one is logged as *changed*. ``children``: for a list of names, the objects it names (or the
        names and what makes each one's object, :class:`Members`); names that appeared or vanished since the
        last load are logged as added or dropped.
        """
        with self._lock:
            self._tick += 1
            version = self._tick
            if obj is None or fingerprint is None:
                return version
            members = None
            if children is not None:
                members = children if isinstance(children, Members) else Members(tuple(children), _itself)
                if len(members.names) > DIFFED_LIST_LIMIT:  # too long to keep: remember a hash, log the list as changed
                    fingerprint, members = hash(members.names), None
            previous = self._fingerprints.get(obj)
            self._remember(obj, fingerprint if members is None else members)
            if previous is None:
                return version
            if members is not None and not isinstance(previous, Members):  # the last list was too long to keep
                if hash(members.names) != previous:
                    self._record(ChangeKind.CHANGED, obj, ChangeSource.LOAD)
            elif members is not None and isinstance(previous, Members):  # both lists kept: diff them
                now, before = set(members.names), set(previous.names)
                for child in sorted(members.member(name) for name in now - before):
                    self._record(ChangeKind.ADDED, child, ChangeSource.LOAD)
                for child in sorted(previous.member(name) for name in before - now):
                    self._record(ChangeKind.DROPPED, child, ChangeSource.LOAD)
            elif previous != fingerprint:
                self._record(ChangeKind.CHANGED, obj, ChangeSource.LOAD)
            self._logged.notify_all()
            return version

    def changes(self, since: int = 0) -> ChangeLog:
        """The logged changes with a version above ``since``, oldest first."""
        with self._lock:
            found = tuple(change for change in self._log if change.version > since)
            oldest = self._log[0].version if self._log else 0
            return ChangeLog(found, oldest, self._newest(), truncated=since < self._forgotten)

    def wait_for_change(self, since: int, timeout: float) -> ChangeLog:
        """:meth:`changes` after ``since``, as soon as there is one, or after ``timeout`` seconds with none.

        A long poll: how a client keeps its own cache coherent without asking again and again.
        """
        with self._logged:
            self._logged.wait_for(lambda: bool(self._log) and self._log[-1].version > since, timeout=max(0.0, timeout))
        return self.changes(since)

    def changed_at(self, obj: CatalogObject) -> int | None:
        """The version of the newest logged change of ``obj`` or anything it lies in, where that is what a
        version of it means (a log shared by replicas); None: its cached value's stamp says it."""
        return None

    def removed_at(self, obj: CatalogObject) -> int | None:
        """The version of the newest drop or invalidation of ``obj`` itself, if the delete log has it."""
        with self._lock:
            return self._cuts.get(obj)

    def _newest(self) -> int:
        """The version answers report as current (callers hold the lock)."""
        return self._tick

    def _record(self, kind: ChangeKind, obj: CatalogObject, source: ChangeSource) -> int:
        self._tick += 1
        version = self._tick
        self._append(Change(version, kind, obj, source))
        self._note(kind, obj, source, version)
        return version

    def _append(self, change: Change) -> None:
        """Add ``change`` to the bounded log (callers hold the lock, and wake the long polls once they have
        appended everything they log together)."""
        if len(self._log) == self._log.maxlen:
            self._forgotten = self._log[0].version
        self._log.append(change)

    def _note(self, kind: ChangeKind, obj: CatalogObject, source: ChangeSource, tick: int, *, elsewhere: bool = False) -> None:
        """What a change means for loads here: spoil those in flight; forget fingerprints it makes stale.

        ``elsewhere``: the change was logged by another process sharing the log, so no load of this one may
        log it again either."""
        if kind in (ChangeKind.DROPPED, ChangeKind.INVALIDATED, ChangeKind.CHANGED):
            self._cut(obj, tick)
        logged = elsewhere or source in _MADE_HERE
        if logged or kind is ChangeKind.DROPPED:
            self._fingerprints.pop(obj, None)  # gone, or logged already: the next load compares with nothing
        if logged:
            # Nor may the next load of the list naming it log the same addition or drop again.
            parent = _parent_list(obj)
            if parent is not None:
                self._fingerprints.pop(parent, None)

    def _cut(self, obj: CatalogObject, version: int) -> None:
        if obj == CATALOG:
            # Everything is spoiled: older cuts say nothing more, and keeping them would only cost memory.
            self._cut_floor = max(self._cut_floor, max(self._cuts.values(), default=0))
            self._cuts.clear()
        self._cuts[obj] = version
        self._cuts.move_to_end(obj)
        while len(self._cuts) > self.capacity:
            _, forgotten = self._cuts.popitem(last=False)
            self._cut_floor = max(self._cut_floor, forgotten)

    def _remember(self, obj: CatalogObject, fingerprint: Hashable) -> None:
        self._fingerprints[obj] = fingerprint
        self._fingerprints.move_to_end(obj)
        while len(self._fingerprints) > self._fingerprint_capacity:
            self._fingerprints.popitem(last=False)


def _itself(obj: CatalogObject) -> CatalogObject:
    return obj


def _parent_list(obj: CatalogObject) -> CatalogObject | None:
    """The list of names that names ``obj`` (a database's tables, a table's partitions), if any."""
    if obj.kind == "database":
        return CatalogObject("databases")
    if obj.kind == "table":
        return CatalogObject("tables", obj.database)
    if obj.kind == "partition":
        return CatalogObject("partitions", obj.database, obj.table)
    return None
