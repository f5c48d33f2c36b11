"""The Hadoop helper's Kerberos login against the suite's real KDC: from a keytab as the catalog's
``hadoop.kerberos.*`` properties say, from a ticket cache when no keytab is given, and a refused login as a
StorageError naming the catalog."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hms_catalog.errors import StorageError
from hms_catalog.storage.hadoop import HadoopHelper
from tests.kerberos.conftest import Realm

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test


def _settings(principal: str, keytab: Path) -> dict[str, str]:
    return {"hadoop.security.authentication": "kerberos", "hadoop.kerberos.principal": principal,
            "hadoop.kerberos.keytab": str(keytab)}


def test_logs_in_from_the_keytab_and_serves_calls(realm: Realm, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"kerberized")
    with HadoopHelper(_settings(realm.user, realm.user_keytab), name="secure") as helper:
        identity = helper.start()
        assert identity.user == realm.user and identity.short_user == "etl"
        assert identity.authentication == "kerberos" and identity.kerberos and identity.keytab
        assert helper.read(f"file://{tmp_path}/f.txt", 0, 100) == b"kerberized"
        assert helper.whoami().user == realm.user


def test_logs_in_from_a_ticket_cache_without_a_keytab(realm: Realm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = f"FILE:{tmp_path / 'krb5cc'}"
    realm.kdc.kinit(realm.user, realm.user_keytab, cache)
    monkeypatch.setenv("KRB5CCNAME", cache)
    with HadoopHelper({"hadoop.security.authentication": "kerberos"}, name="secure") as helper:
        identity = helper.start()
        assert identity.user == realm.user and identity.kerberos and not identity.keytab


@pytest.mark.parametrize("wrong", ["keytab", "principal"])
def test_a_refused_login_names_the_catalog(realm: Realm, wrong: str) -> None:
    principal = realm.kdc.principal("nobody") if wrong == "principal" else realm.user
    keytab = realm.short_keytab if wrong == "keytab" else realm.user_keytab  # holds another principal's key
    with HadoopHelper(_settings(principal, keytab), name="secure") as helper:
        with pytest.raises(StorageError, match=r"catalog 'secure': the Hadoop client refused .*login"):
            helper.start()


@pytest.mark.slow
def test_logs_in_again_from_the_keytab_before_a_call_when_the_ticket_nears_its_end(realm: Realm, tmp_path: Path) -> None:
    """The short principal's tickets live 24 s; Hadoop renews a keytab login past 80% of a ticket's life (19.2 s)."""
    settings = {**_settings(realm.short, realm.short_keytab), "hadoop.kerberos.min.seconds.before.relogin": "1"}
    with HadoopHelper(settings, name="secure") as helper:
        first = helper.start()
        assert first.kerberos and 0 < first.ticket_end_ms / 1000 - time.time() <= 24
        time.sleep(max(0.0, (first.ticket_end_ms / 1000 - time.time()) - 3))  # past 80% of its life, not past its end
        assert helper.list(f"file://{tmp_path}") == []
        again = helper.whoami()
        assert again.user == realm.short and again.ticket_end_ms > first.ticket_end_ms
        assert helper.starts == 1
