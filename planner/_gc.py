"""Pausing Python's cyclic garbage collector while millions of splits are made, and while a plan's partitions are
fetched and listed.

Splits are tuples of strings, ints and tuples: they cannot form reference cycles, yet every few hundred
allocations the collector rescans the growing list of them, which made cutting three times slower than the
arithmetic (measured in benchmarks/bench_split_rule.py). The same holds for the thrift objects of a filter's or
a batch's partitions and the file entries of their listings, decoded and cached by the thousand: on a table of a
million partitions, planning the 30,000 that ``IN`` on a later key keeps took 7.3-9.1 s with these pauses
against 10.6-11.6 s without them (their listing 2.4-2.7 s against 3.9-4.6 s). Each pause covers one step that
yields nothing (a call's answer, a listing), so no caller's code runs inside one. Reference counting still frees
memory while paused. Nested and concurrent pauses are counted so the collector comes back when the last one
ends, and only if it was on to begin with; while they overlap for longer than :data:`MAX_PAUSE_SECONDS`, the one
ending collects once.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Callable, Iterator

__all__ = ["MAX_PAUSE_SECONDS", "paused_gc"]

# The longest the collector stays off while pauses overlap (a service planning without a gap): then the pause
# that ends runs one collection, so cyclic garbage made meanwhile by anything else is not kept for ever.
MAX_PAUSE_SECONDS = 30.0


class _CollectorPauses:
    """Counts the pauses in force: the collector is process-wide, so its pause count is too."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, max_pause: float = MAX_PAUSE_SECONDS) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._was_enabled = False
        self._clock = clock
        self._max_pause = max_pause
        self._since = 0.0  # when the collector last ran or was turned off

    @property
    def depth(self) -> int:
        return self._depth

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
                self._since = self._clock()
            self._depth += 1
        try:
            yield
        finally:
            overdue = False
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    if self._was_enabled:
                        gc.enable()
                elif self._was_enabled and self._clock() - self._since > self._max_pause:
                    self._since = self._clock()
                    overdue = True
            if overdue:  # other pauses go on: collect once now, outside the lock, and stay paused
                gc.collect()


_PAUSES = _CollectorPauses()


def paused_gc() -> contextlib.AbstractContextManager[None]:
    """Pause the cyclic collector for the block; nested and concurrent pauses end with the last one, and while they
    overlap for longer than :data:`MAX_PAUSE_SECONDS`, the one ending collects once."""
    return _PAUSES.paused()
