"""A catalog's storage settings for Spark drivers: credentials only from ``/storage-credentials`` (to tokens that
may read the catalog, audited without values, never cached), masked in every other answer; a store that cannot
be reached is 503 (StorageUnavailableError)."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from tests.service.conftest import READ_TOKEN, WRITE_TOKEN, hms_properties
from tests.support.service import Server

pytestmark = pytest.mark.metastore

ACCESS_KEY = "AKIAHMSCATALOGPROBE1"
SECRET_KEY = "s3-secret-of-the-storage-tests-not-shown"


def lake_properties(metastore_uri: str) -> dict[str, str]:
    """A Hive catalog whose tables' store is an S3 endpoint with credentials, and an HDFS HA nameservice."""
    return hms_properties(metastore_uri, **{
        "s3.endpoint": "http://127.0.0.1:9", "s3.region": "us-east-1", "s3.access_key": ACCESS_KEY,
        "s3.secret_key": SECRET_KEY, "use_path_style": "true", "storage.vending": "catalog_key", "dfs.nameservices": "ns1",
        "dfs.ha.namenodes.ns1": "nn1,nn2", "dfs.namenode.rpc-address.ns1.nn1": "nn1.example:8020",
        "dfs.namenode.rpc-address.ns1.nn2": "nn2.example:8020",
        "dfs.client.failover.proxy.provider.ns1": "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider"})


@pytest.fixture
def lake(ddl_service: Server, metastore_uri: str, unique_name: str) -> Iterator[str]:
    client = ddl_service.client()
    client.create_catalog(unique_name, lake_properties(metastore_uri))
    try:
        yield unique_name
    finally:
        client.drop_catalog(unique_name)
        client.close()


def _audit_lines(server: Server) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (server.home / "audit.log").read_text(encoding="utf-8").splitlines()]


def test_the_driver_endpoint_gives_hadoop_settings_with_credentials_uncached_and_audited(ddl_service: Server, lake: str) -> None:
    path = f"/v1/catalogs/{lake}/storage-credentials"
    answer = ddl_service.request("GET", path, token=READ_TOKEN)
    assert answer.status == 200, answer
    assert answer.headers["cache-control"] == "no-store" and answer.headers["pragma"] == "no-cache"
    body = answer.json()
    settings = body["hadoop_settings"]
    assert body["catalog"] == lake
    assert settings["fs.s3a.access.key"] == ACCESS_KEY and settings["fs.s3a.secret.key"] == SECRET_KEY
    assert settings["fs.s3a.endpoint"] == "http://127.0.0.1:9" and settings["fs.s3a.path.style.access"] == "true"
    assert settings["fs.s3a.connection.ssl.enabled"] == "false"
    assert settings["fs.s3.impl"] == settings["fs.s3n.impl"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"
    assert settings["dfs.nameservices"] == "ns1" and settings["dfs.namenode.rpc-address.ns1.nn2"] == "nn2.example:8020"
    assert "hadoop-aws" in body["spark_jars"]["s3a"] and "hadoop-azure" in body["spark_jars"]["abfss"]
    # A write token limited to another catalog may not read this one, nor its credentials (its entry's catalogs
    # limit reads too), and the refusal is audited
    refused = ddl_service.request("GET", path, token=WRITE_TOKEN)
    assert refused.status == 403 and f"catalog '{lake}'" in refused.error()["message"], refused
    assert SECRET_KEY not in refused.body.decode()

    line = [entry for entry in _audit_lines(ddl_service) if entry["statement"] == f"GET {path}" and entry["token"] == "ro"][-1]
    assert line["catalog"] == lake and line["outcome"] == "ok" and "fs.s3a.secret.key" in line["keys"]
    assert SECRET_KEY not in (ddl_service.home / "audit.log").read_text(encoding="utf-8")
    assert SECRET_KEY not in ddl_service.stderr()


def test_a_catalog_that_vends_nothing_answers_403_and_never_its_key(ddl_service: Server, metastore_uri: str,
                                                                    unique_name: str) -> None:
    """Without a role, the catalog's own key goes out only where 'storage.vending'='catalog_key' says so."""
    properties = {key: value for key, value in lake_properties(metastore_uri).items() if key != "storage.vending"}
    client = ddl_service.client()
    client.create_catalog(unique_name, properties)
    try:
        refused = ddl_service.request("GET", f"/v1/catalogs/{unique_name}/storage-credentials", token=READ_TOKEN)
        assert refused.status == 403 and refused.error()["type"] == "VendingDisabledError", refused
        assert f"vending is off for catalog '{unique_name}'" in refused.error()["message"]
        assert SECRET_KEY.encode() not in refused.body and ACCESS_KEY.encode() not in refused.body
    finally:
        client.drop_catalog(unique_name)
        client.close()


def test_credentials_need_a_known_token_and_a_defined_catalog(ddl_service: Server, lake: str) -> None:
    path = f"/v1/catalogs/{lake}/storage-credentials"
    for token in (None, "not-a-token-of-this-service-0000"):
        refused = ddl_service.request("GET", path, token=token)
        assert refused.status == 401 and refused.error()["type"] == "Unauthorized"
        assert SECRET_KEY.encode() not in refused.body
    missing = ddl_service.request("GET", f"/v1/catalogs/{lake}_none/storage-credentials", token=READ_TOKEN)
    assert missing.status == 404 and missing.error()["kind"] == "catalog"


def test_no_other_answer_carries_a_credential(ddl_service: Server, lake: str, unique_name: str) -> None:
    """Listings, the definition, SHOW CREATE CATALOG, a table's view and its plan: secrets masked or absent."""
    database = f"{unique_name}_db"
    made = [ddl_service.request("POST", "/v1/statements", {"sql": sql}) for sql in (
        f"CREATE DATABASE {lake}.{database}", f"CREATE TABLE {lake}.{database}.t (id INT) STORED AS PARQUET")]
    assert [answer.status for answer in made] == [200, 200], made
    try:
        answers = [
            ddl_service.request("GET", "/v1/catalogs", token=READ_TOKEN),
            ddl_service.request("GET", f"/v1/catalogs/{lake}", token=READ_TOKEN),
            ddl_service.request("POST", "/v1/statements", {"sql": f"SHOW CREATE CATALOG {lake}"}, token=READ_TOKEN),
            ddl_service.request("POST", "/v1/statements", {"sql": "SHOW CATALOGS"}, token=READ_TOKEN),
            ddl_service.request("GET", f"/v1/catalogs/{lake}/databases/{database}/tables/t", token=READ_TOKEN),
            ddl_service.request("POST", f"/v1/catalogs/{lake}/databases/{database}/tables/t/plan", {}, token=READ_TOKEN),
        ]
        assert [answer.status for answer in answers] == [200] * len(answers), answers
        assert [index for index, answer in enumerate(answers) if SECRET_KEY.encode() in answer.body] == []
        shown = answers[1].json()["properties"]
        assert shown["s3.secret_key"] == "******" and shown["s3.endpoint"] == "http://127.0.0.1:9"
        assert "******" in answers[2].json()["rows"][0][1]
    finally:
        ddl_service.request("POST", "/v1/statements", {"sql": f"DROP DATABASE {lake}.{database} CASCADE"})


@contextlib.contextmanager
def moto_endpoint() -> Iterator[tuple[str, Any]]:
    """moto's S3 server on 127.0.0.1 (a real HTTP S3 API) with a bucket ``lake``; yields its URL and its server."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}", server
    finally:
        with contextlib.suppress(Exception):  # stopped by the test already
            server.stop()


def test_a_store_out_of_reach_is_503_naming_catalog_and_location(ddl_service: Server, unique_name: str) -> None:
    with moto_endpoint() as (endpoint, server):
        store = pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", access_key=ACCESS_KEY, secret_key=SECRET_KEY,
                                  region="us-east-1", allow_bucket_creation=True)
        store.create_dir("lake")
        pq.write_table(pa.table({"id": [1, 2]}), "lake/sales/orders/part-0.parquet", filesystem=store)
        client = ddl_service.client()
        client.create_catalog(unique_name, {
            "type": "filesystem", "root": "s3a://lake/", "s3.endpoint": endpoint, "s3.access_key": ACCESS_KEY,
            "s3.secret_key": SECRET_KEY, "use_path_style": "true", "s3.connection.timeout": "1000",
            "s3.request.timeout": "2000"})
        try:
            server.stop()
            answer = ddl_service.request("GET", f"/v1/catalogs/{unique_name}/databases/sales/tables", token=READ_TOKEN)
            assert answer.status == 503, answer  # worth a retry later, unlike a store that answers and refuses (502)
            error = answer.error()
            assert error["type"] == "StorageUnavailableError"
            assert unique_name in error["message"] and "s3a://lake/" in error["message"]
            assert SECRET_KEY not in error["message"]
        finally:
            client.drop_catalog(unique_name)
            client.close()
