"""Pausing Python's cyclic garbage collector while millions of splits are made, and while a plan's partitions are
fetched and listed.

Splits are tuples of strings, ints and tuples: they cannot form reference cycles, yet every few hundred
allocations the collector rescans the growing list of them, which made cutting three times slower than the
arithmetic (measured in benchmarks/bench_split_rule.py). The same holds for the thrift objects of a filter's or a
batch's partitions and the file entries of their listings, decoded and cached by the thousand: on a table of a
million partitions, planning the 30,000 that ``IN`` on a later key keeps took 7.3-9.1 s with these pauses against
10.6-11.6 s without them (their listing 2.4-2.7 s against 3.9-4.6 s). Each pause covers one step that yields
nothing (a call's answer, a listing), so the stream's consumer never runs inside one (a progress callback may).
Reference counting still frees memory while paused. Nested and concurrent pauses are counted so the collector
comes back when the last one ends, and only if it was on to begin with; a stretch of pauses longer than
:data:`MAX_PAUSE_SECONDS` has a watchdog thread collect once each such while.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import threading
from collections.abc import Iterator

__all__ = ["MAX_PAUSE_SECONDS", "paused_gc"]

# The longest the collector stays off in one stretch (one slow metastore answer or listing, or pauses that keep
# overlapping in a busy service): then a watchdog thread collects once, and again every as long while it lasts, so
# cyclic garbage made meanwhile by anything else in the process is not kept for ever.
MAX_PAUSE_SECONDS = 30.0


class _CollectorPauses:
    """Counts the pauses in force: the collector is process-wide, so its pause count is too. A watchdog thread,
    started with the first pause, collects while one stretch of pauses lasts longer than ``max_pause``."""

    def __init__(self, max_pause: float = MAX_PAUSE_SECONDS) -> None:
        self._max_pause = max_pause
        self._reset()

    def _after_fork(self) -> None:
        """In a forked child none of the parent's pauses goes on (their threads are not there to end them): the
        collector is put back as it was before them, and the lock and the watchdog are new."""
        if self._depth > 0 and self._was_enabled:
            gc.enable()
        self._reset()

    def _reset(self) -> None:
        """A fresh state: at construction, and in a forked child, where the lock may have been held by a thread
        that does not exist there and the watchdog thread is gone."""
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # notified when a stretch of pauses begins or ends
        self._depth = 0
        self._was_enabled = False
        self._stretch = 0  # counts the stretches of pauses, so the watchdog knows one ended
        self._watchdog: threading.Thread | None = None

    @property
    def depth(self) -> int:
        return self._depth

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
                self._stretch += 1
                if self._was_enabled and (self._watchdog is None or not self._watchdog.is_alive()):
                    self._watchdog = threading.Thread(target=self._watch, name="gc-pause-watchdog", daemon=True)
                    self._watchdog.start()
                self._changed.notify_all()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    if self._was_enabled:
                        gc.enable()
                    self._changed.notify_all()

    def _ended(self, stretch: int) -> bool:
        """Whether the stretch of pauses numbered ``stretch`` is over (called holding the lock)."""
        return self._depth == 0 or self._stretch != stretch

    def _watch(self) -> None:
        """Waits for a stretch of pauses that found the collector on; collects each ``max_pause`` it lasts."""
        while True:
            with self._lock:
                while self._depth == 0 or not self._was_enabled:
                    self._changed.wait()
                ended = self._changed.wait_for(functools.partial(self._ended, self._stretch), timeout=self._max_pause)
            if not ended:
                gc.collect()  # the collector stays off for the pauses: this one collection is the watchdog's


_PAUSES = _CollectorPauses()
os.register_at_fork(after_in_child=_PAUSES._after_fork)


def paused_gc() -> contextlib.AbstractContextManager[None]:
    """Pause the cyclic collector for the block; nested and concurrent pauses end with the last one, and a stretch
    of them longer than :data:`MAX_PAUSE_SECONDS` has the collector run once each such while."""
    return _PAUSES.paused()
