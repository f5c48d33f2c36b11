"""Access per connection: a Kerberos principal's grant decides what it reads and changes through the endpoint.

The grants come from a real tokens file and the calls go through the endpoint's real handler over the real
metastore; only the SASL handshake that would have proved the principal is left out here (its own tests,
against the KDC, are in ``test_sasl.py``): the connection is made as the handshake leaves it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.client.hive_thrift import ttypes
from service.thrift.context import Caller
from service.thrift.handler import ConnectionHandler
from service.tokens import KerberosPrincipals, load_tokens
from tests.service.thrift.conftest import Endpoint
from tests.support.hms import Admin
from tests.support.service import tokens_file

ADMIN_TOKEN = "admin-token-of-the-thrift-tests-01"
TOKENS = {"tokens": [
    {"name": "etl", "access": "write", "catalogs": ["hive"], "principals": ["etl@EXAMPLE.COM"]},
    {"name": "analyst", "access": "read", "catalogs": ["other"], "principals": ["analyst@EXAMPLE.COM"]},
]}


@pytest.fixture
def granted(endpoint: Endpoint, tmp_path: Path) -> Endpoint:
    path = tokens_file(tmp_path / "tokens.json", TOKENS)
    named, _ = load_tokens(path, ADMIN_TOKEN)
    endpoint.endpoint.context.principals = KerberosPrincipals(named)
    return endpoint


def connection(endpoint: Endpoint, principal: str | None, user: str = "") -> ConnectionHandler:
    handler = ConnectionHandler(endpoint.endpoint.context, Caller("127.0.0.1", principal=principal))
    if user:
        handler.set_ugi(user, [])
    return handler


def audited(endpoint: Endpoint) -> list[dict[str, Any]]:
    return [json.loads(line) for line in endpoint.audit_path.read_text(encoding="utf-8").splitlines()]


def databases(admin: Admin) -> list[str]:
    names: list[str] = admin.pool.call("get_all_databases")
    return names


@pytest.fixture
def database(admin: Admin, unique_name: str) -> Iterator[str]:
    yield unique_name
    with contextlib.suppress(Exception):
        admin.drop_database(unique_name)


def test_a_principal_sees_only_the_catalogs_its_entry_lists(granted: Endpoint, admin: Admin, database: str,
                                                           tmp_path: Path) -> None:
    admin.create_database(database)
    analyst, etl = connection(granted, "analyst@EXAMPLE.COM"), connection(granted, "etl@EXAMPLE.COM")
    anonymous = connection(granted, None)  # a connection without SASL: every catalog, as before

    assert f"other__{database}" in analyst.get_all_databases() and database not in analyst.get_all_databases()
    assert database in etl.get_all_databases() and not any(n.startswith("other__") for n in etl.get_all_databases())
    assert {database, f"other__{database}"} <= set(anonymous.get_all_databases())
    assert analyst.get_database(f"other__{database}").name == f"other__{database}"
    for call in (lambda: analyst.get_database(database), lambda: analyst.get_table(database, "t"),
                 lambda: analyst.get_partition_names(database, "t", -1)):
        with pytest.raises(ttypes.NoSuchObjectException):
            call()
    # calls that declare no NoSuchObjectException say so in a MetaException; get_functions is forwarded
    for call in (lambda: analyst.get_all_tables(database), lambda: analyst.get_functions(database, "*")):
        with pytest.raises(ttypes.MetaException, match=f"database '{database}' does not exist"):
            call()


def test_a_principal_no_entry_lists_gets_nothing(granted: Endpoint, admin: Admin, database: str, tmp_path: Path) -> None:
    admin.create_database(database)
    stranger = connection(granted, "mallory@EXAMPLE.COM")
    assert stranger.get_all_databases() == []
    with pytest.raises(ttypes.NoSuchObjectException):
        stranger.get_database(database)
    with pytest.raises(ttypes.MetaException, match="principal 'mallory@EXAMPLE.COM' may do nothing"):
        stranger.create_database(ttypes.Database(name=f"{database}_x", locationUri=(tmp_path / "x").as_uri(), parameters={}))
    assert f"{database}_x" not in databases(admin)


def test_a_read_only_principals_change_is_refused_audited_and_makes_nothing(granted: Endpoint, admin: Admin,
                                                                           database: str, tmp_path: Path) -> None:
    analyst = connection(granted, "analyst@EXAMPLE.COM", user="claims-to-be-admin")
    before = granted.manager.catalog("other").versions.current
    with pytest.raises(ttypes.MetaException) as refused:
        analyst.create_database(ttypes.Database(name=f"other__{database}", locationUri=(tmp_path / database).as_uri(),
                                                parameters={}))
    assert "permission denied: principal 'analyst@EXAMPLE.COM' may read catalog(s) other, but change none" in refused.value.message
    assert database not in databases(admin)
    assert granted.manager.catalog("other").versions.current == before
    line = audited(granted)[-1]
    assert (line["token"], line["via"], line["outcome"]) == ("analyst@EXAMPLE.COM", "thrift", "refused"), line
    assert line.get("user") != "claims-to-be-admin"  # a Kerberos connection is its principal, whatever it claims


def test_a_write_principal_changes_its_catalog_and_the_ceiling_still_holds(granted: Endpoint, admin: Admin,
                                                                          database: str, tmp_path: Path) -> None:
    etl = connection(granted, "etl@EXAMPLE.COM")
    etl.create_database(ttypes.Database(name=database, locationUri=(tmp_path / database).as_uri(), parameters={}))
    assert database in databases(admin)
    line = audited(granted)[-1]
    assert (line["token"], line["via"], line["outcome"]) == ("etl@EXAMPLE.COM", "thrift", "ok"), line
    # 'other' is not etl's: refused by the grant. Were it etl's, 'other' grants no thrift writes (the ceiling).
    with pytest.raises(ttypes.MetaException, match="may read and change catalog\\(s\\) hive"):
        etl.create_database(ttypes.Database(name=f"other__{database}_2", locationUri=(tmp_path / "2").as_uri(),
                                            parameters={}))
