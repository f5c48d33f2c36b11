"""Spark's own Hive support (PySpark's built-in Hive 2.3 client, no connector) through the Kerberized endpoint, as a
Spark on a secure cluster is configured: ``hive.metastore.sasl.enabled=true``, the endpoint's principal as
``hive.metastore.kerberos.principal``, Hadoop's Kerberos on (core-site.xml) and a login from a keytab
(``spark.kerberos.principal`` and ``spark.kerberos.keytab``). It lists, reads, creates and inserts; what it made
is the metastore's, seen by a direct client, and its changes are audited as the principal's.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from hms_catalog.metastore import EmbeddedMetastore
from service.thrift.kerberos import Protection
from tests.kerberos.conftest import Realm
from tests.support import hms
from tests.support.kerberized import Kerberized, kerberized
from tests.support.spark_hive_client import SparkHiveClient

pytestmark = pytest.mark.slow


@pytest.fixture
def secured(home: Path, metastore_uri: str, realm: Realm) -> Iterator[Kerberized]:
    with kerberized(home, metastore_uri, realm) as opened:
        yield opened


def spark_on(secured: Kerberized, realm: Realm, metastore: EmbeddedMetastore, scratch: Path,
             monkeypatch: pytest.MonkeyPatch, protection: Protection) -> SparkHiveClient:
    """A Spark whose JVM logs in as the realm's user from its keytab and reaches the endpoint over SASL."""
    conf_dir = scratch / "hadoop-conf"
    conf_dir.mkdir(parents=True)
    (conf_dir / "core-site.xml").write_text(
        "<configuration>"
        "<property><name>hadoop.security.authentication</name><value>kerberos</value></property>"
        f"<property><name>hadoop.rpc.protection</name><value>{_HADOOP_NAMES[protection]}</value></property>"
        "</configuration>")
    monkeypatch.setenv("HADOOP_CONF_DIR", str(conf_dir))  # spark-submit puts it on the JVM's classpath
    # Hive 2.3's client puts the URI's host as written in place of _HOST: a host name, as a secure cluster's URIs are
    return SparkHiveClient(f"thrift://localhost:{secured.port}", Path(metastore.warehouse), scratch / "spark", {
        "spark.hadoop.hive.metastore.sasl.enabled": "true",
        "spark.hadoop.hive.metastore.kerberos.principal": realm.service,  # hive/_HOST@HMS.TEST
        "spark.kerberos.principal": realm.user, "spark.kerberos.keytab": str(realm.user_keytab),
        "spark.security.credentials.hive.enabled": "false",  # the endpoint issues no delegation tokens
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={scratch / 'spark'} "
                                         f"-Djava.security.krb5.conf={realm.kdc.krb5_conf}",
    })


_HADOOP_NAMES = {"auth": "authentication", "auth-int": "integrity", "auth-conf": "privacy"}


def test_spark_lists_reads_creates_and_inserts_through_the_kerberized_endpoint(
        secured: Kerberized, realm: Realm, metastore: EmbeddedMetastore, admin: hms.Admin, tmp_path: Path,
        unique_name: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="service.thrift.admission")
    admin.create_database(unique_name)
    with spark_on(secured, realm, metastore, tmp_path, monkeypatch, "auth-conf") as spark:
        assert (unique_name,) in spark.sql("SHOW DATABASES")
        spark.sql(f"CREATE TABLE {unique_name}.sales (id INT, amount DOUBLE) PARTITIONED BY (dt STRING) STORED AS PARQUET")
        spark.sql(f"INSERT INTO {unique_name}.sales PARTITION (dt='2026-01-01') VALUES (1, 10.0), (2, 20.0)")
        spark.sql(f"INSERT INTO {unique_name}.sales PARTITION (dt='2026-01-02') VALUES (3, 30.0)")
        assert spark.sql(f"SHOW TABLES IN {unique_name}") == [(unique_name, "sales", False)]
        assert spark.sql(f"SELECT id, amount, dt FROM {unique_name}.sales ORDER BY id") == [
            (1, 10.0, "2026-01-01"), (2, 20.0, "2026-01-01"), (3, 30.0, "2026-01-02")]
        assert spark.sql(f"SHOW PARTITIONS {unique_name}.sales") == [("dt=2026-01-01",), ("dt=2026-01-02",)]
    table = admin.pool.call("get_table", unique_name, "sales")  # the metastore's own, made through the endpoint
    assert [column.name for column in table.sd.cols] == ["id", "amount"]
    changes = [line for line in secured.audit() if line.get("via") == "thrift" and line["outcome"] == "ok"
               and line.get("catalog") == "hive"]
    assert any(line["statement"].startswith("thrift create_table") and f"{unique_name}.sales" in line["statement"]
               for line in changes), changes
    assert all(line.get("user") == "etl" and realm.user in json.dumps(line) for line in changes), changes
    assert not [line for line in secured.audit() if line["outcome"] == "refused"]
    assert f"authenticated as {realm.user} (auth-conf)" in caplog.text  # hadoop.rpc.protection=privacy: sealed
