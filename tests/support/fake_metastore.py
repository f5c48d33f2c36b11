"""An in-memory stand-in for :class:`hms_catalog.client.MetastoreClient`, for unit tests of pure logic.

It answers like the real metastore does through the client (lower-case names, NotFoundError for
missing objects, an empty list from get_all_tables for a missing database) and counts calls by method
the way the pool's metrics do, so one behaviour suite can run against both.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.metrics import MetricsSnapshot
from hms_catalog.errors import NotFoundError

__all__ = ["FakeMetastore"]


class FakeMetastore:
    def __init__(self, *, latency: float = 0.0) -> None:
        self.latency = latency
        self.databases: dict[str, ttypes.Database] = {}
        self.tables: dict[tuple[str, str], ttypes.Table] = {}
        self.closed = False
        self._calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    # arranging -----------------------------------------------------------------------------------
    def add_database(self, name: str) -> None:
        self.databases[name.lower()] = ttypes.Database(name=name.lower(), locationUri=f"file:///w/{name}.db", parameters={})

    def add_table(self, table: ttypes.Table) -> None:
        self.tables[(table.dbName.lower(), table.tableName.lower())] = table

    # the client interface ------------------------------------------------------------------------
    def metrics(self) -> MetricsSnapshot:
        with self._lock:
            return MetricsSnapshot(calls=dict(self._calls))

    def close(self) -> None:
        self.closed = True

    def get_all_databases(self) -> list[str]:
        self._count("get_all_databases")
        return sorted(self.databases)

    def get_database(self, name: str) -> ttypes.Database:
        self._count("get_database")
        try:
            return self.databases[name.lower()]
        except KeyError:
            raise NotFoundError("database", name) from None

    def get_all_tables(self, database: str) -> list[str]:
        self._count("get_all_tables")
        return sorted(t for d, t in self.tables if d == database.lower())

    def get_table(self, database: str, table: str) -> ttypes.Table:
        self._count("get_table_req")
        try:
            return self.tables[(database.lower(), table.lower())]
        except KeyError:
            raise NotFoundError("table", f"{database}.{table}") from None

    def get_table_objects_by_name(self, database: str, tables: list[str]) -> list[ttypes.Table]:
        self._count("get_table_objects_by_name_req")
        return [self.tables[(database.lower(), t.lower())] for t in tables if (database.lower(), t.lower()) in self.tables]

    def _count(self, method: str) -> None:
        with self._lock:
            self._calls[method] += 1
        if self.latency:
            time.sleep(self.latency)
