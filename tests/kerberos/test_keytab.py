"""Principal names read from keytabs kadmin wrote, and keytab checks at CREATE time."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hms_catalog.errors import ConfigurationError
from hms_catalog.kerberos import KerberosConfig, KeytabFormatError, keytab_principals
from tests.kerberos.conftest import Realm


def _klist(keytab: Path, realm: Realm) -> set[str]:
    listing = subprocess.run(["klist", "-k", str(keytab)], capture_output=True, text=True, check=True,
                             env={"PATH": "/usr/bin:/bin", **realm.kdc.env}).stdout
    return {line.split()[1] for line in listing.splitlines() if line.strip()[:1].isdigit()}


def test_principals_are_those_klist_lists(realm: Realm, tmp_path: Path) -> None:
    shared = tmp_path / "shared.keytab"
    realm.kdc.add_principal("svc/node1", shared)
    realm.kdc.add_principal("svc/node2", shared)
    assert keytab_principals(shared) == _klist(shared, realm) == {"svc/node1@HMS.TEST", "svc/node2@HMS.TEST"}
    assert keytab_principals(realm.user_keytab) == {realm.user}


def test_a_cut_keytab_is_not_read_as_another(realm: Realm, tmp_path: Path) -> None:
    cut = tmp_path / "cut.keytab"
    cut.write_bytes(realm.user_keytab.read_bytes()[:9])
    with pytest.raises(KeytabFormatError):
        keytab_principals(cut)


def test_a_principal_missing_from_the_keytab_is_named_with_what_it_holds(realm: Realm) -> None:
    config = KerberosConfig(service_principal="hive/h@HMS.TEST", client_principal="nobody@HMS.TEST",
                            keytab=realm.user_keytab, client_principal_key="hive.metastore.client.principal")
    with pytest.raises(ConfigurationError, match=(
        rf"property 'hive.metastore.client.principal': principal nobody@HMS.TEST has no key in keytab "
        rf"{realm.user_keytab} \(it holds: {realm.user}\)"
    )):
        config.check_files()
    # Without a realm, the principal matches its name in the keytab's realm.
    KerberosConfig(service_principal="hive/h@HMS.TEST", client_principal="etl", keytab=realm.user_keytab).check_files()
