"""Across a ticket's lifetime: a principal whose tickets live one minute, kept working by its keytab.

One test, because each assertion needs the same minute to pass: the catalog's pool opens new connections
and its event follower keeps reading the notification log after the first tickets expired, logging in
again from the keytab (the KDC counts the logins); a ticket cache that nobody renewed is refused as
expired, naming the principal and the cache, never read as an empty answer.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hms_catalog.client import HmsClientPool
from hms_catalog.errors import AuthenticationError
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import CatalogConfig
from tests.kerberos.conftest import Realm
from tests.support import hms
from tests.support.sessions import EVENTS, caught_up, open_catalog

TICKET_SECONDS = 60


def _logins(realm: Realm, principal: str) -> int:
    """Initial tickets the KDC issued to ``principal`` (from a password or keytab, not renewals)."""
    log = realm.kdc.log_file.read_text(errors="replace")
    return sum(1 for line in log.splitlines() if "AS_REQ" in line and "ISSUE" in line and f"{principal} for krbtgt/" in line)


def test_a_catalog_outlives_its_tickets(realm: Realm, secure_metastore: EmbeddedMetastore, secure_admin: hms.Admin,
                                        tmp_path: Path, unique_name: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    keytab_login = {"hadoop.kerberos.principal": realm.short, "hadoop.kerberos.keytab": str(realm.short_keytab)}
    properties = {key: value for key, value in realm.catalog_properties(secure_metastore.uri).items()
                  if key not in ("type", "hive.metastore.uris")}
    session = open_catalog(home, secure_metastore.uri, **{**properties, **keytab_login, **EVENTS})
    cache = f"FILE:{tmp_path / 'krb5cc'}"
    realm.kdc.kinit(realm.short, realm.short_keytab, cache)
    try:
        secure_admin.create_database(unique_name)
        assert unique_name in session.run_one("SHOW DATABASES FROM hive").column("Database")
        caught_up(session, secure_admin)
        logins_before = _logins(realm, realm.short)
        catalog = session.manager.catalog("hive")

        time.sleep(TICKET_SECONDS + 5)

        # The follower keeps reading the log: a table made after expiry reaches the catalog through events.
        secure_admin.create_table(unique_name, "after_expiry", [("id", "bigint")])
        caught_up(session, secure_admin)
        assert "after_expiry" in session.run_one(f"SHOW TABLES FROM hive.{unique_name}").column("Table")
        # A new connection, opened while the first one is out, logs in again from the keytab.
        pool = catalog.client.pool
        opened = pool.metrics.snapshot().connections_opened
        with pool.borrow() as first, pool.borrow() as second:
            assert unique_name in first.get_all_databases() and unique_name in second.get_all_databases()
        assert pool.metrics.snapshot().connections_opened > opened
        assert _logins(realm, realm.short) > logins_before

        # The ticket cache kinit filled a minute ago was not renewed by anyone: a clear refusal.
        props = {**realm.catalog_properties(secure_metastore.uri), "hive.metastore.client.credential-cache.location": cache}
        del props["hadoop.kerberos.keytab"], props["hadoop.kerberos.principal"]
        expired = HmsClientPool(CatalogConfig.from_properties(props).client)
        with pytest.raises(AuthenticationError, match=(
            rf"{secure_metastore.uri}: no usable Kerberos credentials in the ticket cache {cache}: "
            r"The referenced credential has expired; run kinit"
        )):
            expired.call("get_all_databases")
        expired.close()
    finally:
        session.manager.close()
