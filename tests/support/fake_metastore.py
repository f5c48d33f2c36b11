"""An in-memory stand-in for :class:`hms_catalog.client.MetastoreClient`, for unit tests of pure logic.

It answers like the real metastore does through the client (lower-case names, NotFoundError for
missing objects, an empty list from get_all_tables for a missing database) and counts calls by method
the way the pool's metrics do, so one behaviour suite can run against both.

Partitions: get_partitions_by_filter answers every partition of the table (a superset, which the planner
must narrow itself) unless ``refuse_filter`` says the metastore refuses that expression, as Hive refuses
filters on integral keys; every request is recorded in ``requests`` (method, arguments) so a test can
check what was asked and in what batches. Column statistics are those set with ``set_statistics``.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.metrics import MetricsSnapshot
from hms_catalog.errors import MetastoreError, NotFoundError
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name

__all__ = ["FakeMetastore"]


class FakeMetastore:
    def __init__(self, *, latency: float = 0.0) -> None:
        self.latency = latency
        self.databases: dict[str, ttypes.Database] = {}
        self.tables: dict[tuple[str, str], ttypes.Table] = {}
        self.partitions: dict[tuple[str, str], dict[str, ttypes.Partition]] = {}
        self.table_statistics: dict[tuple[str, str], list[ttypes.ColumnStatisticsObj]] = {}
        self.partition_statistics: dict[tuple[str, str, str], list[ttypes.ColumnStatisticsObj]] = {}
        self.refuse_filter: Callable[[str], bool] = lambda expression: False
        self.requests: list[tuple[str, tuple[Any, ...]]] = []
        self.closed = False
        self._calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    # arranging -----------------------------------------------------------------------------------
    def add_database(self, name: str) -> None:
        self.databases[name.lower()] = ttypes.Database(name=name.lower(), locationUri=f"file:///w/{name}.db", parameters={})

    def add_table(self, table: ttypes.Table) -> None:
        self.tables[(table.dbName.lower(), table.tableName.lower())] = table

    def add_partition(self, database: str, table: str, values: Sequence[str | None], location: str,
                      parameters: dict[str, str] | None = None) -> str:
        """Register a partition of an added table (None for a NULL value); returns its name."""
        struct = self.tables[(database.lower(), table.lower())]
        spelled = [DEFAULT_PARTITION if v is None else v for v in values]
        name = make_partition_name([k.name.lower() for k in struct.partitionKeys], values)
        sd = ttypes.StorageDescriptor(location=location, inputFormat=struct.sd.inputFormat if struct.sd else None,
                                      serdeInfo=struct.sd.serdeInfo if struct.sd else None, cols=[])
        self.partitions.setdefault((database.lower(), table.lower()), {})[name] = ttypes.Partition(
            values=spelled, dbName=database.lower(), tableName=table.lower(), sd=sd, parameters=dict(parameters or {}))
        return name

    def set_statistics(self, database: str, table: str, columns: list[ttypes.ColumnStatisticsObj],
                       partition: str | None = None) -> None:
        if partition is None:
            self.table_statistics[(database.lower(), table.lower())] = columns
        else:
            self.partition_statistics[(database.lower(), table.lower(), partition)] = columns

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

    def get_partition_names(self, database: str, table: str, max_parts: int = -1) -> list[str]:
        self._ask("get_partition_names", database, table)
        return sorted(self._partitions(database, table))

    def get_partition_names_ps(self, database: str, table: str, values: list[str], max_parts: int = -1) -> list[str]:
        self._ask("get_partition_names_ps", database, table, list(values))
        return sorted(name for name, p in self._partitions(database, table).items()
                      if all(not wanted or wanted == value for wanted, value in zip(values, p.values)))

    def get_partitions_by_filter(self, database: str, table: str, expression: str, max_parts: int = -1, *,
                                 fields: Sequence[str] | None = None) -> list[ttypes.Partition]:
        self._ask("get_partitions_by_filter", database, table, expression)
        if self.refuse_filter(expression):
            raise MetastoreError("metastore call get_partitions_by_filter failed: Filtering is supported only on "
                                 "partition keys of type string")
        partitions = list(self._partitions(database, table).values())
        return partitions if max_parts < 0 else partitions[:max_parts]

    def get_partitions_by_names(self, database: str, table: str, names: list[str], *,
                                fields: Sequence[str] | None = None) -> list[ttypes.Partition]:
        self._ask("get_partitions_by_names", database, table, list(names))
        known = self._partitions(database, table)
        return [known[name] for name in names if name in known]

    def get_table_column_statistics(self, database: str, table: str, columns: list[str]) -> list[ttypes.ColumnStatisticsObj]:
        self._ask("get_table_statistics_req", database, table, list(columns))
        return [c for c in self.table_statistics.get((database.lower(), table.lower()), []) if c.colName in columns]

    def get_partitions_column_statistics(self, database: str, table: str, partition_names: list[str],
                                         columns: list[str]) -> dict[str, list[ttypes.ColumnStatisticsObj]]:
        self._ask("get_partitions_statistics_req", database, table, list(partition_names), list(columns))
        found = {}
        for name in partition_names:
            stats = [c for c in self.partition_statistics.get((database.lower(), table.lower(), name), []) if c.colName in columns]
            if stats:
                found[name] = stats
        return found

    def _partitions(self, database: str, table: str) -> dict[str, ttypes.Partition]:
        if (database.lower(), table.lower()) not in self.tables:
            raise NotFoundError("table", f"{database}.{table}")
        return self.partitions.get((database.lower(), table.lower()), {})

    def _ask(self, method: str, *args: Any) -> None:
        with self._lock:
            self.requests.append((method, args))
        self._count(method)

    def _count(self, method: str) -> None:
        with self._lock:
            self._calls[method] += 1
        if self.latency:
            time.sleep(self.latency)
