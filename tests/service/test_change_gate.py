"""One behaviour suite for the change gate, run over the REST API, Iceberg REST and the thrift endpoint alike.

One served process (named tokens, a thrift endpoint) and one change, a database made, through each front
end. Whichever way it came, the change is one catalog event: audited with its actor and front end, exactly
one version and one change-log entry, the caches dropped (the next listing has it with no REFRESH) and
announced to the home's other processes. A refusal is audited, changes nothing and records no version.
A token whose entry lists catalogs reads only those, through each HTTP front end.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from thrift.Thrift import TException

from hms_catalog.client.hive_thrift import ttypes
from tests.service.thrift.conftest import thrift_client
from tests.support.service import Server, served, tokens_file

WRITE_TOKEN = "gate-etl-token-of-the-tests-0001"
READ_TOKEN = "gate-read-token-of-the-tests-002"
SHUT_READER = "gate-shut-reader-of-the-tests-03"
TOKENS = {"tokens": [{"name": "etl", "token": WRITE_TOKEN, "access": "write", "catalogs": ["gate", "shut"]},
                     {"name": "ro", "token": READ_TOKEN, "access": "read"},
                     {"name": "shut-ro", "token": SHUT_READER, "access": "read", "catalogs": ["shut"]}]}
FRONT_ENDS = ("rest", "iceberg-rest", "thrift")
SOURCE = {"rest": "ddl", "iceberg-rest": "iceberg-rest", "thrift": "thrift"}  # the change log's source of each


@pytest.fixture(scope="module")
def gate_service(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("gate")
    tokens = tokens_file(directory / "tokens.json", TOKENS)
    with served(directory / "home", "--tokens", str(tokens), "--thrift-port", "0", "--thrift-primary", "gate") as running:
        client = running.client()
        try:
            base = {"type": "hms", "hive.metastore.uris": metastore_uri}
            client.create_catalog("gate", {**base, "thrift.access": "write"})
            client.create_catalog("shut", base)  # no thrift writes: the ceiling over any grant
        finally:
            client.close()
        yield running


def _thrift_port(server: Server) -> int:
    return urlsplit(server.request("GET", "/v1/health").json()["thrift"]["uri"]).port or 0


def _create_database(server: Server, front_end: str, catalog: str, name: str, token: str, location: Path) -> int:
    """Make database ``name`` in ``catalog`` through ``front_end``: the HTTP status, or 200/500 for thrift."""
    if front_end == "rest":
        return server.request("POST", f"/v1/catalogs/{catalog}/databases",
                              {"name": name, "location": location.as_uri()}, token=token).status
    if front_end == "iceberg-rest":
        return server.request("POST", f"/iceberg/v1/{catalog}/namespaces",
                              {"namespace": [name], "properties": {"location": location.as_uri()}}, token=token).status
    prefixed = name if catalog == "gate" else f"{catalog}__{name}"  # gate is the primary: the others are prefixed
    with thrift_client(_thrift_port(server)) as client:
        client.set_ugi("etl-user", ["etl"])
        try:
            client.create_database(ttypes.Database(name=prefixed, locationUri=location.as_uri(), parameters={}))
        except TException:
            return 500
    return 200


def _audit_line(server: Server, name: str) -> dict[str, Any]:
    lines = [json.loads(line) for line in (server.home / "audit.log").read_text(encoding="utf-8").splitlines()]
    found = [line for line in lines if name in line["statement"]]
    assert len(found) == 1, found  # one line for the one change, whichever front end
    return found[0]


def _announced(server: Server, database: str) -> list[dict[str, Any]]:
    path = server.home / "refreshes.log"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    return [line for line in lines if line["database"] == database]


def _databases(server: Server, catalog: str) -> list[str]:
    answer: list[str] = server.request("GET", f"/v1/catalogs/{catalog}/databases").json()["databases"]
    return answer


def _changes(server: Server, catalog: str, since: int) -> dict[str, Any]:
    answer: dict[str, Any] = server.request("GET", f"/v1/catalogs/{catalog}/changes?since={since}").json()
    return answer


@pytest.fixture
def dropped(gate_service: Server) -> Iterator[Callable[[str, str], None]]:
    made: list[tuple[str, str]] = []
    yield lambda catalog, name: made.append((catalog, name))
    for catalog, name in made:
        gate_service.request("DELETE", f"/v1/catalogs/{catalog}/databases/{name}?cascade=true")


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_a_change_is_one_audited_announced_catalog_event(gate_service: Server, front_end: str, unique_name: str,
                                                         tmp_path: Path, dropped: Callable[[str, str], None]) -> None:
    assert unique_name not in _databases(gate_service, "gate")  # the listing is cached now
    before = int(_changes(gate_service, "gate", 0)["current"])
    dropped("gate", unique_name)

    assert _create_database(gate_service, front_end, "gate", unique_name, WRITE_TOKEN, tmp_path / unique_name) == 200

    log = _changes(gate_service, "gate", before)
    assert log["current"] == before + 1, log  # exactly one version
    assert [(c["kind"], c["object"], c["source"]) for c in log["changes"]] == [
        ("added", f"database {unique_name}", SOURCE[front_end])]
    assert unique_name in _databases(gate_service, "gate")  # the cached listing was dropped: no REFRESH needed
    line = _audit_line(gate_service, unique_name)
    actor = "thrift:etl-user" if front_end == "thrift" else "etl"
    assert (line["token"], line["via"], line["catalog"], line["outcome"]) == (actor, front_end, "gate", "ok"), line
    assert (line["version_before"], line["version_after"]) == (before, before + 1), line
    assert line.get("client"), line  # the client's address
    assert _announced(gate_service, unique_name), "the change was not announced to the home's other processes"


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_a_refused_change_is_audited_and_changes_nothing(gate_service: Server, front_end: str, unique_name: str,
                                                         tmp_path: Path, dropped: Callable[[str, str], None]) -> None:
    # A read token over HTTP; through thrift, a catalog that grants no thrift writes (the ceiling over any grant).
    catalog, token = ("shut", WRITE_TOKEN) if front_end == "thrift" else ("gate", READ_TOKEN)
    before = int(_changes(gate_service, catalog, 0)["current"])
    dropped(catalog, unique_name)

    status = _create_database(gate_service, front_end, catalog, unique_name, token, tmp_path / unique_name)

    assert status == (500 if front_end == "thrift" else 403)
    assert int(_changes(gate_service, catalog, 0)["current"]) == before  # no version
    assert unique_name not in _databases(gate_service, catalog)  # nothing made
    line = _audit_line(gate_service, unique_name)
    assert (line["via"], line["catalog"], line["outcome"]) == (front_end, catalog, "refused"), line
    assert line["version_before"] == line["version_after"] == before, line
    assert not _announced(gate_service, unique_name)


@pytest.mark.parametrize(("path", "iceberg"), [("/v1/catalogs/{c}/databases", False),
                                                ("/v1/catalogs/{c}/changes", False),
                                                ("/iceberg/v1/{c}/namespaces", True)])
def test_a_token_limited_to_catalogs_reads_only_those(gate_service: Server, path: str, iceberg: bool) -> None:
    assert gate_service.request("GET", path.format(c="shut"), token=SHUT_READER).status == 200
    refused = gate_service.request("GET", path.format(c="gate"), token=SHUT_READER)
    assert refused.status == 403, refused.body.decode()
    message = refused.json()["error"]["message"]
    assert "token 'shut-ro' may read catalog(s) shut, but change none" in message
    assert "catalog 'gate'" in message
    if iceberg:
        assert refused.json()["error"]["type"] == "ForbiddenException"


def test_a_statement_reading_a_catalog_its_token_may_not_read_is_refused(gate_service: Server) -> None:
    for sql in ("SHOW DATABASES FROM gate", "SHOW TABLES FROM gate.default"):
        refused = gate_service.request("POST", "/v1/statements", {"sql": sql}, token=SHUT_READER)
        assert refused.status == 403 and "catalog 'gate'" in refused.body.decode(), (sql, refused.body.decode())
    allowed = gate_service.request("POST", "/v1/statements", {"sql": "SHOW DATABASES FROM shut"}, token=SHUT_READER)
    assert allowed.status == 200, allowed.body.decode()


def test_a_token_limited_to_catalogs_lists_and_reads_only_their_definitions(gate_service: Server) -> None:
    listed = gate_service.request("GET", "/v1/catalogs", token=SHUT_READER).json()["catalogs"]
    assert [catalog["name"] for catalog in listed] == ["shut"]
    assert {"gate", "shut"} <= {c["name"] for c in gate_service.request("GET", "/v1/catalogs", token=READ_TOKEN).json()["catalogs"]}
    assert gate_service.request("GET", "/v1/catalogs/gate", token=SHUT_READER).status == 403
    assert gate_service.request("GET", "/v1/catalogs/shut", token=SHUT_READER).status == 200
