"""Which kinds of partition filter a metastore refused for which table, so a plan does not ask again.

A metastore refuses a filter on a non-string partition key unless its direct SQL path can run it, or
``hive.metastore.integral.jdo.pushdown`` is set (Hive's ORM path compares only strings); its direct SQL
path also gives up on a table whose integral or date partition values do not all cast. Either way the
answer holds for that table until it changes, so asking again on every plan would cost a refused call
each time. The memory belongs to one catalog (it is kept with the catalog's caches and passed in, never
module state) and is forgotten with the table's cached metadata on REFRESH.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

__all__ = ["FilterRefusals"]


class FilterRefusals:
    """Kinds of filter (``string``, ``integral``, ``date``) refused per ``(database, table)``; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._refused: dict[tuple[str, str], frozenset[str]] = {}

    def refused(self, database: str, table: str) -> frozenset[str]:
        with self._lock:
            return self._refused.get((database.lower(), table.lower()), frozenset())

    def remember(self, database: str, table: str, kinds: Iterable[str]) -> None:
        key = (database.lower(), table.lower())
        with self._lock:
            self._refused[key] = self._refused.get(key, frozenset()) | frozenset(kinds)

    def forget_table(self, database: str, table: str) -> None:
        with self._lock:
            self._refused.pop((database.lower(), table.lower()), None)

    def forget_database(self, database: str) -> None:
        with self._lock:
            for key in [key for key in self._refused if key[0] == database.lower()]:
                del self._refused[key]

    def clear(self) -> None:
        with self._lock:
            self._refused.clear()

    def snapshot(self) -> dict[tuple[str, str], frozenset[str]]:
        """What is remembered now, for SHOW-style reports and tests."""
        with self._lock:
            return dict(self._refused)
