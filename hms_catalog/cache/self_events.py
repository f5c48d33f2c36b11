"""The metastore events this catalog's own DDLs will cause, so that following the notification log does not
apply them a second time.

A DDL run here updates the caches and records its change in the version log at once. The metastore then
writes an event for the same change, which the event follower reads some seconds later: applied, it
would invalidate again and bump the version a second time. So before a DDL calls the metastore it says
which events to expect (type, database, table, how many), and the follower consumes a matching
expectation instead of applying the event, as Impala's catalogd skips the events of its own DDLs.

Events arrive in the order the metastore wrote them, so our own event reaches the follower before any
later one of another writer on the same table. An expectation no event ever meets (the call failed after
the metastore wrote nothing, or events are not written at all) expires after :data:`EXPECTATION_SECONDS`,
and a DDL that fails withdraws its expectations. The memory belongs to one catalog, kept with its caches.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["SelfEvents", "Expectation", "EXPECTATION_SECONDS"]

EXPECTATION_SECONDS = 600.0


@dataclass
class Expectation:
    event_type: str
    database: str
    table: str
    count: int
    expires: float


class SelfEvents:
    """Expected events by ``(type, database, table)``; thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._expected: list[Expectation] = []

    def expect(self, event_type: str, database: str, table: str = "", count: int = 1) -> Expectation:
        """Say that ``count`` events of this type on this object are coming from a DDL of ours."""
        expectation = Expectation(event_type.upper(), database.lower(), table.lower(), count, self._clock() + EXPECTATION_SECONDS)
        with self._lock:
            self._expected.append(expectation)
        return expectation

    def withdraw(self, expectation: Expectation) -> None:
        """The DDL failed: its events will not come."""
        with self._lock:
            if expectation in self._expected:
                self._expected.remove(expectation)

    def consume(self, event_type: str, database: str, table: str = "") -> bool:
        """Whether an event of this type on this object is one of ours (then it is counted off)."""
        key = (event_type.upper(), database.lower(), (table or "").lower())
        now = self._clock()
        with self._lock:
            self._expected = [e for e in self._expected if e.expires > now]
            for expectation in self._expected:
                if (expectation.event_type, expectation.database, expectation.table) == key:
                    expectation.count -= 1
                    if expectation.count <= 0:
                        self._expected.remove(expectation)
                    return True
        return False

    def pending(self) -> int:
        with self._lock:
            return sum(e.count for e in self._expected if e.expires > self._clock())
