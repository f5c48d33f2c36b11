"""Pooled, failing-over access to Hive Metastores over thrift."""

from __future__ import annotations

from hms_catalog.client.metastore import MetastoreClient
from hms_catalog.client.metrics import ClientMetrics, MetricsSnapshot
from hms_catalog.client.pool import BorrowedClient, HmsClientPool

__all__ = ["BorrowedClient", "ClientMetrics", "HmsClientPool", "MetastoreClient", "MetricsSnapshot"]
