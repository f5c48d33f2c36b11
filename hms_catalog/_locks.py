"""Locks by catalog object, for DDLs: one per ``(database, table)`` of a catalog, held by the catalog."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

__all__ = ["TableLocks"]


class TableLocks:
    """One lock per ``(database, table)`` (a database lock is ``(database, "")``): DDLs on one object run one
    at a time, DDLs on different ones in parallel; several are always taken in one order (no deadlock)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[tuple[str, str], threading.RLock] = {}

    @contextlib.contextmanager
    def hold(self, *objects: tuple[str, str]) -> Iterator[None]:
        keys = sorted({(database.lower(), table.lower()) for database, table in objects})
        with self._guard:
            locks = [self._locks.setdefault(key, threading.RLock()) for key in keys]
        with contextlib.ExitStack() as stack:
            for lock in locks:
                stack.enter_context(lock)
            yield
