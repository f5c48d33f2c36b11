"""Connections to the secure embedded metastore through the real KDC: logins, _HOST, and each failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hms_catalog.client import HmsClientPool, MetastoreClient
from hms_catalog.errors import AuthenticationError, MetastoreUnavailableError
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import CatalogConfig, ClientConfig, parse_uris
from tests.kerberos.conftest import Realm
from tests.support import hms


def _pool(realm: Realm, uri: str, **extra: str) -> HmsClientPool:
    return realm.pool(uri, **{"hive.metastore.failure.retries": "1", **extra})


def _cache_only(realm: Realm, uri: str, **extra: str) -> HmsClientPool:
    """A catalog with no keytab: it logs in from a ticket cache."""
    props = {key: value for key, value in realm.catalog_properties(uri, **extra).items() if not key.startswith("hadoop.kerberos")}
    return HmsClientPool(CatalogConfig.from_properties(props).client)


def test_keytab_login_reads_tables_without_kinit(realm: Realm, secure_metastore: EmbeddedMetastore,
                                                 secure_admin: hms.Admin, unique_name: str) -> None:
    secure_admin.create_database(unique_name)
    secure_admin.create_table(unique_name, "events", [("id", "bigint"), ("name", "string")])
    client = MetastoreClient(_pool(realm, secure_metastore.uri))
    try:
        assert unique_name in client.get_all_databases()
        table = client.get_table(unique_name, "events")
        assert [column.name for column in table.sd.cols] == ["id", "name"]
        assert client.metrics().connections_opened == 1  # one SASL connection, kept for both calls
    finally:
        client.close()


def test_ticket_cache_login_after_kinit(realm: Realm, secure_metastore: EmbeddedMetastore, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "krb5cc"
    realm.kdc.kinit(realm.user, realm.user_keytab, f"FILE:{cache}")
    named = _cache_only(realm, secure_metastore.uri, **{"hive.metastore.client.credential-cache.location": f"FILE:{cache}"})
    assert "default" in named.call("get_all_databases")
    named.close()
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{cache}")  # the default cache, as after a plain kinit
    default = _cache_only(realm, secure_metastore.uri)
    assert "default" in default.call("get_all_databases")
    default.close()


def test_host_pattern_is_resolved_per_uri(realm: Realm, secure_metastore: EmbeddedMetastore) -> None:
    port = parse_uris(secure_metastore.uri)[0].port
    config = CatalogConfig.from_properties(realm.catalog_properties(f"thrift://127.0.0.1:{port}")).client.kerberos
    assert config is not None and config.service_principal_for("127.0.0.1") == "hive/localhost@HMS.TEST"
    for host in ("127.0.0.1", "localhost"):
        pool = _pool(realm, f"thrift://{host}:{port}")
        assert "default" in pool.call("get_all_databases")
        pool.close()


def test_pooled_sasl_connections_are_shared_by_threads(realm: Realm, secure_metastore: EmbeddedMetastore) -> None:
    pool = _pool(realm, secure_metastore.uri, **{"hive.metastore.client.pool.size": "3"})
    answers: list[list[str]] = []

    def work() -> None:
        for _ in range(10):
            answers.append(pool.call("get_all_databases"))
    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 60 and all("default" in answer for answer in answers)
    assert 1 <= pool.metrics.snapshot().connections_opened <= 3
    pool.close()


def test_failover_from_a_dead_uri_to_a_secure_one(realm: Realm, secure_metastore: EmbeddedMetastore, refused_uri: str) -> None:
    pool = _pool(realm, f"{refused_uri},{secure_metastore.uri}")
    assert "default" in pool.call("get_all_databases")
    snapshot = pool.metrics.snapshot()
    assert snapshot.connect_failures == 1 and snapshot.connections_opened == 1
    pool.close()


def test_a_restarted_metastore_is_reconnected_over_sasl_by_a_retry(realm: Realm, secure_metastore: EmbeddedMetastore) -> None:
    pool = _pool(realm, secure_metastore.uri, **{"hive.metastore.failure.retries": "3", "hive.metastore.uri.backoff": "0"})
    assert "default" in pool.call("get_all_databases")
    secure_metastore.stop()
    secure_metastore.start()  # the same port: the pooled connection is dead, the URI is not
    assert "default" in pool.call("get_all_databases")
    snapshot = pool.metrics.snapshot()
    assert snapshot.retries >= 1 and snapshot.connections_opened == 2 and snapshot.clients_discarded >= 1
    pool.close()


def _refused(pool: HmsClientPool) -> str:
    with pytest.raises(AuthenticationError) as caught:
        pool.call("get_all_databases")
    pool.close()
    return str(caught.value)


def test_no_credentials(realm: Realm, secure_metastore: EmbeddedMetastore, tmp_path: Path) -> None:
    message = _refused(_cache_only(realm, secure_metastore.uri, **{
        "hive.metastore.client.credential-cache.location": f"FILE:{tmp_path / 'empty'}"}))
    assert secure_metastore.uri in message
    assert f"no usable Kerberos credentials in the ticket cache FILE:{tmp_path / 'empty'}" in message
    assert "run kinit, or set 'hadoop.kerberos.keytab' and 'hadoop.kerberos.principal'" in message


def test_unknown_service_principal(realm: Realm, secure_metastore: EmbeddedMetastore) -> None:
    message = _refused(_pool(realm, secure_metastore.uri, **{"hive.metastore.kerberos.principal": "hive/nohost@HMS.TEST"}))
    assert f"as {realm.user} to hive/nohost@HMS.TEST at {secure_metastore.uri}" in message
    assert "Server hive/nohost@HMS.TEST not found in Kerberos database" in message


def test_wrong_service_principal_is_refused_by_the_metastore(realm: Realm, secure_metastore: EmbeddedMetastore) -> None:
    realm.kdc.add_principal("other/localhost")  # known to the KDC, not in the metastore's keytab
    message = _refused(_pool(realm, secure_metastore.uri, **{"hive.metastore.kerberos.principal": "other/_HOST@HMS.TEST"}))
    assert f"as {realm.user} to other/localhost@HMS.TEST at {secure_metastore.uri}" in message
    assert "the metastore refused the SASL negotiation" in message
    assert "names the principal in the metastore's keytab" in message


def test_outdated_client_keytab(realm: Realm, secure_metastore: EmbeddedMetastore, tmp_path: Path) -> None:
    old, new = tmp_path / "old.keytab", tmp_path / "new.keytab"
    principal = realm.kdc.add_principal("rotated", old)
    realm.kdc.export(principal, new)  # new keys on the KDC: the old keytab no longer matches
    message = _refused(_pool(realm, secure_metastore.uri, **{
        "hadoop.kerberos.principal": principal, "hadoop.kerberos.keytab": str(old)}))
    assert f"Kerberos login as {principal} from keytab {old} failed" in message
    assert "the keys do not match" in message or "export the keytab again" in message


def test_clock_skew(realm: Realm, secure_metastore: EmbeddedMetastore, tmp_path: Path) -> None:
    """A client whose clock is an hour ahead (libfaketime) and whose Kerberos does not correct for it
    (``kdc_timesync = 0``; MIT's default learns the KDC's offset and hides a skew from its clients)."""
    krb5_conf = tmp_path / "krb5.conf"
    krb5_conf.write_text(realm.kdc.krb5_conf.read_text().replace("[libdefaults]\n", "[libdefaults]\n  kdc_timesync = 0\n"))
    script = (
        "import json, sys\n"
        "from hms_catalog.client import HmsClientPool\n"
        "from hms_catalog.properties import CatalogConfig\n"
        "HmsClientPool(CatalogConfig.from_properties(json.loads(sys.argv[1])).client).call('get_all_databases')\n"
    )
    props = json.dumps(realm.catalog_properties(secure_metastore.uri))
    result = subprocess.run(["faketime", "-f", "+1h", sys.executable, "-c", script, props], capture_output=True,
                            text=True, timeout=120, env={**os.environ, "KRB5_CONFIG": str(krb5_conf)}, check=False)
    assert result.returncode != 0
    assert "AuthenticationError" in result.stderr and "Clock skew too great" in result.stderr, result.stderr[-2000:]
    assert f"{secure_metastore.uri}: Kerberos login as {realm.user} from keytab {realm.user_keytab} failed" in result.stderr
    assert "synchronise the clocks" in result.stderr


def test_sasl_client_on_a_plain_metastore(realm: Realm, metastore_uri: str) -> None:
    message = _refused(_pool(realm, metastore_uri, **{"hive.metastore.client.connect.timeout": "3"}))
    assert f"the metastore at {metastore_uri}" in message
    assert "it may not use Kerberos (then remove 'hive.metastore.sasl.enabled')" in message
    assert "or it refused the client's ticket" in message


def test_plain_client_on_a_secure_metastore(secure_metastore: EmbeddedMetastore) -> None:
    pool = HmsClientPool(ClientConfig(uris=parse_uris(secure_metastore.uri), retries=0))
    with pytest.raises(MetastoreUnavailableError) as caught:
        pool.call("get_all_databases")
    pool.close()
    message = str(caught.value)
    assert "it may require Kerberos, then set 'hive.metastore.sasl.enabled'='true'" in message
    assert "or it stopped or restarted" in message
