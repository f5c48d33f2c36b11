"""``hms-catalog serve --thrift-port``: the endpoint in the service process, on the catalogs the REST API serves.

A change made through the endpoint is a change of the service's own catalog: a long poll of the REST change
feed wakes with it (source ``thrift``), the audit log has its line with the client's address and user, and
``/v1/health`` says where the endpoint is. A Spark driver following the feed sees what a long poll sees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.manager import CatalogManager
from hms_catalog.state import open_definitions
from service.thrift.server import is_loopback
from tests.service.test_freshness import LongPoll
from tests.service.thrift.conftest import thrift_client
from tests.support.hms import storage
from tests.support.service import served

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test


def _define(home: Path, metastore_uri: str) -> None:
    manager = CatalogManager(open_definitions(home, None))
    try:
        manager.create("hive", {"type": "hms", "hive.metastore.uris": metastore_uri, "thrift.access": "write"})
    finally:
        manager.close()


def test_a_change_through_the_endpoint_wakes_the_change_feed_and_is_audited(home: Path, metastore_uri: str,
                                                                             unique_name: str, tmp_path: Path) -> None:
    _define(home, metastore_uri)
    with served(home, "--thrift-port", "0") as server:
        health: dict[str, Any] = server.request("GET", "/v1/health").json()
        uri = health["thrift"]["uri"]
        assert uri.startswith("thrift://127.0.0.1:") and health["thrift"]["primary"] == "hive"
        assert any(line.startswith(f"hms-catalog thrift endpoint at {uri} ") for line in server.stderr().splitlines())
        api = server.client()
        since = int(api.changes("hive", since=0)["current"])
        poll = LongPoll(server, "hive", since)
        assert poll.waiting()
        port = urlsplit(uri).port or 0
        with thrift_client(port) as client:
            client.set_ugi("etl-user", ["etl"])
            client.create_database(ttypes.Database(name=unique_name, locationUri=(tmp_path / unique_name).as_uri(),
                                                   parameters={}))
            table = ttypes.Table(tableName="t", dbName=unique_name, owner="etl-user", tableType="EXTERNAL_TABLE",
                                 sd=storage([("id", "int")], (tmp_path / unique_name / "t").as_uri()),
                                 partitionKeys=[], parameters={"EXTERNAL": "TRUE"})
            client.create_table(table)
            assert client.get_table(unique_name, "t").sd.cols[0].name == "id"
            client.drop_table(unique_name, "t", True)
            client.drop_database(unique_name, True, True)
        woke = poll.answer(within=30)
        assert {"kind": "added", "object": f"database {unique_name}", "source": "thrift"} in [
            {key: change[key] for key in ("kind", "object", "source")} for change in woke["changes"]], woke
        logged = [(c["kind"], c["object"], c["source"]) for c in api.changes("hive", since=since)["changes"]]
        api.close()
        assert logged == [("added", f"database {unique_name}", "thrift"), ("added", f"table {unique_name}.t", "thrift"),
                          ("dropped", f"table {unique_name}.t", "thrift"), ("dropped", f"database {unique_name}", "thrift")]
    lines = [json.loads(line) for line in (home / "audit.log").read_text().splitlines()]
    thrift_lines = [line for line in lines if line.get("via") == "thrift"]
    assert [line["statement"] for line in thrift_lines] == [
        f"thrift create_database {unique_name}", f"thrift create_table {unique_name}.t",
        f"thrift drop_table {unique_name}.t", f"thrift drop_database {unique_name}"]
    assert all(line["user"] == "etl-user" and line["client"].startswith("127.0.0.1:") and line["outcome"] == "ok"
               for line in thrift_lines), thrift_lines


def test_the_endpoint_binds_beyond_loopback_only_when_told_it_is_insecure(home: Path, metastore_uri: str) -> None:
    """Without Kerberos it authenticates no client: an address other machines reach needs --thrift-insecure, which the
    log repeats (with Kerberos it needs neither: tests/kerberos/test_thrift_endpoint.py)."""
    _define(home, metastore_uri)
    for host in ("0.0.0.0", "::", "192.0.2.7"):
        refused = subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "serve", "--port", "0",
                                  "--thrift-port", "0", "--thrift-host", host],
                                 capture_output=True, text=True, timeout=60, check=False)
        assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
        assert f"--thrift-host {host} is reached from other machines" in refused.stderr, refused.stderr
        assert "--thrift-insecure" in refused.stderr and "hms-catalog service at" not in refused.stderr
        assert "give it Kerberos (--thrift-principal, --thrift-keytab)" in refused.stderr
    unread = subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "serve", "--port", "0",
                             "--thrift-port", "0", "--thrift-host", "0.0.0.0"], capture_output=True, text=True, timeout=60,
                            check=False, env={**os.environ, "HMS_CATALOG_THRIFT_INSECURE": "maybe"})
    assert unread.returncode != 0 and "Traceback" not in unread.stderr, unread.stderr  # never taken for off, or on
    assert "$HMS_CATALOG_THRIFT_INSECURE must be 1 or 0" in unread.stderr and "'maybe'" in unread.stderr, unread.stderr
    with served(home, "--thrift-port", "0", "--thrift-host", "localhost") as server:
        assert "warning: the thrift endpoint" not in server.stderr()
    with served(home, "--thrift-port", "0", "--thrift-host", "0.0.0.0", "--thrift-insecure") as server:
        uri = server.request("GET", "/v1/health").json()["thrift"]["uri"]
        warned = [line for line in server.stderr().splitlines() if line.startswith("warning: the thrift endpoint")]
        assert warned and "authenticates no client" in warned[0] and "--thrift-insecure" in warned[0], server.stderr()
        with thrift_client(urlsplit(uri).port or 0) as client:
            assert "default" in client.get_all_databases()


def test_loopback_is_an_address_of_this_machine_only() -> None:
    assert all(is_loopback(host) for host in ("127.0.0.1", "127.9.9.9", "::1", "[::1]", "localhost", "LOCALHOST"))
    assert not any(is_loopback(host) for host in ("0.0.0.0", "::", "10.0.0.7", "example.org", "localhost.example.org"))
