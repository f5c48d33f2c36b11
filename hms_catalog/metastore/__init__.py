"""The embedded Hive Metastore that the demo and the tests run on."""

from __future__ import annotations

from hms_catalog.metastore.embedded import (
    DEFAULT_PORT,
    EmbeddedMetastore,
    MetastoreAlreadyRunning,
    MetastoreKerberos,
    MetastorePortInUse,
    MetastoreStatus,
)

__all__ = [
    "DEFAULT_PORT", "EmbeddedMetastore", "MetastoreAlreadyRunning", "MetastoreKerberos", "MetastorePortInUse",
    "MetastoreStatus",
]
