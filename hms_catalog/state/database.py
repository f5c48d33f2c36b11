"""The store's connection: migrated to the newest schema on open, transactions that say whether they write.

Migrations run under a lock (PostgreSQL's advisory lock; SQLite's write lock), so replicas started at the
same moment on a new database do not race to create the same tables.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from hms_catalog.state.engine import WRITING, StoreLocation, unavailable

__all__ = ["StoreDatabase", "HEAD_REVISION"]

_MIGRATIONS = Path(__file__).parent / "migrations"
# The newest migration's revision: a store already there is used without loading Alembic and its scripts
# (most of a CLI run's start-up otherwise). tests/state/test_engine.py checks it is Alembic's head.
HEAD_REVISION = "0003"
_MIGRATION_LOCK = 0x686D735F63617431  # any fixed 64-bit number: the advisory lock's name


class StoreDatabase:
    """One store, reached through a pooled engine; made current (migrated) on the first transaction."""

    def __init__(self, location: StoreLocation) -> None:
        self.location = location
        self._migrated = False
        self._lock = threading.Lock()

    def describe(self) -> str:
        return self.location.describe()

    @contextlib.contextmanager
    def reading(self) -> Iterator[Connection]:
        """A read transaction (committed at the end; it changes nothing)."""
        self._migrate_once()
        with unavailable(self.location), self.location.engine().connect() as connection, connection.begin():
            yield connection

    @contextlib.contextmanager
    def writing(self) -> Iterator[Connection]:
        """A transaction that writes: committed when the block ends, rolled back whole when it raises."""
        self._migrate_once()
        with unavailable(self.location), self.location.engine().connect() as connection:
            connection = connection.execution_options(**{WRITING: True})
            with connection.begin():
                yield connection

    def close(self) -> None:
        self.location.dispose()

    def _migrate_once(self) -> None:
        if self._migrated:
            return
        with self._lock:
            if self._migrated:
                return
            if self._revision() == HEAD_REVISION:
                self._migrated = True
                return
            from alembic import command
            from alembic.config import Config

            config = Config()
            config.set_main_option("script_location", str(_MIGRATIONS))
            with unavailable(self.location), self.location.engine().connect() as connection:
                connection = connection.execution_options(**{WRITING: True})
                with connection.begin():
                    if connection.dialect.name == "postgresql":
                        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
                    config.attributes["connection"] = connection
                    command.upgrade(config, "head")
            self._migrated = True

    def _revision(self) -> str | None:
        """The store's schema revision; None for a new store (no version table yet)."""
        with unavailable(self.location), self.location.engine().connect() as connection:
            try:
                with connection.begin():
                    found = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
            except DBAPIError:  # no such table: a store never migrated
                return None
        return None if found is None else str(found)
