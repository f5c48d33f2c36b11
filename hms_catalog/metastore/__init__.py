"""The embedded Hive Metastore that the demo and the tests run on, on Derby or PostgreSQL."""

from __future__ import annotations

from hms_catalog.metastore._database import (
    DATABASE_PASSWORD_ENV,
    DerbyDatabase,
    MetastoreDatabase,
    PostgresDatabase,
    parse_database,
)
from hms_catalog.metastore.embedded import (
    DEFAULT_PORT,
    EmbeddedMetastore,
    MetastoreAlreadyRunning,
    MetastoreKerberos,
    MetastorePortInUse,
    MetastoreStatus,
)

__all__ = [
    "DATABASE_PASSWORD_ENV", "DEFAULT_PORT", "DerbyDatabase", "EmbeddedMetastore", "MetastoreAlreadyRunning",
    "MetastoreDatabase", "MetastoreKerberos", "MetastorePortInUse", "MetastoreStatus", "PostgresDatabase",
    "parse_database",
]
