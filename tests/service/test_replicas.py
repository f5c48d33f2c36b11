"""Two ``serve`` processes on one home are two replicas of one SQLite store: one numbering, one follower."""

from __future__ import annotations

import os
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.errors import VersionMismatchError
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.remote import CatalogServiceClient
from tests.service.conftest import EVENTS, hms_properties
from tests.support.forkserver import run_cli
from tests.support.hms import Admin
from tests.support.service import Server, served, tokens_file

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test


def _changes(server: Server, catalog: str, since: int = 0) -> list[tuple[int, str, str, str]]:
    client = server.client()
    try:
        return [(c["version"], c["kind"], c["object"], c["source"]) for c in client.changes(catalog, since)["changes"]]
    finally:
        client.close()


def _store_health(server: Server) -> dict[str, Any]:
    client = server.client()
    try:
        return dict(client.health()["store"])
    finally:
        client.close()


def _eventually(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = check()
            if found:
                return found
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {check}")
        time.sleep(0.1)


def test_two_serves_on_one_home_number_changes_once_and_follow_events_from_one(
        home: Path, metastore_uri: str, admin: Admin, unique_name: str) -> None:
    admin.create_database(unique_name)
    admin.create_table(unique_name, "t", [("id", "int")])
    with served(home) as one, served(home) as two:
        first, second = one.client(), two.client()
        try:
            first.create_catalog("c", hms_properties(metastore_uri, **EVENTS))
            for client in (first, second):  # both replicas use the catalog: both start a follower, one may follow
                assert client.tables("c", unique_name) == ["t"]
            first.refresh("c", unique_name, "t")
            second.refresh("c", unique_name)
            # One numbering: each replica sees both REFRESHes, at the same versions, at its next request.
            assert _changes(one, "c") == _changes(two, "c")
            assert [(kind, obj) for _, kind, obj, _ in _changes(one, "c")] == [
                ("invalidated", f"table {unique_name}.t"), ("invalidated", f"database {unique_name}")]

            # Exactly one replica follows the metastore's events, and both say which.
            def leader() -> str:
                views = [_store_health(server)["event_followers"]["c"] for server in (one, two)]
                assert views[0]["holder"] == views[1]["holder"] and views[0]["live"]
                return str(views[0]["holder"])

            holder = _eventually(leader)
            replicas = {_store_health(server)["replica"]: server for server in (one, two)}
            assert holder in replicas
            before = _changes(one, "c")[-1][0]
            admin.create_table(unique_name, "made_outside", [("x", "int")])
            added = f"table {unique_name}.made_outside"
            _eventually(lambda: any(obj == added for _, _, obj, _ in _changes(two, "c", before)))
            assert _changes(one, "c", before) == _changes(two, "c", before)
            assert [source for _, _, obj, source in _changes(one, "c", before) if obj == added] == ["event"]  # once
            assert "made_outside" in second.tables("c", unique_name) and "made_outside" in first.tables("c", unique_name)

            # The follower stops: the other takes the lease over (a clean stop releases it at once).
            survivor = next(server for name, server in replicas.items() if name != holder)
            replicas[holder].stop()
            survivor_name = next(name for name in replicas if name != holder)
            survivor_client = survivor.client()
            survivor_client.tables("c", unique_name)
            _eventually(lambda: _store_health(survivor)["event_followers"]["c"]["holder"] == survivor_name)
            lease = _store_health(survivor)["event_followers"]["c"]
            assert lease["lease"] >= 2  # a new number: the old holder's late writes are refused
            mark = _changes(survivor, "c")[-1][0]
            admin.drop_table(unique_name, "made_outside")
            _eventually(lambda: [(kind, obj, source) for _, kind, obj, source in _changes(survivor, "c", mark)]
                        == [("dropped", added, "event")])
            survivor_client.close()
        finally:
            first.close()
            second.close()


def test_the_change_log_survives_a_restart(home: Path, metastore_uri: str) -> None:
    with served(home) as server:
        client = server.client()
        client.create_catalog("c", hms_properties(metastore_uri))
        client.refresh("c")
        client.refresh("c")
        before = client.changes("c")
        client.close()
    with served(home) as again:
        client = again.client()
        after = client.changes("c")
        client.refresh("c")
        assert after["changes"] == before["changes"] and after["current"] == before["current"] == 2
        assert [c["version"] for c in client.changes("c", since=2)["changes"]] == [3]
        client.close()


def test_named_tokens_set_on_one_replica_are_accepted_by_the_other(home: Path, tmp_path: Path) -> None:
    """``serve --tokens`` stores the named tokens (as digests) for every replica on the store."""
    read_token = "a-read-token-for-every-replica-0001"
    tokens = tokens_file(tmp_path / "tokens.json", {"tokens": [{"name": "ro", "token": read_token, "access": "read"}]})
    with served(home, "--tokens", str(tokens)) as one, served(home) as two:
        for server in (one, two):
            reader = server.client(token=read_token)
            try:
                assert reader.catalogs() == []
            finally:
                reader.close()
            refused = server.request("POST", "/v1/catalogs", {"name": "nope", "properties": {"type": "hms"}}, token=read_token)
            assert refused.status == 403 and refused.error()["type"] == "ForbiddenError" and "'ro'" in refused.error()["message"]
        assert two.request("GET", "/v1/catalogs", token="wrong-token-of-nobody-0000").status == 401
    assert read_token not in (home / "catalog.db").read_bytes().decode("latin-1")


def test_an_iceberg_token_issued_by_one_replica_is_accepted_by_the_other_until_its_named_token_is_revoked(
        home: Path, tmp_path: Path, metastore_uri: str) -> None:
    """The Iceberg OAuth exchange's tokens are checked against the shared named tokens: another replica, or a
    restarted one, accepts them; a ``serve --tokens`` that drops the named token ends them on every replica."""
    read_token = "a-read-token-for-every-replica-0002"
    tokens = tokens_file(tmp_path / "tokens.json", {"tokens": [{"name": "ro", "token": read_token, "access": "read"}]})
    none = tokens_file(tmp_path / "none.json", {"tokens": []})
    form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": "ro", "client_secret": read_token}).encode()
    config = "/iceberg/v1/config?warehouse=c"
    with served(home, "--tokens", str(tokens)) as one:
        client = one.client()
        try:
            client.create_catalog("c", hms_properties(metastore_uri))
        finally:
            client.close()
        answer = one.request("POST", "/iceberg/v1/oauth/tokens", form, token=None,
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert answer.status == 200, answer
        issued = answer.json()["access_token"]
        assert one.request("GET", config, token=issued).status == 200
    with served(home) as two:  # the issuer is gone: a replica that never saw the exchange
        assert two.request("GET", config, token=issued).status == 200
        with served(home, "--tokens", str(none)):
            _eventually(lambda: two.request("GET", config, token=issued).status == 401, timeout=15)
        refused = two.request("GET", config, token=issued)
        assert refused.status == 401 and refused.json()["error"]["type"] == "NotAuthorizedException"


def test_a_table_version_read_on_one_replica_is_the_one_the_other_checks(home: Path, metastore_uri: str, admin: Admin,
                                                                         unique_name: str) -> None:
    """If-Match across replicas: a table's version is its newest logged change, the same on every replica."""
    admin.create_database(unique_name)
    admin.create_table(unique_name, "t", [("id", "int")])
    with served(home) as one, served(home) as two:
        first, second = one.client(), two.client()
        try:
            first.create_catalog("c", hms_properties(metastore_uri))
            version = first.table("c", unique_name, "t")["version"]
            assert second.table("c", unique_name, "t")["version"] == version
            change = [{"op": "set_properties", "properties": {"k": "v"}}]
            second.alter_table("c", unique_name, "t", change, if_version=version)
            newer = first.table("c", unique_name, "t")["version"]
            assert newer > version and second.table("c", unique_name, "t")["version"] == newer
            with pytest.raises(VersionMismatchError, match=f"at version {newer}, not {version}"):
                first.alter_table("c", unique_name, "t", change, if_version=version)
        finally:
            first.close()
            second.close()


def test_a_cold_table_asked_of_two_replicas_by_many_clients_costs_at_most_two_loads(
        home: Path, metastore_uri: str, admin: Admin, metastore: EmbeddedMetastore, unique_name: str) -> None:
    """Metastore load stays bounded as replicas grow: one load per replica (single flight in each), and warm
    reads none."""
    admin.create_database(unique_name)
    admin.create_table(unique_name, "cold", [("id", "int")])
    with served(home) as one, served(home) as two:
        setup = one.client()
        setup.create_catalog("c", hms_properties(metastore_uri))
        setup.close()
        clients = [server.client() for server in (one, two) for _ in range(8)]
        try:
            for client in clients:
                assert client.databases("c")  # every client's replica has the catalog live and connected
            mark = len(metastore.audit_file.read_text(encoding="utf-8", errors="replace").splitlines())
            barrier = threading.Barrier(len(clients))

            def load(client: CatalogServiceClient) -> None:
                barrier.wait()
                try:
                    for _ in range(5):  # the first cold at once, the others warm
                        client.table("c", unique_name, "cold")
                finally:
                    client.close()  # this thread's connection (each thread has its own)

            threads = [threading.Thread(target=load, args=(client,)) for client in clients]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            lines = metastore.audit_file.read_text(encoding="utf-8", errors="replace").splitlines()[mark:]
            loads = sum(1 for line in lines if line.rstrip().endswith(f" get_table : db={unique_name} tbl=cold"))
            assert 1 <= loads <= 2, loads  # 16 clients x 5 reads over two replicas
        finally:
            for client in clients:
                client.close()


def test_an_event_lease_that_cannot_be_kept_stops_the_start_naming_it(tmp_path: Path) -> None:
    """``--event-lease`` (how soon another replica takes a dead one's following over; tests/service/
    test_replicas_postgres.py shows it moving within it) must be a finite number of seconds, at least one (it is
    renewed every third of it), from the option or from the environment."""
    for given in ("0", "0.2", "inf", "nan"):
        ran = run_cli(["--home", str(tmp_path), "serve", "--port", "0", "--event-lease", given], timeout=60)
        assert ran.returncode == 2 and f"--event-lease must be at least 1 second(s), got {given}" in ran.stderr, ran.stderr
    ran = run_cli(["--home", str(tmp_path), "serve", "--port", "0"], env={**os.environ, "HMS_CATALOG_EVENT_LEASE": "soon"},
                  timeout=60)
    assert ran.returncode == 1 and "$HMS_CATALOG_EVENT_LEASE must be a number of seconds, got 'soon'" in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr
