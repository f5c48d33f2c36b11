"""The service as a process: stopping with requests in flight, restarting, two services on one home,
a token file of the user's, TLS."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.errors import ServiceError
from hms_catalog.remote import CatalogServiceClient
from tests.support.hms import Admin
from tests.support.service import running_service

pytestmark = pytest.mark.metastore


def _catalog(client: CatalogServiceClient, name: str, metastore_uri: str, **extra: str) -> None:
    client.create_catalog(name, {"type": "hms", "hive.metastore.uris": metastore_uri, **extra})


def test_sigterm_lets_requests_in_flight_finish_and_exits_0(home: Path, metastore_uri: str) -> None:
    with running_service(home) as service:
        client = service.client()
        _catalog(client, "hive", metastore_uri, **{"hive.enable_hms_events_incremental_sync": "true"})
        client.databases("hive")  # the catalog is live, its event follower running
        answers: list[Any] = []
        errors: list[BaseException] = []

        def ask(call: Any) -> None:
            mine = service.client()
            try:
                answers.append(call(mine))
            except BaseException as error:  # noqa: BLE001 - reported by the assertion below
                errors.append(error)
            finally:
                mine.close()

        in_flight = [
            threading.Thread(target=ask, args=(lambda c: c.changes("hive", since=10**9, wait=30),)),
            threading.Thread(target=ask, args=(lambda c: c.statement("SHOW DATABASES FROM hive"),)),
        ]
        for thread in in_flight:
            thread.start()
        time.sleep(0.5)
        began = time.monotonic()
        code, stderr = service.stop(timeout=10)
        stopped_in = time.monotonic() - began
        for thread in in_flight:
            thread.join(timeout=10)
        client.close()
    assert code == 0 and "hms-catalog service stopped" in stderr
    assert errors == [] and len(answers) == 2  # both got complete answers
    assert stopped_in < 10
    assert "Traceback" not in stderr


def test_a_restart_keeps_every_catalog_and_the_token(home: Path, metastore_uri: str) -> None:
    with running_service(home) as first:
        client = first.client()
        _catalog(client, "kept", metastore_uri)
        client.close()
        token = first.token
    with running_service(home) as second:
        client = second.client()
        assert [c["name"] for c in client.catalogs()] == ["kept"]
        assert "default" in client.databases("kept")
        client.close()
        assert second.token == token


def test_two_services_on_one_home_stay_consistent(home: Path, metastore_uri: str, admin: Admin, unique_name: str) -> None:
    admin.create_database(unique_name)
    admin.create_table(unique_name, "t", [("id", "int")])
    with running_service(home) as one, running_service(home) as two:
        first, second = one.client(), two.client()
        try:
            _catalog(first, "shared", metastore_uri)
            assert [c["name"] for c in second.catalogs()] == ["shared"]  # created through one, served by the other
            assert [c["name"] for c in second.table("shared", unique_name, "t")["columns"]] == ["id"]
            first.alter_catalog("shared", properties={"hive.metastore.client.pool.size": "3"})
            assert second.catalog("shared")["properties"]["hive.metastore.client.pool.size"] == "3"
            assert second.catalog("shared")["version"] == 2
            # A change behind the second's cache, refreshed through the first: the second serves it.
            assert [c["name"] for c in second.table("shared", unique_name, "t")["columns"]] == ["id"]
            table = admin.pool.call("get_table", unique_name, "t")
            table.sd.cols.append(type(table.sd.cols[0])(name="added", type="string", comment=""))
            admin.pool.call("alter_table", unique_name, "t", table)
            first.refresh("shared", unique_name, "t")
            assert [c["name"] for c in second.table("shared", unique_name, "t")["columns"]] == ["id", "added"]
        finally:
            first.close()
            second.close()


def test_a_token_file_of_ones_own(home: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("my-own-token-0123456789\n", encoding="utf-8")
    with running_service(home, "--token-file", str(token_file)) as service:
        assert not (home / "server.token").exists()
        mine = CatalogServiceClient(service.url, "my-own-token-0123456789")
        assert mine.catalogs() == []
        mine.close()
        wrong = CatalogServiceClient(service.url, "someone-elses-token-99")
        with pytest.raises(ServiceError, match="refused the request \\(401"):
            wrong.catalogs()
        wrong.close()


def test_bad_serve_arguments_are_clear(home: Path, tmp_path: Path) -> None:
    def serve(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "serve", *args],
                              capture_output=True, text=True, timeout=60, check=False)

    short = tmp_path / "short"
    short.write_text("abc", encoding="utf-8")
    assert "at least 16 characters" in serve("--token-file", str(short)).stderr
    assert "--tls-cert and --tls-key go together" in serve("--tls-cert", str(short)).stderr
    missing = serve("--tls-cert", str(tmp_path / "no.pem"), "--tls-key", str(tmp_path / "no.key"))
    assert missing.returncode == 1 and "no such file" in missing.stderr


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_tls(home: Path, tmp_path: Path, metastore_uri: str) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    with running_service(home, "--tls-cert", str(cert), "--tls-key", str(key)) as service:
        assert service.url.startswith("https://127.0.0.1:")
        verified = service.client(cafile=str(cert))
        _catalog(verified, "hive", metastore_uri)
        assert "default" in verified.databases("hive")
        verified.close()
        unverified = service.client()  # the system's CAs do not know a self-signed certificate
        with pytest.raises(ServiceError, match="cannot be reached.*CERTIFICATE_VERIFY_FAILED"):
            unverified.catalogs()
        unverified.close()
