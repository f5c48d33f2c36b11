"""Real ``hms-catalog serve`` processes for tests.

:func:`served` starts a server on a home, finds it by the line it prints before taking requests, waits
until ``/v1/health`` answers, and on exit stops it and checks that nothing outlived it: no process of its,
no listening port, no traceback on its stderr. Both it and :func:`killable` fork the server from the fork
server (:mod:`tests.support.forkserver`): a process of its own, started without an interpreter's start-up.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import pytest

from hms_catalog.remote import CatalogServiceClient
from tests.support.forkserver import ForkedProcess, fork_cli

__all__ = ["ANNOUNCED", "Answer", "STOP_TIMEOUT", "Server", "killable", "send", "served"]

START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
ANNOUNCED = re.compile(r"^hms-catalog service at (?P<url>https?://\S+) for (?P<home>.+) \(token in (?P<token>.+)\)$")


class Answer(NamedTuple):
    """One HTTP answer: status, headers (lower-case names) and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def error(self) -> dict[str, Any]:
        """The ``error`` object every failure answers with, checked to have its type and message."""
        error = self.json()["error"]
        assert isinstance(error["type"], str) and isinstance(error["message"], str), error
        return dict(error)


@dataclass
class Server:
    """A running ``hms-catalog serve`` process and where to reach it."""

    url: str
    token: str
    token_path: Path
    home: Path
    announced_home: str
    process: subprocess.Popen[str] | ForkedProcess
    cafile: str | None = None
    _lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    _seen: list[str] = field(default_factory=list)
    _reader: threading.Thread | None = None

    @property
    def port(self) -> int:
        return urlsplit(self.url).port or 0

    def client(self, token: str | None = None, **options: Any) -> CatalogServiceClient:
        """A REST client of this server (its own token unless ``token`` is given); close it after use."""
        options.setdefault("cafile", self.cafile)
        return CatalogServiceClient(self.url, token if token is not None else self.token, **options)

    def connection(self, timeout: float = 60.0) -> http.client.HTTPConnection:
        """A plain HTTP(S) connection to the server, for requests no typed client would send."""
        parts = urlsplit(self.url)
        if parts.scheme == "https":
            return http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=timeout,
                                               context=ssl.create_default_context(cafile=self.cafile))
        return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)

    def request(self, method: str, path: str, body: bytes | Mapping[str, Any] | None = None, *,
                headers: Mapping[str, str] | None = None, token: str | None = "") -> Answer:
        """One request on a connection of its own. A mapping body is sent as JSON; ``token``: "" the
        server's own, None no Authorization header, anything else that bearer token."""
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token or self.token}"
        payload: bytes | None
        if isinstance(body, Mapping):
            payload = json.dumps(body).encode("utf-8")
            sent.setdefault("Content-Type", "application/json")
        else:
            payload = body
        connection = self.connection()
        try:
            return send(connection, method, path, payload, sent)
        finally:
            connection.close()

    def metrics(self) -> str:
        answer = self.request("GET", "/metrics")
        assert answer.status == 200 and answer.headers["content-type"].startswith("text/plain"), answer
        return answer.body.decode("utf-8")

    def stderr(self) -> str:
        """All the server wrote to stderr so far."""
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self._seen.append(line)
        return "".join(self._seen)

    def descendants(self) -> set[int]:
        """Processes started by the server (a Spark JVM, say), found through /proc."""
        found: set[int] = set()
        pending = [self.process.pid]
        while pending:
            pid = pending.pop()
            for children in Path(f"/proc/{pid}/task").glob("*/children"):
                with contextlib.suppress(OSError):
                    for child in map(int, children.read_text().split()):
                        if child not in found:
                            found.add(child)
                            pending.append(child)
        return found

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM and wait up to ``timeout`` seconds for the exit (``TimeoutExpired`` after it); the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired as error:
            # what it was doing and what it said, then it is killed: a hung server tells why and is not left behind
            stacks = _python_stacks(self.process.pid)
            self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
            raise StopTimeout(str(error.cmd), error.timeout, said=self.stderr(), threads=stacks) from None
        if self._reader is not None:
            self._reader.join(timeout=5)
        self.stderr()
        return code


class StopTimeout(subprocess.TimeoutExpired):
    """A server that did not exit in time after SIGTERM: its message carries its stderr and its threads' stacks."""

    def __init__(self, cmd: str, timeout: float, *, said: str, threads: str) -> None:
        super().__init__(cmd, timeout)
        self.said = said
        self.threads = threads

    def __str__(self) -> str:
        return f"{super().__str__()}\n--- its stderr ---\n{self.said}\n--- its threads ---\n{self.threads}"


def _python_stacks(pid: int) -> str:
    """Every thread's Python stack in process ``pid`` (py-spy, when it is installed), for a hang's report."""
    spy = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if spy is None:
        return "(no py-spy to show the threads' stacks)"
    try:
        return subprocess.run([spy, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"(py-spy dump failed: {error})"


def tokens_file(path: Path, tokens: Mapping[str, Any]) -> Path:
    """``serve --tokens``' file at ``path``: ``tokens`` as JSON, readable by its owner only (the service refuses
    a tokens file others may read)."""
    path.write_text(json.dumps(tokens), encoding="utf-8")
    path.chmod(0o600)
    return path


def send(connection: http.client.HTTPConnection, method: str, path: str, body: bytes | None,
         headers: Mapping[str, str]) -> Answer:
    """One request on ``connection`` (kept open for the next)."""
    connection.request(method, path, body=body, headers=dict(headers))
    response = connection.getresponse()
    return Answer(response.status, {name.lower(): value for name, value in response.getheaders()}, response.read())


@contextlib.contextmanager
def served(home: Path, *extra: str, home_after_serve: bool = False, cafile: str | None = None) -> Iterator[Server]:
    """``hms-catalog serve --port 0`` on ``home`` with ``extra`` arguments, until the block ends.

    ``home_after_serve``: give ``--home`` after ``serve`` rather than before it. ``cafile``: the
    certificate to trust when it serves https. On a clean exit of the block, checks that the server
    stopped (SIGTERM) with exit code 0 and left nothing behind.
    """
    where = ["serve", "--home", str(home)] if home_after_serve else ["--home", str(home), "serve"]
    process = fork_cli([*where, "--port", "0", *extra], env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:  # from the start, so that a full pipe never stalls the server
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=drain, name=f"serve-{process.pid}-stderr", daemon=True)
    reader.start()
    server: Server | None = None
    children: set[int] = set()
    try:
        server = _started(process, lines, reader, home, cafile)
        yield server
        children = server.descendants()
        code = server.stop()
        assert code == 0, f"the server exited with {code}:\n{server.stderr()}"
    finally:
        if process.poll() is None:  # the block failed, or the server did not stop: end it anyway
            children |= server.descendants() if server is not None else set()
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        reader.join(timeout=5)
        if process.stderr is not None:
            process.stderr.close()
    # Reached only when the block and the stop succeeded: what must not outlive the server.
    assert server is not None
    assert not reader.is_alive()
    survivors = [pid for pid in children if _alive(pid)]
    for pid in survivors:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert survivors == [], f"processes of the server outlived it: {survivors}"
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=2).close()
    assert "Traceback" not in server.stderr(), server.stderr()
    assert server.stderr().rstrip().endswith("hms-catalog service stopped"), server.stderr()


@contextlib.contextmanager
def killable(home: Path, *extra: str) -> Iterator[Server]:
    """``hms-catalog serve`` on ``home`` for a test that kills it (``server.process.kill()``): on exit it is
    killed if it still runs, and nothing about how it stopped is checked. Forked from the fork server
    (:mod:`tests.support.forkserver`): a kill test restarts it many times, each in milliseconds."""
    process = fork_cli(["--home", str(home), "serve", "--port", "0", *extra], env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=drain, name=f"serve-{process.pid}-stderr", daemon=True)
    reader.start()
    try:
        yield _started(process, lines, reader, home, None)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        reader.join(timeout=5)
        if process.stderr is not None:
            process.stderr.close()


def _started(process: subprocess.Popen[str] | ForkedProcess, lines: queue.Queue[str | None], reader: threading.Thread, home: Path,
             cafile: str | None) -> Server:
    """The server once it has announced itself and answers ``/v1/health``."""
    deadline = time.monotonic() + START_TIMEOUT
    seen: list[str] = []
    announced = None
    while announced is None:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"the server did not announce itself in {START_TIMEOUT:g} s:\n{''.join(seen)}"
        try:
            line = lines.get(timeout=min(remaining, 0.5))
        except queue.Empty:
            continue
        if line is None:
            raise AssertionError(f"the server exited with {process.wait()} before serving:\n{''.join(seen)}")
        seen.append(line)
        announced = ANNOUNCED.match(line.rstrip("\n"))
    token_path = Path(announced.group("token"))
    server = Server(
        url=announced.group("url"), token=token_path.read_text(encoding="utf-8").strip(), token_path=token_path,
        home=home, announced_home=announced.group("home"), process=process, cafile=cafile, _lines=lines, _seen=seen,
        _reader=reader,
    )
    while True:
        try:
            answer = server.request("GET", "/v1/health", token=None)
            if answer.status == 200:
                assert answer.json()["status"] == "ok", answer
                return server
        except OSError:
            pass  # not listening yet
        assert process.poll() is None, f"the server exited with {process.returncode}:\n{server.stderr()}"
        assert time.monotonic() < deadline, f"/v1/health did not answer in {START_TIMEOUT:g} s:\n{server.stderr()}"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs still (a zombie waiting for a parent that is not ours counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")
