"""The thrift endpoint with Kerberos (SASL GSSAPI) against the suite's real KDC: every protection a Hadoop client may
choose, through the catalog's own client and through thrift's own SASL transport (pure-sasl), and each refusal:
a plain client, a silent one, the wrong service principal, no ticket, delegation tokens. Each refusal the
endpoint sees is audited. pyiceberg's HiveCatalog commits through it, and ``serve`` with Kerberos binds every
address without --thrift-insecure. Spark's own Hive support: test_thrift_endpoint_spark.py (slow).
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import TSocket, TTransport

from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import MetastoreThriftClient, ttypes
from hms_catalog.errors import AuthenticationError
from hms_catalog.manager import CatalogManager
from hms_catalog.properties import CatalogConfig
from hms_catalog.state import open_definitions
from service.thrift import admission
from service.thrift.kerberos import ALL_PROTECTIONS, Protection, server_principal
from tests.kerberos.conftest import Realm
from tests.support import hms
from tests.support.kerberized import Kerberized, kerberized
from tests.support.service import served, tokens_file

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

REFUSED_WITHIN = 10.0  # seconds: generous on a loaded machine; a refusal takes milliseconds


@pytest.fixture
def secured(home: Path, metastore_uri: str, realm: Realm) -> Iterator[Kerberized]:
    with kerberized(home, metastore_uri, realm) as opened:
        yield opened


@pytest.fixture
def ticket(realm: Realm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The user's ticket in the default cache (KRB5CCNAME), as after ``kinit -kt``: pure-sasl reads only that."""
    cache = f"FILE:{tmp_path / 'krb5cc'}"
    realm.kdc.kinit(realm.user, realm.user_keytab, cache)
    monkeypatch.setenv("KRB5CCNAME", cache)
    return cache


@contextlib.contextmanager
def sasl_client(port: int, *, qop: Protection = "auth", service: str = "hive",
                host: str = "localhost") -> Iterator[tuple[MetastoreThriftClient, Any]]:
    """The generated client over thrift's own SASL transport (pure-sasl's GSSAPI, the ticket in KRB5CCNAME), as
    pyiceberg's HiveCatalog connects with ``hive.kerberos-authentication``."""
    handle = TSocket.TSocket(host, port)
    transport = TTransport.TSaslClientTransport(handle, host=host, service=service, qops=[qop])
    try:
        transport.open()
    except BaseException:
        handle.close()  # thrift's SASL transport leaves its socket open when the negotiation fails
        raise
    try:
        yield MetastoreThriftClient(TBinaryProtocol.TBinaryProtocolAccelerated(transport)), transport
    finally:
        transport.close()


def _own_pool(realm: Realm, port: int, **extra: str) -> HmsClientPool:
    return realm.pool(f"thrift://127.0.0.1:{port}", **{"hive.metastore.failure.retries": "0", **extra})


def _refusals(secured: Kerberized, statement: str = "thrift connect") -> list[dict[str, Any]]:
    return [line for line in secured.audit() if line["statement"] == statement and line["outcome"] == "refused"]


@pytest.mark.parametrize("qop", ALL_PROTECTIONS)
def test_each_protection_lists_databases_and_tables_through_thrifts_sasl_transport(
        secured: Kerberized, ticket: str, admin: hms.Admin, unique_name: str, qop: Protection) -> None:
    admin.create_database(unique_name)
    admin.create_table(unique_name, "events", [("id", "bigint")])
    with sasl_client(secured.port, qop=qop) as (client, transport):
        assert transport.sasl._chosen_mech.qop == qop.encode()
        assert unique_name in client.get_all_databases()
        assert client.get_all_tables(unique_name) == ["events"]
        assert client.get_table(unique_name, "events").sd.cols[0].name == "id"
    assert secured.endpoint.health()["authentication"] == "kerberos"


@pytest.mark.parametrize("qop", ALL_PROTECTIONS)
def test_the_catalogs_own_client_reads_through_an_endpoint_allowing_one_protection(
        home: Path, metastore_uri: str, realm: Realm, admin: hms.Admin, unique_name: str, qop: Protection) -> None:
    """The catalog's own client takes what the endpoint offers; an endpoint allowing one protection gets it."""
    admin.create_database(unique_name)
    admin.create_table(unique_name, "events", [("id", "bigint"), ("name", "string")])
    with kerberized(home, metastore_uri, realm, (qop,)) as secured:
        pool = _own_pool(realm, secured.port)
        try:
            assert unique_name in pool.call("get_all_databases")
            assert [c.name for c in pool.call("get_table", unique_name, "events").sd.cols] == ["id", "name"]
        finally:
            pool.close()


def test_a_change_through_sasl_is_made_as_the_principal(secured: Kerberized, ticket: str, realm: Realm,
                                                        unique_name: str, tmp_path: Path) -> None:
    """set_ugi claims another user; the audit names the principal that authenticated, and its user."""
    with sasl_client(secured.port, qop="auth-conf") as (client, _):
        client.set_ugi("mallory", ["admins"])
        client.create_database(ttypes.Database(name=unique_name, locationUri=(tmp_path / unique_name).as_uri(), parameters={}))
        client.drop_database(unique_name, True, True)
    changes = [line for line in secured.audit() if line["statement"].startswith("thrift create_database")]
    assert len(changes) == 1 and changes[0]["outcome"] == "ok", secured.audit()
    assert changes[0]["user"] == "etl" and realm.user in json.dumps(changes[0]), changes[0]


def test_a_plain_client_is_refused_within_seconds_saying_kerberos_is_needed(secured: Kerberized) -> None:
    for framed in (False, True):
        handle = TSocket.TSocket("127.0.0.1", secured.port)
        handle.setTimeout(int(REFUSED_WITHIN * 1000))
        transport = TTransport.TFramedTransport(handle) if framed else TTransport.TBufferedTransport(handle)
        transport.open()
        began = time.monotonic()
        try:
            with pytest.raises(TApplicationException, match=r"requires Kerberos.*hive\.metastore\.sasl\.enabled=true"):
                MetastoreThriftClient(TBinaryProtocol.TBinaryProtocol(transport)).get_all_databases()
        finally:
            transport.close()
        assert time.monotonic() - began < REFUSED_WITHIN
    refused = _refusals(secured)
    assert len(refused) == 2 and all("requires Kerberos" in line["reason"] and line["client"].startswith("127.0.0.1:")
                                     for line in refused), refused


def test_a_silent_connection_is_closed_after_the_negotiation_time(secured: Kerberized,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admission, "NEGOTIATION_SECONDS", 1.0)
    with socket.create_connection(("127.0.0.1", secured.port), timeout=REFUSED_WITHIN) as silent:
        silent.sendall(b"\x01\x00\x00\x00\x06")  # START, then nothing more
        began = time.monotonic()
        assert silent.recv(10) == b""  # closed by the endpoint
        assert time.monotonic() - began < REFUSED_WITHIN


def test_the_wrong_service_principal_is_refused_and_audited(secured: Kerberized, realm: Realm, elsewhere: str) -> None:
    pool = _own_pool(realm, secured.port, **{"hive.metastore.kerberos.principal": elsewhere})
    began = time.monotonic()
    try:
        with pytest.raises(AuthenticationError, match=r"refused the SASL negotiation \(BAD\): Kerberos authentication to "
                                                      r"hive/localhost@HMS.TEST failed"):
            pool.call("get_all_databases")
    finally:
        pool.close()
    assert time.monotonic() - began < REFUSED_WITHIN
    (refused,) = _refusals(secured)
    assert refused["reason"].startswith("Kerberos authentication to hive/localhost@HMS.TEST failed"), refused


def test_no_ticket_fails_on_the_client_saying_why(secured: Kerberized, realm: Realm, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    empty = f"FILE:{tmp_path / 'no-ticket'}"
    monkeypatch.setenv("KRB5CCNAME", empty)
    props = {key: value for key, value in realm.catalog_properties(f"thrift://127.0.0.1:{secured.port}").items()
             if not key.startswith("hadoop.kerberos")}
    pool = HmsClientPool(CatalogConfig.from_properties({**props, "hive.metastore.failure.retries": "0"}).client)
    try:
        with pytest.raises(AuthenticationError, match=r"no usable Kerberos credentials in the ticket cache .*run kinit"):
            pool.call("get_all_databases")
    finally:
        pool.close()
    import kerberos  # pure-sasl's GSSAPI, as pyiceberg's HiveCatalog uses it

    with pytest.raises(kerberos.GSSError, match=r"(?i)credentials cache|No Kerberos credentials"):
        with sasl_client(secured.port):
            pass


def test_delegation_tokens_are_refused_with_a_metaexception_and_audited(secured: Kerberized, ticket: str) -> None:
    with sasl_client(secured.port) as (client, _):
        with pytest.raises(ttypes.MetaException, match="issues no delegation tokens"):
            client.get_delegation_token("etl", "yarn")
        with pytest.raises(ttypes.MetaException, match="issues no delegation tokens"):
            client.renew_delegation_token("token")
        with pytest.raises(ttypes.MetaException, match="issues no delegation tokens"):
            client.cancel_delegation_token("token")
        with pytest.raises(TApplicationException, match="token store is not reachable"):
            client.get_master_keys()
        assert client.get_all_databases()  # the connection goes on
    refused = _refusals(secured, "thrift get_delegation_token")
    assert len(refused) == 1 and refused[0]["token"] == "etl@HMS.TEST" and refused[0]["user"] == "etl", secured.audit()


@pytest.fixture(scope="session")
def elsewhere(realm: Realm) -> str:
    """A service principal the KDC knows and the endpoint's keytab does not hold."""
    return realm.kdc.add_principal("hive/elsewhere")


def test_pyicebergs_hive_catalog_commits_through_the_kerberized_endpoint(secured: Kerberized, ticket: str, realm: Realm,
                                                                        metastore_uri: str, tmp_path: Path,
                                                                        unique_name: str) -> None:
    """pyiceberg's own ``hive.kerberos-authentication`` (thrift's SASL transport, the ticket in KRB5CCNAME): a table
    made, appended to and evolved through the endpoint is the one the metastore holds."""
    import pyarrow as pa
    from pyiceberg.catalog.hive import HiveCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField

    settings = {"warehouse": (tmp_path / "warehouse").as_uri(), "hive.hive2-compatible": "true"}
    through = HiveCatalog("through", uri=f"thrift://localhost:{secured.port}", **settings,
                          **{"hive.kerberos-authentication": "true"})
    direct = HiveCatalog("direct", uri=metastore_uri, **settings)
    through.create_namespace(unique_name)
    table = through.create_table((unique_name, "events"), schema=Schema(NestedField(1, "id", LongType(), required=False)))
    table.append(pa.Table.from_pylist([{"id": 1}, {"id": 2}], schema=table.schema().as_arrow()))
    with table.update_schema() as update:
        update.add_column("score", DoubleType())
    table.append(pa.Table.from_pylist([{"id": 3, "score": 0.5}], schema=table.schema().as_arrow()))
    theirs = direct.load_table((unique_name, "events"))
    assert theirs.metadata_location == table.metadata_location
    assert sorted(row["id"] for row in theirs.scan().to_arrow().to_pylist()) == [1, 2, 3]
    commits = [line for line in secured.audit() if line["statement"].startswith("thrift alter_table")]
    assert len(commits) == 3 and all(line["outcome"] == "ok" and line["user"] == "etl" for line in commits), commits
    through.drop_table((unique_name, "events"))
    through.drop_namespace(unique_name)


def test_serve_with_kerberos_binds_every_address_without_insecure(realm: Realm, home: Path, metastore_uri: str,
                                                                  tmp_path: Path, admin: hms.Admin, unique_name: str) -> None:
    """Kerberos is what makes an endpoint safe beyond loopback: no --thrift-insecure, no warning. _HOST becomes this
    machine's own name for 0.0.0.0; a principal with a tokens-file entry reads the catalogs."""
    expected = server_principal(realm.service, "0.0.0.0")
    keytab = realm.service_keytab
    if expected != realm.kdc.principal("hive/localhost"):
        keytab = tmp_path / "host.keytab"
        realm.kdc.add_principal(expected, keytab)
    manager = CatalogManager(open_definitions(home, None))
    manager.create("hive", {"type": "hms", "hive.metastore.uris": metastore_uri})
    manager.close()
    admin.create_database(unique_name)
    tokens = tokens_file(tmp_path / "tokens.json", {"tokens": [{"name": "etl", "principals": [realm.user], "access": "read"}]})
    with served(home, "--tokens", str(tokens), "--thrift-port", "0", "--thrift-host", "0.0.0.0",
                "--thrift-principal", realm.service, "--thrift-keytab", str(keytab)) as server:
        health = server.request("GET", "/v1/health").json()["thrift"]
        assert health["authentication"] == "kerberos" and health["principal"] == expected, health
        assert "warning: the thrift endpoint" not in server.stderr()
        assert f"Kerberos as {expected}, qop auth-conf,auth-int,auth" in server.stderr()
        host = expected.split("/", 1)[1].split("@", 1)[0]
        pool = realm.pool(f"thrift://{host}:{urlsplit(health['uri']).port}", **{"hive.metastore.failure.retries": "0"})
        try:
            assert unique_name in pool.call("get_all_databases")
        finally:
            pool.close()
    for wrong, says in (
            (["--thrift-principal", realm.service, "--thrift-keytab", str(realm.user_keytab)],
             f"holds no key of {expected}"),
            (["--thrift-principal", realm.service], "--thrift-principal and --thrift-keytab go together"),
            (["--thrift-principal", "hive@HMS.TEST", "--thrift-keytab", str(keytab)], "service/host@REALM"),
            (["--thrift-principal", realm.service, "--thrift-keytab", str(keytab), "--thrift-qop", "secret"],
             "'secret' is not a protection")):
        refused = subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "serve", "--port", "0",
                                  "--thrift-port", "0", "--thrift-host", "0.0.0.0", *wrong],
                                 capture_output=True, text=True, timeout=120, check=False)
        assert refused.returncode == 1 and says in refused.stderr and "Traceback" not in refused.stderr, refused.stderr
