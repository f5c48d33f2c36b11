"""The service as a process: stopping with requests in flight, restarting, two servers on one home, the
token file, a token file of one's own, TLS."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.errors import ServiceError, VersionMismatchError
from hms_catalog.remote import CatalogServiceClient
from tests.service.conftest import EVENTS, SECRET, HoldingRelay, hms_properties, self_signed_certificate
from tests.support.hms import Admin
from tests.support.service import served

pytestmark = [pytest.mark.metastore, pytest.mark.slow]


class InFlight:
    """A request made on a thread of its own, with a client of its own."""

    def __init__(self, client: CatalogServiceClient, call: Callable[[CatalogServiceClient], dict[str, Any]]) -> None:
        self.answer: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.answered_at = 0.0
        self._client = client
        self._call = call
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.answer = self._call(self._client)
        except BaseException as error:  # noqa: BLE001 - the test reads it
            self.error = error
        finally:
            self.answered_at = time.monotonic()
            self._client.close()


def test_sigterm_lets_requests_in_flight_finish_and_exits_0(home: Path, metastore_uri: str) -> None:
    with HoldingRelay(metastore_uri) as relay, served(home) as server:
        client = server.client()
        try:
            client.create_catalog("hive", hms_properties(metastore_uri, **EVENTS))
            client.create_catalog("slow", hms_properties(relay.uri))
            client.databases("hive")  # live, its event follower running
            current = client.changes("hive")["current"]
        finally:
            client.close()
        relay.hold_next(2.0)  # the statement's metastore call waits there while the server is told to stop
        statement = InFlight(server.client(), lambda c: c.statement("SHOW DATABASES FROM slow"))
        poll = InFlight(server.client(), lambda c: c.changes("hive", since=current, wait=30))
        # generous bounds: the statement's first use of its catalog (a pool, a connection) and the stop below take
        # seconds, not tens of them, but this machine's two cores may be shared with much else
        assert relay.holding.wait(timeout=30), "the statement never reached the metastore"
        poll.thread.join(timeout=0.5)
        assert poll.thread.is_alive() and statement.thread.is_alive()  # both in flight
        server.process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        code = server.stop(timeout=20)  # TimeoutExpired unless it exits within 20 s
        for request in (statement, poll):
            request.thread.join(timeout=10)
        stderr = server.stderr()
    assert code == 0 and "hms-catalog service stopped" in stderr
    assert statement.error is None and poll.error is None, (statement.error, poll.error)
    assert statement.answer is not None and ["default"] in statement.answer["rows"]  # a whole answer
    assert statement.answered_at > signalled  # it was answered after the signal, so it was in flight
    assert poll.answer is not None and poll.answer["changes"] == [] and poll.answer["current"] == current
    assert poll.answered_at - signalled < 10  # ended by the stop, not by its 30 s


def test_stop_signals_take_no_lock_so_a_second_one_cannot_hang_the_service() -> None:
    """SIGTERM's handler only marks the server to stop. When it set the stopping event itself, a second SIGTERM
    arriving while the first handler held the event's lock waited for it forever: the test above timed out so
    twice, the service's main thread stuck in two nested handlers. The event is set as the shutdown begins."""
    import uvicorn

    from service.serving import _Server

    class SetOnlyOffTheHandler(threading.Event):
        def set(self) -> None:
            raise AssertionError("the stopping event was set inside a signal handler")

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("no request is served")

    server = _Server(uvicorn.Config(app), SetOnlyOffTheHandler())
    server.handle_exit(signal.SIGTERM, None)
    server.handle_exit(signal.SIGTERM, None)  # the test's own stop() sends a second one
    assert server.should_exit


def test_a_restart_keeps_every_catalog_and_the_token(home: Path, metastore_uri: str) -> None:
    token_file = home / "server.token"
    assert not token_file.exists()
    with served(home) as first:
        assert first.token_path == token_file and first.announced_home == str(home)
        assert token_file.stat().st_mode & 0o777 == 0o600 and len(first.token) >= 32
        client = first.client()
        try:
            client.create_catalog("kept", hms_properties(metastore_uri, **{"x.password": SECRET}), comment="kept over restarts")
            client.create_catalog("also", hms_properties(metastore_uri))
            client.alter_catalog("also", properties={"hive.metastore.client.pool.size": "2"})
            before = client.catalogs()
        finally:
            client.close()
    written = token_file.stat().st_mtime_ns
    with served(home, home_after_serve=True) as second:  # --home after serve means the same
        assert second.announced_home == str(home) and second.token == first.token
        client = second.client()
        try:
            assert client.catalogs() == before
            assert client.catalog("kept")["properties"]["x.password"] == "******"
            assert "default" in client.databases("kept")
        finally:
            client.close()
    assert token_file.stat().st_mtime_ns == written and token_file.stat().st_mode & 0o777 == 0o600


def test_two_servers_on_one_home_serve_the_same_catalogs(home: Path, metastore_uri: str, admin: Admin,
                                                         unique_name: str) -> None:
    admin.create_database(unique_name)
    admin.create_table(unique_name, "t", [("id", "int")])
    with served(home) as one, served(home) as two:
        assert one.token == two.token and one.url != two.url
        first, second = one.client(), two.client()
        try:
            first.create_catalog("shared", hms_properties(metastore_uri))
            assert [c["name"] for c in second.catalogs()] == ["shared"]  # created through one, served by the other
            assert [c["name"] for c in second.table("shared", unique_name, "t")["columns"]] == ["id"]

            first.alter_catalog("shared", properties={"hive.metastore.client.pool.size": "3"}, if_version=1)
            shown = second.catalog("shared")
            assert shown["version"] == 2 and shown["properties"]["hive.metastore.client.pool.size"] == "3"
            with pytest.raises(VersionMismatchError, match="at version 2, not 1"):
                second.alter_catalog("shared", properties={"a.b": "c"}, if_version=1)  # one compare-and-set for both

            # A change behind both caches, refreshed through one: the other serves it at its next request.
            assert [c["name"] for c in first.table("shared", unique_name, "t")["columns"]] == ["id"]
            assert [c["name"] for c in second.table("shared", unique_name, "t")["columns"]] == ["id"]
            table = admin.pool.call("get_table", unique_name, "t")
            table.sd.cols.append(type(table.sd.cols[0])(name="added", type="string", comment=""))
            admin.pool.call("alter_table", unique_name, "t", table)
            assert [c["name"] for c in second.table("shared", unique_name, "t")["columns"]] == ["id"]  # cached
            first.refresh("shared", unique_name, "t")
            assert [c["name"] for c in second.table("shared", unique_name, "t")["columns"]] == ["id", "added"]

            # A DDL through one: the other serves it at its next request, with no REFRESH and no event poll.
            first.alter_table("shared", unique_name, "t", [{"op": "add_columns", "columns": [{"name": "by_ddl", "type": "int"}]}])
            assert [c["name"] for c in second.table("shared", unique_name, "t")["columns"]] == ["id", "added", "by_ddl"]
            first.create_table("shared", unique_name, {"name": "made", "columns": [{"name": "x", "type": "int"}]})
            assert "made" in second.tables("shared", unique_name)

            second.create_catalog("other", hms_properties(metastore_uri))
            second.alter_catalog("shared", rename="renamed")
            assert [c["name"] for c in first.catalogs()] == ["other", "renamed"]
            assert [c["name"] for c in first.table("renamed", unique_name, "t")["columns"]] == ["id", "added", "by_ddl"]
            second.drop_catalog("other")
            assert [c["name"] for c in first.catalogs()] == ["renamed"]
        finally:
            first.close()
            second.close()


def test_a_token_file_of_ones_own(home: Path, tmp_path: Path) -> None:
    own = tmp_path / "token"
    own.write_text("my-own-token-0123456789\n", encoding="utf-8")
    with served(home, "--token-file", str(own)) as server:
        assert server.token_path == own and server.token == "my-own-token-0123456789"
        assert not (home / "server.token").exists()
        assert server.request("GET", "/v1/catalogs", token="my-own-token-0123456789").json() == {"catalogs": []}
        refused = server.request("GET", "/v1/catalogs", token="someone-elses-token-99")
        assert refused.status == 401
        client = server.client(token="someone-elses-token-99")
        try:
            with pytest.raises(ServiceError, match=r"refused the request \(401"):
                client.catalogs()
        finally:
            client.close()


def test_bad_serve_arguments_are_refused_clearly(home: Path, tmp_path: Path) -> None:
    short = tmp_path / "short"
    short.write_text("abc", encoding="utf-8")
    for arguments, message in (
        (["--token-file", str(short)], "at least 16 characters"),
        (["--tls-cert", str(short)], "--tls-cert and --tls-key go together"),
    ):
        ran = subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "serve", "--port", "0", *arguments],
                             capture_output=True, text=True, timeout=60, check=False)
        assert ran.returncode == 1 and message in ran.stderr and "Traceback" not in ran.stderr, ran.stderr


def test_tls(home: Path, tmp_path: Path, metastore_uri: str) -> None:
    cert, key = self_signed_certificate(tmp_path)
    with served(home, "--tls-cert", str(cert), "--tls-key", str(key), cafile=str(cert)) as server:
        assert server.url.startswith("https://127.0.0.1:")
        verified = server.client()  # with cafile=cert
        try:
            verified.create_catalog("hive", hms_properties(metastore_uri))
            assert "default" in verified.databases("hive")
            assert verified.health()["status"] == "ok"
        finally:
            verified.close()
        unverified = server.client(cafile=None)  # the system's CAs do not know a self-signed certificate
        try:
            with pytest.raises(ServiceError, match="CERTIFICATE_VERIFY_FAILED"):
                unverified.catalogs()
        finally:
            unverified.close()
        plain = CatalogServiceClient(server.url.replace("https://", "http://"), server.token, timeout=10)
        try:
            with pytest.raises(ServiceError):
                plain.catalogs()  # no answer in clear text
        finally:
            plain.close()
