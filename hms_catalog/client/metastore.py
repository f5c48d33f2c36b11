"""Typed metastore operations over the pool, with the metastore's exceptions turned into ours.

The catalog model talks to this class only; a unit test can hand the model any object with the same
methods. Each method is one thrift call (through :meth:`HmsClientPool.call`, so counted and retried).
hmsclient's own convenience wrappers are bypassed: the generated thrift methods are the API.
"""

from __future__ import annotations

from typing import Any

from hmsclient.genthrift.hive_metastore import ttypes
from thrift.Thrift import TException

from hms_catalog.client.metrics import MetricsSnapshot
from hms_catalog.client.pool import HmsClientPool
from hms_catalog.errors import MetastoreError, NotFoundError

__all__ = ["MetastoreClient"]


class MetastoreClient:
    """The metastore calls the catalog model makes."""

    def __init__(self, pool: HmsClientPool) -> None:
        self.pool = pool

    def metrics(self) -> MetricsSnapshot:
        """Calls made so far, by method, with retries and connection counts."""
        return self.pool.metrics.snapshot()

    def close(self) -> None:
        self.pool.close()

    def get_all_databases(self) -> list[str]:
        return list(self._call("get_all_databases"))

    def get_database(self, name: str) -> ttypes.Database:
        return self._call("get_database", name, missing=("database", name))

    def get_all_tables(self, database: str) -> list[str]:
        return list(self._call("get_all_tables", database, missing=("database", database)))

    def get_table(self, database: str, table: str) -> ttypes.Table:
        return self._call("get_table", database, table, missing=("table", f"{database}.{table}"))

    def get_table_objects_by_name(self, database: str, tables: list[str]) -> list[ttypes.Table]:
        return list(self._call("get_table_objects_by_name", database, tables, missing=("database", database)))

    def get_partition_names(self, database: str, table: str, max_parts: int = -1) -> list[str]:
        return list(self._call("get_partition_names", database, table, max_parts, missing=("table", f"{database}.{table}")))

    def get_partition_names_ps(self, database: str, table: str, values: list[str], max_parts: int = -1) -> list[str]:
        return list(self._call("get_partition_names_ps", database, table, values, max_parts,
                               missing=("table", f"{database}.{table}")))

    def get_partitions_by_filter(self, database: str, table: str, expression: str, max_parts: int = -1) -> list[ttypes.Partition]:
        return list(self._call("get_partitions_by_filter", database, table, expression, max_parts,
                               missing=("table", f"{database}.{table}")))

    def get_partitions_by_names(self, database: str, table: str, names: list[str]) -> list[ttypes.Partition]:
        return list(self._call("get_partitions_by_names", database, table, names, missing=("table", f"{database}.{table}")))

    def get_current_notification_event_id(self) -> int:
        """The id of the newest event in the metastore's notification log."""
        return int(self._call("get_current_notificationEventId").eventId)

    def get_next_notification(self, last_event: int, max_events: int) -> list[ttypes.NotificationEvent]:
        """Up to ``max_events`` events after ``last_event``, oldest first."""
        request = ttypes.NotificationEventRequest(lastEvent=last_event, maxEvents=max_events)
        return list(self._call("get_next_notification", request).events or [])

    def _call(self, method: str, *args: Any, missing: tuple[str, str] | None = None) -> Any:
        try:
            return self.pool.call(method, *args)
        except ttypes.NoSuchObjectException as error:
            if missing is None:
                raise MetastoreError(f"{method}: {error.message}") from error
            raise NotFoundError(missing[0], missing[1], error.message or "") from error
        except (ttypes.UnknownDBException, ttypes.UnknownTableException) as error:
            kind, name = missing or ("object", "?")
            raise NotFoundError(kind, name, error.message or "") from error
        except ttypes.MetaException as error:
            raise MetastoreError(f"metastore call {method} failed: {error.message}") from error
        except TException as error:
            if isinstance(error, OSError):
                raise
            detail = getattr(error, "message", None) or str(error) or type(error).__name__
            raise MetastoreError(f"metastore call {method} failed: {detail}") from error
