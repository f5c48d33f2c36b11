"""Kerberos catalogs through the command line, as users copy them from Doris's documentation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hms_catalog.metastore import EmbeddedMetastore
from tests.cli.test_cli import cli
from tests.kerberos.conftest import Realm
from tests.support import hms

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test


def _create(realm: Realm, uri: str, name: str = "secure", **changes: str) -> str:
    props = {**realm.catalog_properties(uri), **changes}
    listed = ", ".join(f"'{key}'='{value}'" for key, value in props.items())
    return f"CREATE CATALOG {name} PROPERTIES ({listed})"


def test_a_doris_kerberos_catalog_reads_the_secure_metastore(realm: Realm, secure_metastore: EmbeddedMetastore,
                                                             secure_admin: hms.Admin, home: Path, unique_name: str) -> None:
    secure_admin.create_database(unique_name)
    secure_admin.create_table(unique_name, "orders", [("id", "bigint"), ("amount", "decimal(10,2)")])
    created = cli(home, "-e", _create(realm, secure_metastore.uri))
    assert created.returncode == 0, created.stderr
    described = cli(home, "--format", "json", "-e", f"DESCRIBE secure.{unique_name}.orders")
    assert described.returncode == 0, described.stderr
    answer = json.loads(described.stdout)
    field, kind = answer["columns"].index("Field"), answer["columns"].index("Type")
    assert [(row[field], row[kind]) for row in answer["rows"]] == [("id", "bigint"), ("amount", "decimal(10,2)")]
    # The keytab's path is shown back: it is which file this catalog reads, not a secret.
    shown = cli(home, "-e", "SHOW CREATE CATALOG secure")
    assert f"'hadoop.kerberos.keytab' = '{realm.user_keytab}'" in shown.stdout


def test_mistakes_are_refused_at_create_and_alter_and_nothing_is_stored(realm: Realm, secure_metastore: EmbeddedMetastore,
                                                                       home: Path, tmp_path: Path) -> None:
    missing = cli(home, "-e", _create(realm, secure_metastore.uri, **{"hadoop.kerberos.keytab": str(tmp_path / "gone.keytab")}))
    assert missing.returncode == 1
    assert f"property 'hadoop.kerberos.keytab': keytab {tmp_path / 'gone.keytab'} does not exist" in missing.stderr
    foreign = cli(home, "-e", _create(realm, secure_metastore.uri, **{"hadoop.kerberos.principal": realm.short}))
    assert f"principal {realm.short} has no key in keytab {realm.user_keytab}" in foreign.stderr
    no_realm = cli(home, "-e", _create(realm, secure_metastore.uri, **{"hive.metastore.kerberos.principal": "hive/_HOST"}))
    assert "'hive.metastore.kerberos.principal' has no realm" in no_realm.stderr
    assert json.loads(cli(home, "--format", "json", "-e", "SHOW CATALOGS").stdout)["rows"] == []

    assert cli(home, "-e", _create(realm, secure_metastore.uri)).returncode == 0
    altered = cli(home, "-e", f"ALTER CATALOG secure SET PROPERTIES ('hadoop.kerberos.keytab'='{realm.short_keytab}')")
    assert altered.returncode == 1 and f"principal {realm.user} has no key in keytab {realm.short_keytab}" in altered.stderr
    shown = cli(home, "-e", "SHOW CREATE CATALOG secure").stdout
    assert f"'hadoop.kerberos.keytab' = '{realm.user_keytab}'" in shown


def test_the_connect_error_reaches_the_user_with_principal_and_uri(realm: Realm, secure_metastore: EmbeddedMetastore,
                                                                   home: Path) -> None:
    unknown = _create(realm, secure_metastore.uri, **{"hive.metastore.kerberos.principal": "hive/nohost@HMS.TEST"})
    assert cli(home, "-e", unknown).returncode == 0
    failed = cli(home, "-e", "SHOW DATABASES FROM secure")
    assert failed.returncode == 1
    assert f"as {realm.user} to hive/nohost@HMS.TEST at {secure_metastore.uri}" in failed.stderr
    assert "Server hive/nohost@HMS.TEST not found in Kerberos database" in failed.stderr
    assert "Traceback" not in failed.stderr


def test_the_secure_embedded_metastore_says_so(realm: Realm, secure_metastore: EmbeddedMetastore, home: Path) -> None:
    status = cli(home, "metastore", "status", "--dir", str(secure_metastore.directory))
    assert status.returncode == 0, status.stderr
    assert f"Kerberos as {realm.service}" in status.stdout
    assert secure_metastore.client_properties() == {
        "hive.metastore.uris": secure_metastore.uri, "hive.metastore.sasl.enabled": "true",
        "hive.metastore.kerberos.principal": realm.service,
    }
    unpaired = cli(home, "metastore", "start", "--kerberos-principal", realm.service)
    assert unpaired.returncode == 2 and "--kerberos-principal and --kerberos-keytab go together" in unpaired.stderr
