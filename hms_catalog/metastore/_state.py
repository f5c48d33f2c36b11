"""What an embedded metastore's directory records of its server, for this process and the next.

The state file (``metastore.json``) says which server is running there, and on which database (as it may be
shown: the password masked): another process (``hms-catalog metastore stop``, ``status``, a second start)
finds it through it. Two files are kept across stops: the port of the last successful start
(``metastore.port``), which catalogs defined over the metastore name, and its database (``metastore.database``,
0600: a PostgreSQL URL with its password, as hive-site.xml holds it), so a start that names neither takes the
same port and the same database, not an empty Derby one. A start holds the directory's start lock while it
decides and records, so two starts never race.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

from hms_catalog._private import private_file
from hms_catalog.metastore._process import read_port

__all__ = ["DATABASE_FILE", "PORT_FILE", "STATE_FILE", "ServerState", "ServerStateFile"]

STATE_FILE = "metastore.json"
PORT_FILE = "metastore.port"  # kept across stops (the state file is not)
DATABASE_FILE = "metastore.database"  # kept across stops, 0600


class ServerState(TypedDict):
    """What the state file records of a running server, so another process can find and stop it."""

    pid: int
    port: int
    uri: str
    events: bool
    started_at: float
    principal: str | None
    keytab: str | None
    database: str  # as it may be shown (MetastoreDatabase.describe)


class ServerStateFile:
    """The state, port and lock files of one metastore directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @contextlib.contextmanager
    def start_lock(self) -> Iterator[None]:
        with open(self.directory / ".start.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def read(self) -> ServerState | None:
        """The state file's content; None when absent or not what :meth:`write` writes (then no server of
        ours can be found through it)."""
        try:
            data = json.loads((self.directory / STATE_FILE).read_text(encoding="utf-8"))
            principal, keytab = data.get("principal"), data.get("keytab")
            return ServerState(pid=int(data["pid"]), port=int(data["port"]), uri=str(data["uri"]),
                               events=bool(data.get("events")), started_at=float(data.get("started_at", 0.0)),
                               principal=str(principal) if principal else None, keytab=str(keytab) if keytab else None,
                               database=str(data.get("database") or "derby"))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write(self, state: ServerState) -> None:
        """Record a started server, and its port as the one the next start takes."""
        path = self.directory / STATE_FILE
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(state), encoding="utf-8")
        os.replace(temporary, path)
        (self.directory / PORT_FILE).write_text(f"{state['port']}\n", encoding="utf-8")

    def clear(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.directory / STATE_FILE).unlink()

    def remember_database(self, url: str) -> None:
        """Keep the database of a successful start (its URL, password included) for the next start."""
        path = self.directory / DATABASE_FILE
        temporary = path.with_suffix(".tmp")
        temporary.unlink(missing_ok=True)
        with os.fdopen(private_file(temporary, os.O_WRONLY | os.O_EXCL), "w", encoding="utf-8") as out:
            out.write(url)
        os.replace(temporary, path)

    def remembered_database(self) -> str | None:
        """The database of the directory's last successful start; None when it never started (or started
        before databases were remembered: on Derby, the default)."""
        try:
            return (self.directory / DATABASE_FILE).read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def remembered_port(self) -> int | None:
        """The port of the directory's last successful start; None when it never started (or the file is
        unreadable, which only costs the memory)."""
        return read_port(self.directory / PORT_FILE)
