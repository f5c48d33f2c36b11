"""``hms-catalog serve`` replicas on one PostgreSQL store, each on a fixed port so it can be killed and restarted
where its clients expect it; each has a home of its own (replicas share nothing but the store and the token).
Each is a process of its own, forked from the tests' fork server (:mod:`tests.support.forkserver`: the same CLI
without an interpreter's start-up, killed by ``kill -9`` as any process is)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text

from hms_catalog.remote import CatalogServiceClient
from tests.support.forkserver import ForkedProcess, fork_cli
from tests.support.postgres import PostgresServer

__all__ = ["Replica", "fresh_schema", "free_port"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fresh_schema(server: PostgresServer) -> str:
    """A new empty schema on ``server`` and the store URL that uses it (so tests do not see each other's rows)."""
    schema = f"s{uuid.uuid4().hex[:12]}"
    engine = create_engine(server.url.replace("@", f":{server.password}@", 1))
    with engine.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    engine.dispose()
    return f"{server.url.replace('+psycopg', '')}?options=-csearch_path%3D{schema}"


class Replica:
    """One ``serve`` process: ``start`` (again after ``kill``) on the same port, home, store and token."""

    def __init__(self, home: Path, store: str, password_file: Path, token_file: Path, *extra: str) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = token_file.read_text().strip()
        self._command = ["--home", str(home), "serve", "--port", str(self.port), "--store", store,
                         "--store-password-file", str(password_file), "--token-file", str(token_file), *extra]
        self.process: ForkedProcess | None = None
        self.log = home / "serve.log"

    def start(self, timeout: float = 60.0) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.process = fork_cli(self._command, env={**os.environ, "PYTHONUNBUFFERED": "1"}, log=self.log)
        deadline = time.monotonic() + timeout
        client = self.client(timeout=2.0)
        try:
            while True:
                if self.process.poll() is not None:
                    raise AssertionError(f"replica {self.url} exited with {self.process.returncode}:\n{self.log.read_text()}")
                with contextlib.suppress(Exception):
                    client.health()
                    return
                if time.monotonic() > deadline:
                    raise AssertionError(f"replica {self.url} did not answer within {timeout} s:\n{self.log.read_text()}")
                time.sleep(0.2)
        finally:
            client.close()

    def client(self, timeout: float = 30.0) -> CatalogServiceClient:
        return CatalogServiceClient(self.url, self.token, timeout=timeout)

    def health(self) -> dict[str, object]:
        client = self.client(timeout=10.0)
        try:
            return client.health()
        finally:
            client.close()

    def kill(self) -> None:
        """``kill -9``: no clean stop, no lease released."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
