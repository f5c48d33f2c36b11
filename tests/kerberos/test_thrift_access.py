"""Access per Kerberos principal through the thrift endpoint, against the suite's real KDC: a principal no entry of
the tokens file lists is refused at the negotiation, saying why; a read-only principal's change is refused by the
change gate and makes nothing. Each refusal is audited with the principal."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import AuthenticationError
from service.access import Access, Principal
from service.tokens import NamedToken
from tests.kerberos.conftest import Realm
from tests.support import hms
from tests.support.kerberized import Kerberized, kerberized

REFUSED_WITHIN = 10.0  # seconds: generous on a loaded machine; a refusal takes milliseconds


@pytest.fixture
def read_only(home: Path, metastore_uri: str, realm: Realm) -> Iterator[Kerberized]:
    """An endpoint whose tokens file lets ``realm.user`` read catalog ``hive`` and lists ``realm.short`` nowhere."""
    named = [NamedToken(Principal("analysts", Access.READ, ("hive",)), None, (realm.user,))]
    with kerberized(home, metastore_uri, realm, named=named) as opened:
        yield opened


def _pool(realm: Realm, port: int, principal: str, keytab: Path) -> HmsClientPool:
    return realm.pool(f"thrift://127.0.0.1:{port}", **{"hive.metastore.failure.retries": "0",
                                                        "hadoop.kerberos.principal": principal,
                                                        "hadoop.kerberos.keytab": str(keytab)})


def _refused(opened: Kerberized, principal: str) -> list[dict[str, Any]]:
    return [line for line in opened.audit() if line["outcome"] == "refused" and line["token"] == principal]


def test_a_principal_no_entry_lists_is_refused_at_the_negotiation(read_only: Kerberized, realm: Realm) -> None:
    pool = _pool(realm, read_only.port, realm.short, realm.short_keytab)
    began = time.monotonic()
    try:
        with pytest.raises(AuthenticationError, match=f"principal {realm.short} may do nothing here: no entry of the "
                                                      "service's tokens file"):
            pool.call("get_all_databases")
    finally:
        pool.close()
    assert time.monotonic() - began < REFUSED_WITHIN
    [line] = _refused(read_only, realm.short)
    assert (line["statement"], line["via"]) == ("thrift connect", "thrift") and "tokens file" in line["reason"], line


def test_a_read_only_principal_reads_and_its_create_table_is_refused_making_nothing(
        read_only: Kerberized, realm: Realm, admin: hms.Admin, unique_name: str) -> None:
    admin.create_database(unique_name)
    table = hms.table_struct(unique_name, "made", [("id", "int")], (admin.warehouse / f"{unique_name}.db" / "made").as_uri())
    pool = _pool(realm, read_only.port, realm.user, realm.user_keytab)
    try:
        assert unique_name in pool.call("get_all_databases")  # it reads
        before = read_only.manager.catalog("hive").versions.current
        with pytest.raises(ttypes.MetaException, match=f"permission denied: principal '{realm.user}' may read catalog\\(s\\) "
                                                       "hive, but change none; thrift create_table changes catalog 'hive'"):
            pool.call("create_table", table)
    finally:
        pool.close()
    assert admin.pool.call("get_all_tables", unique_name) == []  # nothing made
    assert read_only.manager.catalog("hive").versions.current == before
    [line] = _refused(read_only, realm.user)
    assert (line["statement"], line["via"], line["catalog"]) == (f"thrift create_table {unique_name}.made", "thrift", "hive")
