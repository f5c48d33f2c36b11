"""A client given several replicas of the catalog service fails over between them, against real HTTP servers.

The fake replicas are small in-process HTTP/1.1 servers answering as ``hms-catalog serve`` does (JSON
bodies, errors as ``{"error": {"type", "message"}}``), each able to answer 503, to drop a connection
after reading a request, or to hold a long poll until told to cut it; they count what they received.
The last test runs the CLI against a real ``hms-catalog serve`` behind a dead URL.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from hms_catalog import open_session
from hms_catalog.errors import ConfigurationError, MetastoreUnavailableError, ServiceError
from hms_catalog.remote import CatalogServiceClient
from tests.support.service import served

TOKEN = "t" * 24


class FakeReplica:
    """One replica on 127.0.0.1; ``mode`` is "ok", "503", "drop" (read the request, close without an
    answer) or "hold" (a long poll waits for :meth:`cut`, then its connection is closed)."""

    def __init__(self, name: str, mode: str = "ok") -> None:
        self.name = name
        self.mode = mode
        self.requests: Counter[tuple[str, str]] = Counter()  # (method, path without query)
        self.polls: list[dict[str, list[str]]] = []  # the query of each change-feed request
        self.holding = threading.Event()
        self._released = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = False  # server_close joins them
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name=f"replica-{name}")
        self._thread.start()

    def cut(self) -> None:
        """Stop listening, then close the connection of a held long poll: the replica is gone."""
        self._stop_listening()
        self._released.set()

    def close(self) -> None:
        self._stop_listening()
        self._released.set()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:  # idle keep-alive connections: their handlers end at once
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._server.server_close()  # joins the handler threads

    def _stop_listening(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
            self._server.socket.close()

    def track(self, sock: socket.socket, opened: bool) -> None:
        with self._lock:
            (self._sockets.add if opened else self._sockets.discard)(sock)

    def answer(self, method: str, path: str, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]] | None:
        """Status and JSON body for a request, or None to close the connection without an answer."""
        with self._lock:
            self.requests[method, path] += 1
        if self.mode == "503":
            return 503, {"error": {"type": "MetastoreUnavailableError", "message": f"no metastore answered {self.name}"}}
        if self.mode == "drop":
            return None
        if path == "/v1/health":
            return 200, {"status": "ok", "version": "0.1.0", "home": self.name, "uptime_seconds": 1.0}
        if path == "/v1/catalogs" and method == "POST":
            return 200, {"name": "new", "comment": self.name, "properties": {}, "version": 1}
        if path == "/v1/catalogs":
            return 200, {"catalogs": [{"name": "hive", "comment": self.name}]}
        if path == "/v1/catalogs/hive/refresh" and method == "POST":
            return 200, {"catalog": "hive", "database": None, "table": None, "version": 8}
        if path == "/v1/catalogs/hive/changes":
            self.polls.append(query)
            if "wait" in query and self.mode == "hold":
                self.holding.set()
                self._released.wait(30)
                return None
            since = int(query.get("since", ["0"])[0])
            changes = [{"version": since + 1, "kind": "refresh", "object": "hive", "source": self.name}]
            return 200, {"current": since + 1, "oldest": 0, "truncated": False, "changes": changes}
        return 404, {"error": {"type": "NotFoundError", "message": f"no route {path}", "kind": "route", "name": path}}


def _handler(replica: FakeReplica) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as uvicorn answers

        def setup(self) -> None:
            super().setup()
            replica.track(self.connection, opened=True)

        def finish(self) -> None:
            replica.track(self.connection, opened=False)
            with contextlib.suppress(OSError):
                super().finish()

        def do_GET(self) -> None:
            self._respond()

        def do_POST(self) -> None:
            self._respond()

        def _respond(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))  # all of it: a close then sends FIN, not RST
            parts = urlsplit(self.path)
            answered = replica.answer(self.command, parts.path, parse_qs(parts.query))
            if answered is None:
                self.close_connection = True
                return
            status, body = answered
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: pytest shows what matters
            pass

    return Handler


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def replicas() -> Iterator[list[FakeReplica]]:
    """Three replicas ("a", "b", "c"), all answering; tests change their modes."""
    started = [FakeReplica(name) for name in "abc"]
    yield started
    for replica in started:
        replica.close()


@pytest.fixture
def dead() -> str:
    return f"http://127.0.0.1:{_closed_port()}"


@contextlib.contextmanager
def _client(*urls: str) -> Iterator[CatalogServiceClient]:
    client = CatalogServiceClient(list(urls), TOKEN, timeout=20, connect_timeout=5)
    try:
        yield client
    finally:
        client.close()


def test_urls_are_given_as_a_list_or_comma_separated_and_each_is_checked(dead: str) -> None:
    client = CatalogServiceClient(f" {dead}/ , https://b.example:8443,{dead}")
    assert client.urls == (dead, "https://b.example:8443") and client.url == dead
    assert CatalogServiceClient([dead, "http://c:1"]).urls == (dead, "http://c:1")
    for bad, named in ((f"{dead},ftp://b:1", "'ftp://b:1'"), (["http://a:1", "b:8181"], "'b:8181'"),
                       ("http://a:notaport", "'http://a:notaport'"), (" , ", "' , '")):
        with pytest.raises(ConfigurationError, match="catalog service URL") as raised:
            CatalogServiceClient(bad)
        assert named in str(raised.value)


def test_a_dead_first_url_leaves_the_request_to_the_next(replicas: list[FakeReplica], dead: str) -> None:
    a = replicas[0]
    with _client(dead, a.url) as client:
        assert client.health()["home"] == "a"
        assert client.url == a.url


def test_the_replica_that_answered_is_asked_first_from_then_on_in_every_thread(replicas: list[FakeReplica]) -> None:
    a, b, c = replicas
    a.mode = "503"
    with _client(a.url, b.url, c.url) as client:
        assert client.catalogs()[0]["comment"] == "b"
        a.mode = "ok"  # back, but b answers as well: requests stay with b
        assert client.health()["home"] == "b"
        seen: list[str] = []

        def elsewhere() -> None:
            seen.append(client.health()["home"])
            client.close()

        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
        assert seen == ["b"] and client.url == b.url
    assert a.requests == Counter({("GET", "/v1/catalogs"): 1})
    assert b.requests[("GET", "/v1/health")] == 2 and not c.requests


def test_a_503_sends_any_request_to_the_next_replica(replicas: list[FakeReplica]) -> None:
    a, b, _ = replicas
    a.mode = "503"
    with _client(a.url, b.url) as client:
        assert client.refresh("hive")["version"] == 8
    assert a.requests[("POST", "/v1/catalogs/hive/refresh")] == 1 and b.requests[("POST", "/v1/catalogs/hive/refresh")] == 1


def test_a_change_goes_to_the_next_replica_when_the_first_cannot_be_reached(replicas: list[FakeReplica], dead: str) -> None:
    b = replicas[1]
    with _client(dead, b.url) as client:
        assert client.refresh("hive")["version"] == 8
    assert b.requests[("POST", "/v1/catalogs/hive/refresh")] == 1


def test_every_replica_failing_is_a_service_error_naming_each_url_and_why(replicas: list[FakeReplica], dead: str) -> None:
    a = replicas[0]
    a.mode = "503"
    other = f"http://127.0.0.1:{_closed_port()}"
    with _client(dead, a.url, other) as client, pytest.raises(ServiceError) as raised:
        client.catalogs()
    message = str(raised.value)
    assert "no replica of the catalog service answered GET /v1/catalogs" in message
    assert f"{dead} cannot be reached: " in message and f"{other} cannot be reached: " in message
    assert f"{a.url} answered HTTP 503: no metastore answered a" in message
    with _client(dead) as client, pytest.raises(ServiceError, match=f"the catalog service at {dead} cannot be reached"):
        client.health()


def test_when_every_replica_answers_503_the_servers_error_is_raised(replicas: list[FakeReplica]) -> None:
    a, b, _ = replicas
    a.mode = b.mode = "503"
    with _client(a.url, b.url) as client, pytest.raises(MetastoreUnavailableError, match="no metastore answered b"):
        client.catalogs()


def test_a_change_the_server_received_is_not_sent_again_when_the_connection_drops(replicas: list[FakeReplica]) -> None:
    a, b, _ = replicas
    with _client(a.url, b.url) as client:
        assert client.health()["home"] == "a"  # a kept-alive connection: not even a reopened one resends the change
        a.mode = "drop"
        with pytest.raises(ServiceError, match="closed the connection.*may have been applied") as raised:
            client.create_catalog("new", {"type": "hms", "hive.metastore.uris": "thrift://h:9083"})
        assert a.url in str(raised.value)
    assert a.requests[("POST", "/v1/catalogs")] == 1
    assert b.requests[("POST", "/v1/catalogs")] == 0


def test_a_change_that_means_the_same_twice_goes_to_the_next_replica_when_the_connection_drops(
        replicas: list[FakeReplica]) -> None:
    """A REFRESH (and a plan) applied twice is applied once: a dropped answer is no reason to fail the caller."""
    a, b, _ = replicas
    with _client(a.url, b.url) as client:
        assert client.health()["home"] == "a"
        a.mode = "drop"
        assert client.refresh("hive")["version"] == 8 and client.url == b.url
    assert a.requests[("POST", "/v1/catalogs/hive/refresh")] == 1
    assert b.requests[("POST", "/v1/catalogs/hive/refresh")] == 1


def test_a_read_whose_connection_drops_goes_to_the_next_replica(replicas: list[FakeReplica]) -> None:
    a, b, _ = replicas
    a.mode = "drop"
    with _client(a.url, b.url) as client:
        assert client.catalogs()[0]["comment"] == "b" and client.url == b.url
    assert a.requests[("GET", "/v1/catalogs")] == 1


def test_a_long_poll_cut_mid_wait_resumes_on_the_next_replica_at_the_same_version(replicas: list[FakeReplica]) -> None:
    a, b, _ = replicas
    a.mode = "hold"
    with _client(a.url, b.url) as client:
        assert client.changes("hive", since=0)["current"] == 1  # from a, on a connection kept for the poll
        answers: list[dict[str, Any]] = []
        errors: list[BaseException] = []

        def poll() -> None:
            try:
                answers.append(client.changes("hive", since=5, wait=30, follower="driver-1"))
            except BaseException as error:  # noqa: BLE001 - reported by the test's thread
                errors.append(error)
            finally:
                client.close()

        thread = threading.Thread(target=poll)
        thread.start()
        assert a.holding.wait(10), "the long poll never reached replica a"
        a.cut()
        thread.join(30)
        assert not thread.is_alive() and errors == []
        assert answers[0]["changes"] == [{"version": 6, "kind": "refresh", "object": "hive", "source": "b"}]
        assert client.url == b.url
    assert a.polls[-1] == {"since": ["5"], "wait": ["30"], "follower": ["driver-1"]}
    assert b.polls == [a.polls[-1]]


def test_open_session_takes_a_list_of_urls(replicas: list[FakeReplica], dead: str) -> None:
    session = open_session(server=[dead, replicas[2].url], token=TOKEN)
    try:
        assert session.client.urls == (dead, replicas[2].url)
        assert session.client.health()["home"] == "c"
    finally:
        session.close()


def test_the_cli_fails_over_to_a_real_service(tmp_path: Path, dead: str) -> None:
    with served(tmp_path / "home") as server:
        run = subprocess.run(
            [sys.executable, "-m", "hms_catalog.cli", "--home", str(tmp_path / "elsewhere"), "--server", f"{dead},{server.url}",
             f"--token={server.token}", "--format", "json", "-e", "SHOW CATALOGS"],
            capture_output=True, text=True, timeout=120, env={**os.environ}, check=False,
        )
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout.splitlines()[0])
    assert answer["statement"] == "SHOW CATALOGS" and answer["columns"][0] == "CatalogName" and answer["rows"] == []
