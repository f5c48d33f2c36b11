"""Where the catalog store is and how to reach it: a SQLite file in the home, or a PostgreSQL server.

SQLite is the default (``HOME/catalog.db``): nothing to set up, and several processes on one machine share
it safely (write-ahead log, a busy timeout instead of "database is locked"). Replicas on several machines
share a PostgreSQL database instead: ``--store postgresql://user@host/db`` or ``$HMS_CATALOG_STORE``, with
the password from ``$HMS_CATALOG_STORE_PASSWORD`` or a file, never from the command line, and never shown
(every message renders the URL with the password hidden).

Every failure to reach the store becomes a :class:`StoreUnavailableError`: nothing was changed, and the
service answers 503 so a client tries again (or another replica).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, exc
from sqlalchemy.engine import URL, make_url

from hms_catalog._private import private_directory, private_file
from hms_catalog.errors import ConfigurationError, StoreUnavailableError

__all__ = ["STORE_ENV", "STORE_PASSWORD_ENV", "STORE_FILE", "StoreLocation", "WRITING", "store_location", "unavailable"]

STORE_ENV = "HMS_CATALOG_STORE"
STORE_PASSWORD_ENV = "HMS_CATALOG_STORE_PASSWORD"
STORE_FILE = "catalog.db"
CONNECT_TIMEOUT_SECONDS = 5  # a store that does not answer within this is down: say so, do not hang
SQLITE_BUSY_MILLISECONDS = 30_000
WRITING = "hms_catalog_writing"  # the execution option that marks a transaction that will write


class StoreLocation:
    """A store's URL (password kept apart) and the engine that reaches it, made on first use."""

    def __init__(self, url: URL, password: str | None = None) -> None:
        self.url = url
        self._password = password
        self._engine: Engine | None = None

    @property
    def is_sqlite(self) -> bool:
        return self.url.get_backend_name() == "sqlite"

    def describe(self) -> str:
        """The URL as it may be shown: any password hidden."""
        return self.url.render_as_string(hide_password=True)

    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = _sqlite_engine(self.url) if self.is_sqlite else _server_engine(self.url, self._password)
        return self._engine

    def dispose(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


def store_location(home: Path, given: str | None = None, *, password_file: Path | None = None) -> StoreLocation:
    """The store ``given`` (``--store``), else ``$HMS_CATALOG_STORE``, else SQLite in ``home``.

    ConfigurationError names what is wrong: an unknown scheme, a password in the URL's text (it would show
    in process listings and shell history), a password file that cannot be read.
    """
    text = given or os.environ.get(STORE_ENV) or ""
    if not text:
        private_directory(home, tighten_existing=(home / STORE_FILE).exists())
        path = home / STORE_FILE
        _private_database_file(path)
        return StoreLocation(URL.create("sqlite", database=str(path)))
    where = f"--store ({STORE_ENV})" if not given else "--store"
    try:
        url = make_url(text)
    except exc.ArgumentError as error:
        raise ConfigurationError(f"{where}: not a store URL (sqlite:///PATH or postgresql://user@host/db)") from error
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database:
            raise ConfigurationError(f"{where}: a SQLite store needs a file (sqlite:///PATH), not an in-memory database")
        return StoreLocation(url)
    if backend not in ("postgresql", "postgres"):
        raise ConfigurationError(f"{where}: unsupported store '{backend}' (sqlite:///PATH or postgresql://user@host/db)")
    if url.password:
        raise ConfigurationError(f"{where}: do not put the password in the URL (it shows in process listings); "
                                 f"set {STORE_PASSWORD_ENV} or give --store-password-file")
    url = url.set(drivername="postgresql+psycopg")
    return StoreLocation(url, _password(password_file))


def _private_database_file(path: Path) -> None:
    """Make the SQLite file 0600 before SQLite writes a byte (definitions may hold secrets).

    An existing file is changed by path, never opened: closing any descriptor of a file drops every POSIX
    lock this process holds on it, SQLite's own included, and a connection of this process that lost its
    locks mid-transaction can corrupt the database.
    """
    try:
        os.close(private_file(path, os.O_RDWR | os.O_EXCL))
    except FileExistsError:
        if path.stat().st_mode & 0o777 != 0o600:
            os.chmod(path, 0o600)


def _password(password_file: Path | None) -> str | None:
    if password_file is not None:
        try:
            return password_file.expanduser().read_text(encoding="utf-8").strip()
        except OSError as error:
            raise ConfigurationError(f"--store-password-file {password_file}: cannot read it: {error.strerror}") from error
    return os.environ.get(STORE_PASSWORD_ENV) or None


def _sqlite_engine(url: URL) -> Engine:
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_MILLISECONDS / 1000, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _configure(connection: Any, record: Any) -> None:
        # Python's sqlite3 opens transactions lazily and never for SELECT; begin them ourselves (below).
        connection.isolation_level = None
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MILLISECONDS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        # A transaction that will write takes the write lock at once (BEGIN IMMEDIATE): one that read first
        # and upgraded later could deadlock with another such and fail instead of waiting its turn.
        writing = connection.get_execution_options().get(WRITING, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writing else "BEGIN")

    return engine


def _server_engine(url: URL, password: str | None) -> Engine:
    if password is not None:
        url = url.set(password=password)
    return create_engine(
        url, pool_pre_ping=True, pool_size=8, max_overflow=16, pool_timeout=CONNECT_TIMEOUT_SECONDS,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS, "application_name": "hms-catalog"},
    )


@contextlib.contextmanager
def unavailable(location: StoreLocation) -> Iterator[None]:
    """Turn a store that cannot be reached (down, restarting, locked too long) into StoreUnavailableError."""
    try:
        yield
    except (exc.OperationalError, exc.InterfaceError) as error:
        reason = str(getattr(error, "orig", None) or error).strip().splitlines()[0] if str(error) else type(error).__name__
        raise StoreUnavailableError(f"the catalog store {location.describe()} cannot be reached: {reason}") from error
    except exc.TimeoutError as error:
        raise StoreUnavailableError(f"the catalog store {location.describe()} has no free connection: {error}") from error
