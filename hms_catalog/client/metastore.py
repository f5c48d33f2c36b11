"""Typed metastore operations over the pool, with the metastore's exceptions turned into ours.

The catalog model talks to this class only; a unit test can hand the model any object with the same
methods. Each method is one thrift call (through :meth:`HmsClientPool.call_forms`, so counted and
retried), asked in the first form the metastore answers: table loads through the request-object calls
Hive 2.3 added and Hive 4 keeps (``get_table_req``), falling back to the legacy call on an older
metastore; partition calls through the legacy call every release has, moving on to Hive 4's request
form on a metastore that removed it. The generated thrift methods are the API.

Partitions asked with ``fields`` (a projection, see :mod:`hms_catalog.client.partition_specs`) are asked
first through Hive 4's ``get_partitions_with_specs``, which fills only those fields; a metastore without
it (Hive 2.3 and 3) gets the classic call and answers whole partitions, and is not asked the new form
again. Column statistics come from the request calls every supported release answers.

With ``hive.metastore.catalog.name`` set, every request names that metastore catalog: request structs
carry it as ``catName``, and the calls that take bare names get it as Hive 3's ``@catalog#database``
prefix. Unset, nothing is added and the metastore uses its default catalog.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from thrift.Thrift import TException

from hms_catalog.client.hive_thrift import GetPartitionsByFilterRequest, ttypes
from hms_catalog.client.metrics import MetricsSnapshot
from hms_catalog.client.partition_specs import partitions_of, partitions_request
from hms_catalog.client.pool import HmsClientPool
from hms_catalog.client.refusals import catalog_error
from hms_catalog.client.versions import CallForm
from hms_catalog.client.writes import MetastoreWriteCalls

__all__ = ["MetastoreClient"]

# How Hive 3+ names a catalog in a database-name argument (MetaStoreUtils.prependCatalogToDbName).
_CATALOG_MARKER = "@"
_CATALOG_SEPARATOR = "#"
# Hive 4 keeps statistics per engine and requires the field; older releases skip it.
_STATISTICS_ENGINE = "hive"


class MetastoreClient(MetastoreWriteCalls):
    """The metastore calls the catalog model makes."""

    def __init__(self, pool: HmsClientPool) -> None:
        self.pool = pool
        self.metastore_catalog: str | None = pool.config.metastore_catalog

    def metrics(self) -> MetricsSnapshot:
        """Calls made so far, by method, with retries and connection counts."""
        return self.pool.metrics.snapshot()

    def close(self) -> None:
        self.pool.close()

    def get_all_databases(self) -> list[str]:
        if self.metastore_catalog is None:
            return list(self._call("get_all_databases"))
        every_database = f"{_CATALOG_MARKER}{self.metastore_catalog}{_CATALOG_SEPARATOR}"  # a pattern naming no database
        return list(self._call("get_databases", every_database))

    def get_database(self, name: str) -> ttypes.Database:
        return self._call("get_database", self._db(name), missing=("database", name))

    def get_all_tables(self, database: str) -> list[str]:
        return list(self._call("get_all_tables", self._db(database), missing=("database", database)))

    def get_table(self, database: str, table: str) -> ttypes.Table:
        request = ttypes.GetTableRequest(dbName=database, tblName=table, catName=self.metastore_catalog)
        return self._ask(
            CallForm("get_table_req", (request,), lambda result: result.table),
            CallForm("get_table", (self._db(database), table)),
            missing=("table", f"{database}.{table}"),
        )

    def get_table_objects_by_name(self, database: str, tables: list[str]) -> list[ttypes.Table]:
        request = ttypes.GetTablesRequest(dbName=database, tblNames=list(tables), catName=self.metastore_catalog)
        return list(self._ask(
            CallForm("get_table_objects_by_name_req", (request,), lambda result: result.tables or []),
            CallForm("get_table_objects_by_name", (self._db(database), list(tables))),
            missing=("database", database),
        ))

    def get_table_meta(self, databases: str, tables: str, types: list[str] | None = None) -> list[ttypes.TableMeta]:
        """Name, type and comment of every table the two Hive patterns name: one query of the metastore, none of
        the table objects a load would fetch."""
        return list(self._call("get_table_meta", self._db(databases), tables, types))

    def get_partition_names(self, database: str, table: str, max_parts: int = -1) -> list[str]:
        return list(self._call("get_partition_names", self._db(database), table, max_parts,
                               missing=("table", f"{database}.{table}")))

    def get_partition_names_ps(self, database: str, table: str, values: list[str], max_parts: int = -1) -> list[str]:
        return list(self._call("get_partition_names_ps", self._db(database), table, values, max_parts,
                               missing=("table", f"{database}.{table}")))

    def get_partitions_by_filter(self, database: str, table: str, expression: str, max_parts: int = -1, *,
                                 fields: Sequence[str] | None = None) -> list[ttypes.Partition]:
        """Partitions matching ``expression`` (Hive's filter grammar); with ``fields``, at least those
        filled (more where the metastore cannot project)."""
        request = GetPartitionsByFilterRequest(catName=self.metastore_catalog, dbName=database, tblName=table,
                                               filter=expression, maxParts=max_parts)
        projected = self._projected(database, table, fields, expression=expression) if max_parts < 0 else ()
        return list(self._ask(
            *projected,
            CallForm("get_partitions_by_filter", (self._db(database), table, expression, max_parts)),
            CallForm("get_partitions_by_filter_req", (request,)),
            missing=("table", f"{database}.{table}"), label="get_partitions_by_filter",
        ))

    def get_partitions_by_names(self, database: str, table: str, names: list[str], *,
                                fields: Sequence[str] | None = None) -> list[ttypes.Partition]:
        """The partitions named ``names`` (absent ones left out); ``fields`` as for get_partitions_by_filter."""
        request = ttypes.GetPartitionsByNamesRequest(db_name=self._db(database), tbl_name=table, names=list(names))
        return list(self._ask(
            *self._projected(database, table, fields, names=names),
            CallForm("get_partitions_by_names", (self._db(database), table, list(names))),
            CallForm("get_partitions_by_names_req", (request,), lambda result: result.partitions or []),
            missing=("table", f"{database}.{table}"), label="get_partitions_by_names",
        ))

    def get_table_column_statistics(self, database: str, table: str, columns: list[str]) -> list[ttypes.ColumnStatisticsObj]:
        """The table-level statistics the metastore holds for ``columns``; an empty list when it has none."""
        request = ttypes.TableStatsRequest(dbName=database, tblName=table, colNames=list(columns),
                                           catName=self.metastore_catalog, engine=_STATISTICS_ENGINE)
        return list(self._ask(
            CallForm("get_table_statistics_req", (request,), lambda result: result.tableStats or []),
            missing=("table", f"{database}.{table}"),
        ))

    def get_partitions_column_statistics(self, database: str, table: str, partition_names: list[str],
                                         columns: list[str]) -> dict[str, list[ttypes.ColumnStatisticsObj]]:
        """Statistics of ``columns`` per partition name, for the named partitions that have any (one call:
        the caller batches)."""
        request = ttypes.PartitionsStatsRequest(dbName=database, tblName=table, colNames=list(columns),
                                                partNames=list(partition_names), catName=self.metastore_catalog,
                                                engine=_STATISTICS_ENGINE)
        answer = self._ask(
            CallForm("get_partitions_statistics_req", (request,), lambda result: result.partStats or {}),
            missing=("table", f"{database}.{table}"),
        )
        return {name: list(stats or []) for name, stats in answer.items()}

    def _projected(self, database: str, table: str, fields: Sequence[str] | None, *,
                   names: Sequence[str] | None = None, expression: str | None = None) -> tuple[CallForm, ...]:
        """The get_partitions_with_specs form of a partition question, when ``fields`` asks for a projection."""
        if not fields:
            return ()
        request = partitions_request(database, table, self.metastore_catalog, fields, names=names, expression=expression)
        return (CallForm("get_partitions_with_specs", (request,), partitions_of),)

    def get_current_notification_event_id(self) -> int:
        """The id of the newest event in the metastore's notification log."""
        return int(self._call("get_current_notificationEventId").eventId)

    def get_next_notification(self, last_event: int, max_events: int) -> list[ttypes.NotificationEvent]:
        """Up to ``max_events`` events after ``last_event``, oldest first, of every metastore catalog."""
        request = ttypes.NotificationEventRequest(lastEvent=last_event, maxEvents=max_events)
        return list(self._call("get_next_notification", request).events or [])

    def _db(self, database: str) -> str:
        """``database`` as a bare-name argument, with the metastore catalog prefixed when one is set."""
        if self.metastore_catalog is None:
            return database
        return f"{_CATALOG_MARKER}{self.metastore_catalog}{_CATALOG_SEPARATOR}{database}"

    def _call(self, method: str, *args: Any, missing: tuple[str, str] | None = None) -> Any:
        return self._ask(CallForm(method, args), missing=missing)

    def _ask(self, *forms: CallForm, missing: tuple[str, str] | None = None, label: str | None = None) -> Any:
        """The first answered form's answer, the metastore's exceptions turned into ours (named ``label``,
        by default the first form's method)."""
        method = label or forms[0].method
        try:
            return self.pool.call_forms(forms)
        except TException as error:
            if isinstance(error, OSError):
                raise
            raise catalog_error(method, error, missing) from error
