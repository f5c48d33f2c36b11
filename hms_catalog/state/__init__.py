"""The catalog store: definitions, versions and change log, event leases and the audit trail, in SQL.

SQLite in the home by default; PostgreSQL when several service replicas share one catalog
(``serve --store postgresql://...``). Schema changes are Alembic migrations, applied on first use.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from hms_catalog.state.audit import AuditTrail
from hms_catalog.state.database import StoreDatabase
from hms_catalog.state.definitions import SqlCatalogStore
from hms_catalog.state.engine import STORE_ENV, STORE_FILE, STORE_PASSWORD_ENV, StoreLocation, store_location
from hms_catalog.state.follow import StoreFollower
from hms_catalog.state.journal import ChangeJournal, EventPosition
from hms_catalog.state.leases import LEASE_SECONDS_DEFAULT, EventLease, LeaseTable
from hms_catalog.state.tokens import StoredToken, TokenStore, token_digest

__all__ = [
    "AuditTrail", "ChangeJournal", "EventLease", "EventPosition", "LeaseTable", "SharedState", "SqlCatalogStore",
    "StoreDatabase", "StoreFollower", "StoreLocation", "store_location", "STORE_ENV", "STORE_FILE", "STORE_PASSWORD_ENV",
    "StoredToken", "TokenStore", "open_definitions", "open_shared_state", "replica_name", "token_digest",
]


def replica_name() -> str:
    """This process among replicas: host, process id and a random suffix (a restarted process is a new one)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def open_definitions(home: str | os.PathLike[str], store: str | None = None, *,
                     password_file: Path | None = None) -> SqlCatalogStore:
    """The catalog definitions of ``home`` (SQLite there unless ``store`` or ``$HMS_CATALOG_STORE`` names one)."""
    home_path = Path(home).expanduser()
    return SqlCatalogStore(home_path, StoreDatabase(store_location(home_path, store, password_file=password_file)))


@dataclass
class SharedState:
    """What service replicas share through the store, beside the definitions."""

    definitions: SqlCatalogStore
    replica: str = field(default_factory=replica_name)
    lease_seconds: float = LEASE_SECONDS_DEFAULT

    def __post_init__(self) -> None:
        database = self.definitions.database
        self.journal = ChangeJournal(database, self.replica)
        self.leases = LeaseTable(database, ttl=self.lease_seconds)
        self.audit = AuditTrail(database, self.replica)
        self.tokens = TokenStore(database)


def open_shared_state(definitions: SqlCatalogStore, *, lease_seconds: float = LEASE_SECONDS_DEFAULT) -> SharedState:
    return SharedState(definitions, lease_seconds=lease_seconds)
