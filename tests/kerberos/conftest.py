"""One real MIT KDC and one secure embedded metastore per test session, for every Kerberos test.

Where the KDC's programs or the ``gssapi`` bindings are missing, these tests skip saying why; with
``HMS_CATALOG_REQUIRE_KERBEROS=1`` (``.ci/run`` sets it after installing them) they fail instead.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hms_catalog.client import HmsClientPool
from hms_catalog.execution import Session
from hms_catalog.metastore import EmbeddedMetastore, MetastoreKerberos
from hms_catalog.properties import CatalogConfig
from tests.support import hms
from tests.support.kdc import MiniKdc, free_port, missing_programs
from tests.support.sessions import EVENTS, open_catalog

SERVICE = "hive/_HOST"  # as users write it; the metastore and the client both resolve it to hive/localhost
SHORT_LIFE = "24 seconds"  # long enough for a relogin test to act between 80% of a life and its end


@dataclass(frozen=True)
class Realm:
    """The test realm and the principals every Kerberos test uses, with their keytabs."""

    kdc: MiniKdc
    service: str  # hive/_HOST@REALM
    service_keytab: Path
    user: str  # a user (or scheduler) principal with a keytab
    user_keytab: Path
    short: str  # a user whose tickets live 24 seconds
    short_keytab: Path

    def catalog_properties(self, uri: str, **extra: str) -> dict[str, str]:
        """Doris's property names for a catalog on ``uri`` logging in as the user from the keytab."""
        return {
            "type": "hms", "hive.metastore.uris": uri, "hive.metastore.sasl.enabled": "true",
            "hive.metastore.kerberos.principal": self.service, "hadoop.security.authentication": "kerberos",
            "hadoop.kerberos.principal": self.user, "hadoop.kerberos.keytab": str(self.user_keytab), **extra,
        }

    def pool(self, uri: str, **extra: str) -> HmsClientPool:
        return HmsClientPool(CatalogConfig.from_properties(self.catalog_properties(uri, **extra)).client)


def _unavailable() -> str | None:
    missing = missing_programs()
    if missing:
        return f"MIT Kerberos programs missing: {', '.join(missing)} (Debian: krb5-kdc krb5-admin-server krb5-user)"
    if importlib.util.find_spec("gssapi") is None:
        return "the gssapi bindings are not installed: pip install '.[kerberos]' (needs libkrb5-dev and gcc)"
    return None


@pytest.fixture(scope="session")
def realm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Realm]:
    reason = _unavailable()
    if reason is not None:
        if os.environ.get("HMS_CATALOG_REQUIRE_KERBEROS") == "1":
            pytest.fail(f"the Kerberos tests are required here and cannot run: {reason}")
        pytest.skip(reason)
    directory = tmp_path_factory.mktemp("kdc")
    keytabs = directory / "keytabs"
    keytabs.mkdir()
    with MiniKdc(directory) as kdc:
        saved = {key: os.environ.get(key) for key in kdc.env}
        os.environ.update(kdc.env)  # gssapi in this process, and every child, uses the test realm only
        try:
            kdc.add_principal("hive/localhost", keytabs / "hive.keytab")
            yield Realm(
                kdc=kdc, service=kdc.principal(SERVICE), service_keytab=keytabs / "hive.keytab",
                user=kdc.add_principal("etl", keytabs / "etl.keytab"), user_keytab=keytabs / "etl.keytab",
                short=kdc.add_principal("brief", keytabs / "brief.keytab", max_life=SHORT_LIFE),
                short_keytab=keytabs / "brief.keytab",
            )
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


@pytest.fixture(scope="session")
def secure_metastore(realm: Realm, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedMetastore]:
    """The embedded metastore run secure: SASL/GSSAPI only, as hive/localhost. Its port is fixed, so a test
    can restart it at the same URI."""
    kerberos = MetastoreKerberos(realm.service, realm.service_keytab, realm.kdc.krb5_conf)
    directory = tmp_path_factory.mktemp("secure-metastore")
    with EmbeddedMetastore(directory, port=free_port(), kerberos=kerberos) as server:
        yield server


@dataclass(frozen=True)
class Aging:
    """A catalog logged in from the keytab of the principal whose tickets live 24 seconds (following the
    metastore's events), and a ticket cache ``kinit`` filled for it, both made at ``started``."""

    session: Session
    database: str
    ticket_cache: str
    started: float  # time.time() of the first login


@pytest.fixture(scope="session")
def aging(realm: Realm, secure_metastore: EmbeddedMetastore, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Aging]:
    """Made with the first secure test (``secure_admin`` asks for it), so the seconds its tickets need to
    expire pass while the other Kerberos tests run, not in a sleep of its own."""
    scratch = tmp_path_factory.mktemp("aging")
    pool = realm.pool(secure_metastore.uri)
    database = "aging"
    hms.Admin(pool, secure_metastore.warehouse).create_database(database)
    cache = f"FILE:{scratch / 'krb5cc'}"
    realm.kdc.kinit(realm.short, realm.short_keytab, cache)  # before the catalog's login: the KDC's log tells them apart
    started = time.time()
    properties = {**realm.catalog_properties(secure_metastore.uri), **EVENTS,
                  "hadoop.kerberos.principal": realm.short, "hadoop.kerberos.keytab": str(realm.short_keytab)}
    del properties["type"], properties["hive.metastore.uris"]
    (scratch / "home").mkdir()
    session = open_catalog(scratch / "home", secure_metastore.uri, **properties)
    session.run_one("SHOW DATABASES FROM hive")  # logs in, and starts following events
    yield Aging(session, database, cache, started)
    session.manager.close()
    pool.close()


@pytest.fixture(scope="session")
def secure_admin(realm: Realm, secure_metastore: EmbeddedMetastore, aging: Aging) -> Iterator[hms.Admin]:
    """Arranges databases and tables in the secure metastore, logged in as the user."""
    pool = realm.pool(secure_metastore.uri)
    yield hms.Admin(pool, secure_metastore.warehouse)
    pool.close()
