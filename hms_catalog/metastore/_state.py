"""What an embedded metastore's directory records of its server, for this process and the next.

The state file (``metastore.json``) says which server is running there: another process
(``hms-catalog metastore stop``, a second start) finds it through it. The port file (``metastore.port``) is
kept across stops: the port of the last successful start, which catalogs defined over the metastore name.
A start holds the directory's start lock while it decides and records, so two starts never race.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

__all__ = ["PORT_FILE", "STATE_FILE", "ServerState", "ServerStateFile"]

STATE_FILE = "metastore.json"
PORT_FILE = "metastore.port"  # kept across stops (the state file is not)


class ServerState(TypedDict):
    """What the state file records of a running server, so another process can find and stop it."""

    pid: int
    port: int
    uri: str
    events: bool
    started_at: float
    principal: str | None
    keytab: str | None


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
                               principal=str(principal) if principal else None, keytab=str(keytab) if keytab else None)
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

    def remembered_port(self) -> int | None:
        """The port of the directory's last successful start; None when it never started (or the file is
        unreadable, which only costs the memory)."""
        try:
            port = int((self.directory / PORT_FILE).read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            return None
        return port if 0 < port < 65536 else None
