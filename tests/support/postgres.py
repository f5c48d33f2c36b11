"""A throw-away real PostgreSQL server for tests: the embedded metastore's own server
(:mod:`hms_catalog.metastore._postgres_server`) made as the tests want it.

One cluster in a temp folder, on a loopback TCP port, without durability (fsync off); clients log in over TCP
as the ordinary role ``hms`` with a SCRAM password, in the database ``hms_catalog``. The port is chosen once,
so ``url`` stays valid across ``restart()`` and ``kill()`` + ``start()``. What it does as root (CI) is the
core's: the server runs as the ``postgres`` system user, from a private folder under the system temp dir when
that user cannot enter pytest's temp root, removed by ``close()``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from hms_catalog.metastore import _postgres_server
from hms_catalog.metastore._postgres_server import available, find_binaries
from hms_catalog.metastore._process import alive

__all__ = ["DATABASE", "USER", "PostgresServer", "available", "find_binaries"]

DATABASE = "hms_catalog"
USER = "hms"


class PostgresServer(_postgres_server.PostgresServer):
    """The test session's PostgreSQL: a context manager, a SQLAlchemy ``url`` and ``kill()`` to crash it."""

    def __init__(self, directory: Path, *, start_timeout: float = 60.0) -> None:
        super().__init__(directory, user=USER, database=DATABASE, durable=False, start_timeout=start_timeout)

    @property
    def url(self) -> str:
        """The SQLAlchemy 2 URL (psycopg 3 driver), without the password: pass that apart, as a catalog does."""
        return f"postgresql+psycopg://{self.user}@{self.host}:{self.port}/{self.database}"

    def __enter__(self) -> PostgresServer:
        try:
            self.start()
        except BaseException:
            self.close()  # ``with`` calls no __exit__ when __enter__ raises: a half-started server is ours to end
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @contextlib.contextmanager
    def scratch_database(self, *, log_statements: bool = False) -> Iterator[str]:
        """A new database owned by the ordinary role, dropped with its connections on leaving; with
        ``log_statements``, the server logs every statement made in it."""
        name = f"hms_{uuid.uuid4().hex[:12]}"
        logged = f"ALTER DATABASE {name} SET log_statement = 'all';\n" if log_statements else ""
        self.psql(f"CREATE DATABASE {name} OWNER {self.user};\n{logged}")
        try:
            yield name
        finally:
            self.psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE);\n")

    def kill(self) -> None:
        """Crash the server: SIGKILL the postmaster and every backend, as an OOM killer would, so a test sees
        connections drop without a goodbye; ``start()`` then runs crash recovery."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        children = _children(process.pid)
        for pid in (process.pid, *children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait(timeout=10)
        # A backend still alive holds the shared memory, and a new postmaster would refuse to start on it (a zombie
        # holds none, and in a container nothing may reap it: alive() does not count zombies).
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.05)


def _children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (Linux: read from /proc)."""
    found: list[int] = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(") ", 1)[1].split()  # after "pid (comm) ": state, ppid, ...
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(stat.parent.name))
    return found
