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

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
