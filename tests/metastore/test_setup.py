"""The configuration files the embedded metastore writes, read back without starting Java."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from hms_catalog.errors import EmbeddedMetastoreError
from hms_catalog.metastore import MetastoreKerberos, _setup


def _settings(path: Path) -> dict[str, str]:
    root = ElementTree.parse(path).getroot()
    return {prop.findtext("name") or "": prop.findtext("value") or "" for prop in root.iter("property")}


def test_a_plain_metastore_has_no_sasl(tmp_path: Path) -> None:
    site = _setup.write_hive_site(tmp_path, db_dir=tmp_path / "db", warehouse=tmp_path / "wh", with_events=True)
    settings = _settings(site)
    assert "hive.metastore.sasl.enabled" not in settings
    assert settings["hive.metastore.transactional.event.listeners"] == _setup.LISTENER_CLASS


def test_a_secure_metastore_names_its_principal_and_keytab(tmp_path: Path) -> None:
    keytab = tmp_path / "hive & co.keytab"  # escaped in the XML, read back as written
    site = _setup.write_hive_site(tmp_path, db_dir=tmp_path / "db", warehouse=tmp_path / "wh", with_events=False,
                                  kerberos=("hive/localhost@R.COM", keytab))
    settings = _settings(site)
    assert settings["hive.metastore.sasl.enabled"] == "true"
    assert settings["hive.metastore.kerberos.principal"] == "hive/localhost@R.COM"
    assert settings["hive.metastore.kerberos.keytab.file"] == str(keytab)
    core = _setup.write_core_site(tmp_path / "hadoop")
    assert _settings(core) == {"hadoop.security.authentication": "kerberos"}


def test_a_secure_metastore_checks_its_keytab_before_starting(tmp_path: Path) -> None:
    secure = MetastoreKerberos("hive/_HOST@R.COM", tmp_path / "absent.keytab")
    with pytest.raises(EmbeddedMetastoreError, match=r"cannot run the metastore secure: .*absent.keytab does not exist"):
        secure.client_config()
    assert "_HOST" not in secure.server_principal
