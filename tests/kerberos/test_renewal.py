"""Across a ticket's lifetime: a principal whose tickets live 24 seconds, kept working by its keytab.

The catalog (``aging``) logged in with the first secure test; by now, or after a short wait, its first
ticket has expired. Its event follower still reads the notification log and its pool opens new
connections, because it logged in again from the keytab (the KDC's log shows the later login). A ticket
cache that nobody renewed is refused as expired, naming the principal and the cache, never read as an
empty answer.
"""

from __future__ import annotations

import re
import time

import pytest

from hms_catalog.client import HmsClientPool
from hms_catalog.errors import AuthenticationError
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import CatalogConfig
from tests.kerberos.conftest import Aging, Realm
from tests.support import hms
from tests.support.sessions import caught_up

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

TICKET_SECONDS = 24  # tests.kerberos.conftest.SHORT_LIFE
_AUTHTIME = re.compile(r"ISSUE: authtime (?P<when>\d+),")


def _login_times(realm: Realm, principal: str) -> list[int]:
    """When the KDC issued initial tickets to ``principal`` (logins from a keytab, not renewals)."""
    log = realm.kdc.log_file.read_text(errors="replace")
    return [int(found.group("when")) for line in log.splitlines()
            if "AS_REQ" in line and f"{principal} for krbtgt/" in line and (found := _AUTHTIME.search(line))]


def test_a_catalog_outlives_its_tickets(realm: Realm, secure_metastore: EmbeddedMetastore, secure_admin: hms.Admin,
                                        aging: Aging) -> None:
    time.sleep(max(0.0, aging.started + TICKET_SECONDS + 5 - time.time()))

    # The follower keeps reading the log: a table made after expiry reaches the catalog through events.
    secure_admin.create_table(aging.database, "after_expiry", [("id", "bigint")])
    caught_up(aging.session, secure_admin)
    assert "after_expiry" in aging.session.run_one(f"SHOW TABLES FROM hive.{aging.database}").column("Table")
    # New connections, opened while another one is out, work too.
    pool = aging.session.manager.catalog("hive").client.pool
    opened = pool.metrics.snapshot().connections_opened
    with pool.borrow() as first, pool.borrow() as second:
        assert aging.database in first.get_all_databases() and aging.database in second.get_all_databases()
    assert pool.metrics.snapshot().connections_opened > opened
    # ... with a ticket from a later login: every ticket issued in the catalog's first seconds has expired.
    assert any(when >= aging.started + 5 for when in _login_times(realm, realm.short))

    # The ticket cache kinit filled over 24 seconds ago was not renewed by anyone: a clear refusal.
    props = {**realm.catalog_properties(secure_metastore.uri), "hive.metastore.client.credential-cache.location": aging.ticket_cache}
    del props["hadoop.kerberos.keytab"], props["hadoop.kerberos.principal"]
    expired = HmsClientPool(CatalogConfig.from_properties(props).client)
    with pytest.raises(AuthenticationError, match=(
        rf"{secure_metastore.uri}: no usable Kerberos credentials in the ticket cache {aging.ticket_cache}: "
        r"The referenced credential has expired; run kinit"
    )):
        expired.call("get_all_databases")
    expired.close()
