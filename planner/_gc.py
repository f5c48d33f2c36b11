"""Pausing Python's cyclic garbage collector while millions of splits are made.

Splits are tuples of strings, ints and tuples: they cannot form reference cycles, yet every few hundred
allocations the collector rescans the growing list of them, which made cutting three times slower than
the arithmetic (measured in benchmarks/bench_split_rule.py). Reference counting still frees memory while
paused. Nested and concurrent pauses are counted so the collector comes back when the last one ends, and
only if it was on to begin with.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["paused_gc"]

class _CollectorPauses:
    """Counts the pauses in force: the collector is process-wide, so its pause count is too."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._was_enabled = False

    @property
    def depth(self) -> int:
        return self._depth

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._was_enabled:
                    gc.enable()


_PAUSES = _CollectorPauses()


def paused_gc() -> contextlib.AbstractContextManager[None]:
    """Pause the cyclic collector for the block; nested and concurrent pauses end with the last one."""
    return _PAUSES.paused()
