"""The catalog service's REST API against a real server process on the embedded metastore: every endpoint,
every error code, auth, compare-and-set, long polls and single-flight loads."""

from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import pytest

from hms_catalog.errors import (
    AlreadyExistsError,
    ConfigurationError,
    MetastoreUnavailableError,
    NotFoundError,
    SqlSyntaxError,
    VersionMismatchError,
)
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.remote import CatalogServiceClient, decode_value
from planner.plan import SplitPlan
from tests.support.hms import Admin
from tests.support.service import RunningService, running_service

pytestmark = pytest.mark.metastore

DB = f"api{os.getpid()}"
EVENTS = {"hive.enable_hms_events_incremental_sync": "true", "hive.hms_events_polling_interval_ms": "200"}


@pytest.fixture(scope="module")
def warehouse(spark: Any) -> Iterator[str]:
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    spark.sql(f"CREATE TABLE {DB}.sales (id BIGINT, amount DECIMAL(10,2), tags MAP<STRING, INT>) "
              "PARTITIONED BY (dt STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.sales PARTITION (dt='2024-01-01') VALUES (1, 1.50, map('a', 1))")
    spark.sql(f"INSERT INTO {DB}.sales PARTITION (dt='2024-01-02') VALUES (2, 2.50, NULL)")
    spark.sql(f"CREATE TABLE {DB}.salaries (id INT) STORED AS PARQUET")
    spark.sql(f"CREATE TABLE {DB}.other (id INT) STORED AS PARQUET")
    yield DB
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, warehouse: str) -> Iterator[RunningService]:
    with running_service(tmp_path_factory.mktemp("api") / "home") as running:
        yield running


@pytest.fixture(scope="module")
def client(service: RunningService, metastore_uri: str) -> Iterator[CatalogServiceClient]:
    opened = service.client()
    opened.create_catalog("hive", {"type": "hms", "hive.metastore.uris": metastore_uri, "x.password": "hunter2", **EVENTS},
                          comment="the test metastore")
    yield opened
    opened.close()


def _raw(service: RunningService, method: str, path: str, body: bytes | None = None,
         headers: dict[str, str] | None = None, token: str | None = "") -> tuple[int, dict[str, str], bytes]:
    """One request as any HTTP client sends it (``token=""``: the service's own; None: no header)."""
    parts = urlsplit(service.url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    try:
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token or service.token}"
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _error(body: bytes) -> dict[str, Any]:
    error = json.loads(body)["error"]
    assert set(error) >= {"type", "message"}
    return dict(error)


def _counter(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    assert wanted  # labels are always given
    return total


def test_health_needs_no_token_and_everything_else_does(service: RunningService, client: CatalogServiceClient) -> None:
    status, _, body = _raw(service, "GET", "/v1/health", token=None)
    assert status == 200 and json.loads(body)["status"] == "ok"
    for path in ("/v1/catalogs", "/metrics", "/openapi.json", "/v1/catalogs/hive/databases"):
        for token in (None, "wrong-token-of-some-length"):
            status, headers, body = _raw(service, "GET", path, token=token)
            assert status == 401, path
            assert _error(body)["type"] == "Unauthorized" and headers["www-authenticate"] == "Bearer"
    status, _, body = _raw(service, "GET", "/openapi.json")
    paths = json.loads(body)["paths"]
    assert {"/v1/catalogs", "/v1/catalogs/{catalog}/databases/{database}/tables/{table}/plan", "/v1/statements",
            "/v1/catalogs/{catalog}/changes"} <= set(paths)


def test_catalogs_are_listed_and_shown_with_secrets_masked(service: RunningService, client: CatalogServiceClient) -> None:
    listed = {entry["name"]: entry for entry in client.catalogs()}
    assert {"name", "type", "comment", "id", "version"} <= set(listed["hive"])
    assert listed["hive"]["type"] == "hms" and listed["hive"]["comment"] == "the test metastore"
    status, headers, body = _raw(service, "GET", "/v1/catalogs/hive")
    shown = json.loads(body)
    assert status == 200 and headers["etag"] == f'"{shown["version"]}"'
    assert shown["properties"]["x.password"] == "******"
    everything = [body, _raw(service, "GET", "/v1/catalogs")[2],
                  json.dumps(client.statement("SHOW CREATE CATALOG hive")).encode()]
    assert not [text for text in everything if b"hunter2" in text]


def test_create_alter_rename_and_drop_with_compare_and_set(service: RunningService, client: CatalogServiceClient,
                                                          metastore_uri: str) -> None:
    properties = {"type": "hms", "hive.metastore.uris": metastore_uri}
    status, headers, body = _raw(service, "POST", "/v1/catalogs", json.dumps(
        {"name": "scratch", "comment": "c", "properties": properties}).encode(), {"Content-Type": "application/json"})
    assert status == 201 and json.loads(body)["version"] == 1 and headers["etag"] == '"1"'
    with pytest.raises(AlreadyExistsError, match="catalog 'scratch' already exists"):
        client.create_catalog("scratch", properties)
    with pytest.raises(ConfigurationError, match="hive.metastore.client.pool.size"):
        client.create_catalog("broken", {**properties, "hive.metastore.client.pool.size": "zero"})
    assert "broken" not in {c["name"] for c in client.catalogs()}

    altered = client.alter_catalog("scratch", properties={"hive.metastore.client.pool.size": "2"}, if_version=1)
    assert altered["version"] == 2 and altered["properties"]["hive.metastore.client.pool.size"] == "2"
    stale = _raw(service, "PATCH", "/v1/catalogs/scratch", json.dumps({"properties": {"a.b": "c"}}).encode(),
                 {"Content-Type": "application/json", "If-Match": '"1"'})
    assert stale[0] == 412 and _error(stale[2])["type"] == "VersionMismatchError"
    with pytest.raises(VersionMismatchError):
        client.alter_catalog("scratch", rename="gone", if_version=1)
    with pytest.raises(VersionMismatchError):
        client.drop_catalog("scratch", if_version=1)
    assert client.catalog("scratch")["version"] == 2 and "a.b" not in client.catalog("scratch")["properties"]
    bad = _raw(service, "PATCH", "/v1/catalogs/scratch", b"{}", {"Content-Type": "application/json", "If-Match": "yesterday"})
    assert bad[0] == 400 and "If-Match" in _error(bad[2])["message"]

    renamed = client.alter_catalog("scratch", rename="scratch2", if_version=2)
    assert renamed["name"] == "scratch2" and renamed["version"] == 3
    client.drop_catalog("scratch2", if_version=3)
    assert "scratch2" not in {c["name"] for c in client.catalogs()}
    missing = _raw(service, "DELETE", "/v1/catalogs/scratch2")
    assert missing[0] == 404 and _error(missing[2]) == {
        "type": "NotFoundError", "message": "catalog 'scratch2' does not exist", "kind": "catalog", "name": "scratch2"}


def test_databases_tables_and_a_table(client: CatalogServiceClient, spark: Any) -> None:
    assert DB in client.databases("hive")
    assert client.tables("hive", DB) == ["other", "salaries", "sales"]
    assert client.tables("hive", DB, like="sal%") == ["salaries", "sales"]
    table = client.table("hive", DB, "sales")
    assert {k: table[k] for k in ("catalog", "database", "name", "format", "file_format", "partition_keys")} == {
        "catalog": "hive", "database": DB, "name": "sales", "format": "HIVE", "file_format": "parquet",
        "partition_keys": ["dt"]}
    assert table["location"].endswith("/sales") and isinstance(table["version"], int)
    assert "MapredParquetInputFormat" in table["reason"]  # why it was classified HIVE
    assert table["columns"] == [
        {"name": "id", "type": "bigint", "nullable": True, "partition_key": False, "comment": ""},
        {"name": "amount", "type": "decimal(10,2)", "nullable": True, "partition_key": False, "comment": ""},
        {"name": "tags", "type": "map<string,int>", "nullable": True, "partition_key": False, "comment": ""},
        {"name": "dt", "type": "string", "nullable": True, "partition_key": True, "comment": ""},
    ]
    assert table["spark_schema"] == spark.table(f"{DB}.sales").schema.jsonValue()
    for call, what in ((lambda: client.table("hive", DB, "nope"), f"table 'hive.{DB}.nope'"),
                       (lambda: client.tables("hive", "nope"), "database 'hive.nope'"),
                       (lambda: client.databases("nope"), "catalog 'nope'")):
        with pytest.raises(NotFoundError, match=what):
            call()


def test_the_plan_endpoint_plans_on_the_server(client: CatalogServiceClient) -> None:
    plan = SplitPlan.loads(client.plan("hive", DB, "sales", where="dt = '2024-01-02'", columns=["id", "dt"]))
    assert plan.full_name == f"hive.{DB}.sales" and plan.options["columns"] == "id,dt"
    assert {split.partition_values for split in plan.splits} == {(("dt", "2024-01-02"),)}
    everything = SplitPlan.loads(client.plan("hive", DB, "sales"))
    assert len(everything.splits) == 2
    with pytest.raises(ConfigurationError, match="has no column"):
        client.plan("hive", DB, "sales", columns=["nope"])
    with pytest.raises(SqlSyntaxError):
        client.plan("hive", DB, "sales", where="dt = = 1")


def test_statements_carry_the_position_and_values(service: RunningService, client: CatalogServiceClient) -> None:
    switched = client.statement("SWITCH hive")
    assert (switched["catalog"], switched["database"], switched["columns"]) == ("hive", None, [])
    assert switched["message"] == "switched to catalog 'hive'"
    used = client.statement(f"USE {DB}", catalog="hive")
    assert (used["catalog"], used["database"]) == ("hive", DB)
    described = client.statement("DESCRIBE sales", catalog="hive", database=DB)
    assert described["statement"] == "DESCRIBE sales" and described["columns"][0] == "Field"
    assert [row[0] for row in described["rows"]] == ["id", "amount", "tags", "dt"]
    several = client.statement("SWITCH hive; SHOW TABLES FROM " + DB + " LIKE 'other'")
    assert several["rows"] == [["other"]] and several["catalog"] == "hive"
    with pytest.raises(SqlSyntaxError, match="line 1:"):
        client.statement("SHOW TABLES FROM")
    status, _, body = _raw(service, "POST", "/v1/statements", b'{"sql": "SHOW CATALOGS"',
                           {"Content-Type": "application/json"})
    assert status == 400 and _error(body)["message"].startswith("the request body is not valid JSON")
    status, _, body = _raw(service, "POST", "/v1/statements", b'{"sql": "SHOW CATALOGS", "extra": 1}',
                           {"Content-Type": "application/json"})
    assert status == 400 and "extra" in _error(body)["message"]


def test_oversized_bodies_are_refused_and_the_server_goes_on(service: RunningService) -> None:
    big = b'{"sql": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    status, _, body = _raw(service, "POST", "/v1/statements", big, {"Content-Type": "application/json"})
    assert status == 413 and _error(body)["type"] == "PayloadTooLarge"
    # The same body streamed in chunks, with no Content-Length to go by.
    parts = urlsplit(service.url)
    with socket.create_connection((parts.hostname or "", parts.port or 0), timeout=30) as sock:
        head = (f"POST /v1/statements HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {service.token}\r\n"
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        sock.sendall(head.encode())
        try:
            for start in range(0, len(big), 65536):
                chunk = big[start:start + 65536]
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server may answer and close before reading it all
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413")
    assert _raw(service, "GET", "/v1/health", token=None)[0] == 200


def test_an_unreachable_metastore_is_503(service: RunningService, client: CatalogServiceClient) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client.create_catalog("dead", {"type": "hms", "hive.metastore.uris": f"thrift://127.0.0.1:{port}",
                                   "hive.metastore.failure.retries": "0", "hive.metastore.client.connect.timeout": "1s"})
    try:
        status, _, body = _raw(service, "GET", "/v1/catalogs/dead/databases")
        assert status == 503 and _error(body)["type"] == "MetastoreUnavailableError"
        with pytest.raises(MetastoreUnavailableError, match=f"127.0.0.1:{port}"):
            client.databases("dead")
    finally:
        client.drop_catalog("dead")


def test_cache_endpoints_and_metrics(service: RunningService, client: CatalogServiceClient) -> None:
    client.table("hive", DB, "sales")
    cache = client.cache("hive")
    assert cache["columns"][:3] == ["Cache", "Entries", "Capacity"]
    assert {row[0] for row in cache["rows"]} >= {"names", "schema", "partitions", "files"}
    schema = client.schema_cache("hive")
    assert [row[:3] for row in schema["rows"] if row[1] == "sales"] == [[DB, "sales", "HIVE"]]
    text = client.metrics_text()
    assert _counter(text, "hms_catalog_requests_total", route="/v1/catalogs/{catalog}/databases/{database}/tables/{table}",
                    status="200") >= 1
    assert _counter(text, "hms_catalog_request_seconds_count", route="/v1/catalogs/{catalog}/cache") >= 1
    assert _counter(text, "hms_catalog_metastore_calls_total", catalog="hive", method="get_table_req") >= 1
    assert _counter(text, "hms_catalog_cache_hits_total", catalog="hive", cache="schema") >= 0
    assert _counter(text, "hms_catalog_cache_loads_total", catalog="hive", cache="schema") >= 1
    assert 'hms_catalog_cache_misses_total{catalog="hive",cache="names"}' in text


def test_sixteen_cold_clients_cause_one_table_load(service: RunningService, client: CatalogServiceClient,
                                                   admin: Admin, metastore: EmbeddedMetastore) -> None:
    admin.create_table(DB, "cold", [("id", "int")])
    before = _counter(client.metrics_text(), "hms_catalog_metastore_calls_total", catalog="hive", method="get_table_req")
    mark, _ = metastore.audited_calls()
    barrier = threading.Barrier(16)
    answers: list[Any] = []

    def load() -> None:
        mine = service.client()
        try:
            barrier.wait(timeout=30)
            answers.append(mine.table("hive", DB, "cold")["columns"])
        finally:
            mine.close()

    threads = [threading.Thread(target=load) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(answers) == 16 and all(answer == answers[0] for answer in answers)
    after = _counter(client.metrics_text(), "hms_catalog_metastore_calls_total", catalog="hive", method="get_table_req")
    assert after - before == 1
    time.sleep(0.3)  # the audit log is written asynchronously
    _, audited = metastore.audited_calls(mark)
    assert audited.get("get_table") == 1  # the server saw exactly one table load


def _long_poll(client: CatalogServiceClient, since: int) -> tuple[threading.Thread, list[dict[str, Any]]]:
    """A thread waiting (up to 30 s) for a change after ``since``; its answer lands in the list."""
    answers: list[dict[str, Any]] = []

    def poll() -> None:
        try:
            answers.append(client.changes("hive", since=since, wait=30))
        finally:
            client.close()  # this thread's connection

    poller = threading.Thread(target=poll)
    poller.start()
    time.sleep(0.5)  # it is waiting now
    return poller, answers


def test_a_long_poll_wakes_at_a_refresh(service: RunningService, client: CatalogServiceClient) -> None:
    current = client.changes("hive")["current"]
    assert client.changes("hive", since=current, wait=0)["changes"] == []
    poller, answers = _long_poll(service.client(), current)
    began = time.monotonic()
    client.refresh("hive", DB, "sales")
    poller.join(timeout=30)
    waited = time.monotonic() - began
    assert answers and answers[0]["changes"], answers
    assert answers[0]["changes"][0]["source"] == "refresh" and f"{DB}.sales" in answers[0]["changes"][0]["object"]
    assert waited < 10  # woke at the change, not at its 30 s limit
    with pytest.raises(ConfigurationError, match="'wait' must be between 0 and 60"):
        client.changes("hive", wait=61)


def test_a_long_poll_wakes_at_a_metastore_event(client: CatalogServiceClient, spark: Any, service: RunningService) -> None:
    client.table("hive", DB, "other")  # the follower runs from the catalog's first use
    current = client.changes("hive")["current"]
    poller, answers = _long_poll(service.client(), current)
    began = time.monotonic()
    spark.sql(f"ALTER TABLE {DB}.other ADD COLUMNS (note STRING)")
    poller.join(timeout=30)
    assert answers and any(c["source"] == "event" for c in answers[0]["changes"]), answers
    assert time.monotonic() - began < 10
    assert [c["name"] for c in client.table("hive", DB, "other")["columns"]] == ["id", "note"]  # no REFRESH needed


def test_refresh_forms_and_their_errors(client: CatalogServiceClient) -> None:
    for kwargs in ({}, {"database": DB}, {"database": DB, "table": "sales"}):
        answer = client.refresh("hive", **kwargs)
        assert answer["catalog"] == "hive" and isinstance(answer["version"], int)
    with pytest.raises(ConfigurationError, match="needs its 'database'"):
        client.refresh("hive", table="sales")
    with pytest.raises(NotFoundError):
        client.refresh("nope")


def test_select_values_come_back_typed(client: CatalogServiceClient) -> None:
    answer = client.statement(f"SELECT id, amount, tags FROM hive.{DB}.sales ORDER BY id")
    rows = [[decode_value(v) for v in row] for row in answer["rows"]]
    assert rows == [[1, Decimal("1.50"), {"a": 1}], [2, Decimal("2.50"), None]]


def test_the_token_file_is_private(service: RunningService) -> None:
    mode = (service.home / "server.token").stat().st_mode & 0o777
    assert mode == 0o600 and len(service.token) >= 32


def test_unknown_paths_are_json_errors(service: RunningService) -> None:
    status, _, body = _raw(service, "GET", "/v2/nothing")
    assert status == 404 and _error(body)["type"] == "NotFound"
