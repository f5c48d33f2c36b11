"""Kerberos catalog properties: both generations of names, and an error naming the key for each mistake."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from hms_catalog.errors import ConfigurationError
from hms_catalog.kerberos import KerberosConfig, KerberosLogin, canonical_host_name
from hms_catalog.kerberos import login as login_module
from hms_catalog.kerberos.login import describe_gss_error, load_gssapi
from hms_catalog.properties import CatalogConfig

URIS = "thrift://h1:9083,thrift://h2:9083"


def _config(**props: str) -> KerberosConfig | None:
    return CatalogConfig.from_properties({"type": "hms", "hive.metastore.uris": URIS, **props}).client.kerberos


def test_doris_names_from_its_documentation_example() -> None:
    config = _config(**{
        "hive.metastore.sasl.enabled": "true", "hive.metastore.kerberos.principal": "hive/_HOST@BIGDATA.CN",
        "hadoop.security.authentication": "kerberos", "hadoop.kerberos.keytab": "/etc/security/keytabs/hdfs.keytab",
        "hadoop.kerberos.principal": "hdfs/host@BIGDATA.CN",
    })
    assert config == KerberosConfig(
        service_principal="hive/_HOST@BIGDATA.CN", client_principal="hdfs/host@BIGDATA.CN",
        keytab=Path("/etc/security/keytabs/hdfs.keytab"),
    )


def test_the_newer_names_doris_and_trino_share() -> None:
    config = _config(**{
        "hive.metastore.authentication.type": "KERBEROS", "hive.metastore.service.principal": "hive/_HOST@R.COM",
        "hive.metastore.client.principal": "etl@R.COM", "hive.metastore.client.keytab": "FILE:/k/etl.keytab",
        "hive.metastore.client.credential-cache.location": "/tmp/other-cache",
    })
    assert config is not None
    assert (config.service_principal, config.client_principal, config.keytab) == ("hive/_HOST@R.COM", "etl@R.COM", Path("/k/etl.keytab"))
    assert config.ticket_cache == "/tmp/other-cache"
    assert (config.service_principal_key, config.keytab_key) == ("hive.metastore.service.principal", "hive.metastore.client.keytab")


def test_without_sasl_a_catalog_connects_plainly() -> None:
    assert _config() is None
    # Hadoop's setting is for HDFS; the metastore connection follows hive.metastore.sasl.enabled, as in Doris.
    assert _config(**{"hadoop.security.authentication": "kerberos", "hive.metastore.kerberos.principal": "hive/h@R"}) is None
    assert _config(**{"hive.metastore.sasl.enabled": "false", "hive.metastore.authentication.type": "none"}) is None


def test_a_ticket_cache_login_needs_no_client_principal() -> None:
    config = _config(**{"hive.metastore.sasl.enabled": "TRUE", "hive.metastore.kerberos.principal": "hive/h@R"})
    assert config is not None and config.keytab is None and config.client_principal is None


@pytest.mark.parametrize(("props", "message"), [
    ({"hive.metastore.sasl.enabled": "yes"}, "'hive.metastore.sasl.enabled' must be 'true' or 'false', got 'yes'"),
    ({"hive.metastore.authentication.type": "ldap"}, "'hive.metastore.authentication.type' must be one of none, kerberos"),
    ({"hive.metastore.sasl.enabled": "false", "hive.metastore.authentication.type": "kerberos"}, "contradict"),
    ({"hive.metastore.sasl.enabled": "true"}, "'hive.metastore.kerberos.principal' is required with Kerberos"),
    ({"hive.metastore.sasl.enabled": "true", "hive.metastore.kerberos.principal": "hive/_HOST"},
     "'hive.metastore.kerberos.principal' has no realm: got 'hive/_HOST'"),
    ({"hive.metastore.authentication.type": "kerberos", "hive.metastore.service.principal": "hive@R"},
     "'hive.metastore.service.principal' is not of the form service/host@REALM"),
    ({"hive.metastore.sasl.enabled": "true", "hive.metastore.kerberos.principal": "hive/h@R",
      "hadoop.kerberos.keytab": "/k/x.keytab"}, "'hadoop.kerberos.keytab' needs 'hadoop.kerberos.principal'"),
    ({"hive.metastore.sasl.enabled": "true", "hive.metastore.kerberos.principal": "hive/h@R",
      "hive.metastore.service.principal": "hive/other@R"}, "name the same setting with different values"),
    ({"hive.metastore.sasl.enabled": "true", "hive.metastore.kerberos.principal": "hive/h@R",
      "hadoop.kerberos.principal": "a@b@c"}, "'hadoop.kerberos.principal' must be a principal"),
])
def test_mistakes_name_the_key(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        _config(**props)


def test_host_pattern_becomes_each_uris_canonical_name() -> None:
    config = KerberosConfig(service_principal="hive/_HOST@R.COM")
    expected = socket.gethostbyaddr("127.0.0.1")[0].lower()
    assert config.service_principal_for("127.0.0.1") == f"hive/{expected}@R.COM"
    # A name that does not resolve is used as given, lower-cased, as Hive's client does.
    assert config.service_principal_for("Metastore-7.invalid") == "hive/metastore-7.invalid@R.COM"
    assert KerberosConfig(service_principal="hive/fixed@R.COM").service_principal_for("h2") == "hive/fixed@R.COM"
    assert canonical_host_name("127.0.0.1") == expected



def test_a_login_resolves_each_host_once_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    monkeypatch.setattr(login_module, "canonical_host_name", lambda host: asked.append(host) or f"{host}.example")
    login = KerberosLogin(KerberosConfig(service_principal="hive/_HOST@R.COM"))
    for _ in range(3):
        assert login.service_principal("h9") == "hive/h9.example@R.COM"
    assert login.service_principal("h8") == "hive/h8.example@R.COM"
    assert asked == ["h9", "h8"]  # one lookup per host, not one per connection


def test_a_missing_or_foreign_keytab_file_is_refused(tmp_path: Path) -> None:
    config = KerberosConfig(service_principal="hive/h@R", client_principal="etl@R", keytab=tmp_path / "absent.keytab")
    with pytest.raises(ConfigurationError, match=r"property 'hadoop.kerberos.keytab': keytab .*absent.keytab does not exist"):
        config.check_files()
    not_a_keytab = tmp_path / "notes.txt"
    not_a_keytab.write_text("hello")
    with pytest.raises(ConfigurationError, match="is not a Kerberos keytab"):
        KerberosConfig(service_principal="hive/h@R", client_principal="etl@R", keytab=not_a_keytab).check_files()
    with pytest.raises(ConfigurationError, match="is not a file"):
        KerberosConfig(service_principal="hive/h@R", client_principal="etl@R", keytab=tmp_path).check_files()


def test_a_missing_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gssapi", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'hms-catalog\[kerberos\]'.*libkrb5-dev"):
        load_gssapi()


def test_gssapi_errors_are_read_for_their_kerberos_reason() -> None:
    unknown = Exception("Major (851968): Unspecified GSS failure.  Minor code may provide more information, "
                        "Minor (2529638919): Server hive/nohost@R not found in Kerberos database")
    assert describe_gss_error(unknown).startswith("Server hive/nohost@R not found in Kerberos database (the KDC knows no such service")
    expired = Exception("Major (720896): The referenced credential has expired, Minor (100001): Success")
    assert describe_gss_error(expired, advice=False) == "The referenced credential has expired"
    skew = Exception("Major (851968): Unspecified GSS failure, Minor (2529637925): Clock skew too great")
    assert "synchronise the clocks" in describe_gss_error(skew)
