"""Every endpoint of the catalog service, over HTTP to a real server process on the embedded metastore."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from hms_catalog.remote import CatalogServiceClient
from planner.plan import SplitPlan
from tests.service.conftest import DB, SECRET, hms_properties, metric
from tests.support.service import Server

pytestmark = pytest.mark.metastore

TABLE_ROUTE = "/v1/catalogs/{catalog}/databases/{database}/tables/{table}"


def test_health_answers_without_a_token(service: Server) -> None:
    answer = service.request("GET", "/v1/health", token=None)
    assert answer.status == 200
    health = answer.json()
    assert health["status"] == "ok" and health["home"] == str(service.home)
    assert isinstance(health["version"], str) and health["uptime_seconds"] >= 0


def test_the_openapi_document_lists_every_endpoint(service: Server) -> None:
    answer = service.request("GET", "/openapi.json")
    assert answer.status == 200
    document = answer.json()
    assert document["info"]["title"] == "hms-catalog"
    methods = {path: set(operations) for path, operations in document["paths"].items()}
    assert methods == {
        "/v1/health": {"get"},
        "/metrics": {"get"},
        "/v1/principal": {"get"},
        "/v1/catalogs": {"get", "post"},
        "/v1/catalogs/{catalog}": {"get", "patch", "delete"},
        "/v1/catalogs/{catalog}/databases": {"get", "post"},
        "/v1/catalogs/{catalog}/databases/{database}": {"get", "patch", "delete"},
        "/v1/catalogs/{catalog}/databases/{database}/tables": {"get", "post"},
        TABLE_ROUTE: {"get", "patch", "delete"},
        TABLE_ROUTE + "/plan": {"post"},
        TABLE_ROUTE + "/partitions": {"get", "post", "delete"},
        TABLE_ROUTE + "/partitions/recover": {"post"},
        TABLE_ROUTE + "/writes": {"post"},
        "/v1/catalogs/{catalog}/databases/{database}/writes": {"post"},
        "/v1/catalogs/{catalog}/writes/{job}/commit": {"post"},
        "/v1/catalogs/{catalog}/writes/{job}/alive": {"post"},
        "/v1/catalogs/{catalog}/writes/{job}": {"delete"},
        "/v1/catalogs/{catalog}/refresh": {"post"},
        "/v1/catalogs/{catalog}/cache": {"get"},
        "/v1/catalogs/{catalog}/schema-cache": {"get"},
        "/v1/catalogs/{catalog}/changes": {"get"},
        "/v1/catalogs/{catalog}/storage-credentials": {"get"},
        "/v1/catalogs/{catalog}/storage-settings": {"get"},
        "/v1/statements": {"post"},
    }
    # The DDL routes' bodies and flags are declared, so clients can be generated from the document.
    paths, schemas = document["paths"], document["components"]["schemas"]

    def body(path: str, method: str) -> str:
        return json.dumps(paths[path][method]["requestBody"]["content"]["application/json"]["schema"])

    assert "NewDatabase" in body("/v1/catalogs/{catalog}/databases", "post")
    assert {"NewTable", "NewTableLike"} <= set(re.findall(r"schemas/(\w+)", body("/v1/catalogs/{catalog}/databases/{database}/tables",
                                                                                "post")))
    assert "TableChanges" in body(TABLE_ROUTE, "patch") and "AddPartitionsBody" in body(TABLE_ROUTE + "/partitions", "post")
    assert set(schemas["TableChanges"]["properties"]["changes"]["items"]["discriminator"]["mapping"]) == {
        "add_columns", "rename_column", "change_column", "replace_columns", "rename", "set_properties", "unset_properties",
        "set_location"}
    assert set(schemas["PartitionList"]["properties"]) == {"partitions", "next_page_token"}
    assert {"where", "page_size", "page_token"} <= {p["name"] for p in paths[TABLE_ROUTE + "/partitions"]["get"]["parameters"]}
    assert set(schemas["DdlAnswer"]["properties"]) == {"result", "version"}
    dropped = paths["/v1/catalogs/{catalog}/databases/{database}"]["delete"]["parameters"]
    assert {"sync_ddl", "sync_ddl_timeout", "cascade", "if_exists"} <= {p["name"] for p in dropped}
    assert "follower" in {p["name"] for p in paths["/v1/catalogs/{catalog}/changes"]["get"]["parameters"]}
    assert "sync_ddl" in schemas["StatementRequest"]["properties"]


def test_a_catalog_is_created_altered_renamed_and_dropped(service: Server, api: CatalogServiceClient, metastore_uri: str,
                                                          unique_name: str) -> None:
    properties = hms_properties(metastore_uri, **{"x.password": SECRET})
    created = service.request("POST", "/v1/catalogs", {"name": unique_name, "comment": "scratch", "properties": properties})
    assert created.status == 201 and created.headers["etag"] == '"1"'
    definition = created.json()
    assert {key: definition[key] for key in ("name", "type", "comment", "version")} == {
        "name": unique_name, "type": "hms", "comment": "scratch", "version": 1}
    assert definition["id"] and definition["properties"] == {**properties, "x.password": "******"}
    listed = {entry["name"]: entry for entry in api.catalogs()}
    assert {key: listed[unique_name][key] for key in ("name", "type", "comment", "id", "version")} == {
        key: definition[key] for key in ("name", "type", "comment", "id", "version")}
    assert "hive" in listed
    shown = service.request("GET", f"/v1/catalogs/{unique_name}")
    assert shown.status == 200 and shown.headers["etag"] == '"1"' and shown.json() == definition

    # Properties, on the condition that nobody changed the catalog since version 1.
    altered = service.request("PATCH", f"/v1/catalogs/{unique_name}", {"properties": {"hive.metastore.client.pool.size": "2"}},
                              headers={"If-Match": '"1"'})
    assert altered.status == 200 and altered.headers["etag"] == '"2"'
    assert altered.json()["version"] == 2 and altered.json()["properties"]["hive.metastore.client.pool.size"] == "2"
    assert altered.json()["properties"]["x.password"] == "******" and altered.json()["id"] == definition["id"]

    # A stale If-Match changes nothing, whatever the request.
    for method, body in (("PATCH", {"properties": {"a.b": "c"}}), ("PATCH", {"rename": f"{unique_name}_x"}), ("DELETE", None)):
        stale = service.request(method, f"/v1/catalogs/{unique_name}", body, headers={"If-Match": '"1"'})
        assert stale.status == 412 and stale.error()["type"] == "VersionMismatchError", (method, body, stale)
        assert "version 2, not 1" in stale.error()["message"]
    unchanged = service.request("GET", f"/v1/catalogs/{unique_name}")
    assert unchanged.headers["etag"] == '"2"' and unchanged.json() == altered.json()

    renamed = service.request("PATCH", f"/v1/catalogs/{unique_name}", {"rename": f"{unique_name}_new"},
                              headers={"If-Match": '"2"'})
    assert renamed.status == 200 and renamed.headers["etag"] == '"3"'
    assert (renamed.json()["name"], renamed.json()["id"]) == (f"{unique_name}_new", definition["id"])
    assert service.request("GET", f"/v1/catalogs/{unique_name}").status == 404
    # Without If-Match the change is unconditional; a weak ETag names a version as well.
    both = service.request("PATCH", f"/v1/catalogs/{unique_name}_new", {"properties": {"a.b": "c"}, "rename": unique_name})
    assert both.status == 200 and both.json()["version"] == 5 and both.json()["properties"]["a.b"] == "c"

    dropped = service.request("DELETE", f"/v1/catalogs/{unique_name}", headers={"If-Match": 'W/"5"'})
    assert dropped.status == 204 and dropped.body == b""
    assert service.request("GET", f"/v1/catalogs/{unique_name}").status == 404
    assert unique_name not in {entry["name"] for entry in api.catalogs()}


def test_databases_and_tables_are_listed(api: CatalogServiceClient) -> None:
    assert {"default", DB} <= set(api.databases("hive"))
    assert api.tables("hive", DB) == ["other", "salaries", "sales"]
    assert api.tables("hive", DB, like="sal%") == ["salaries", "sales"]
    assert api.tables("hive", DB, like="SAL_S") == ["sales"]  # case-insensitive, '_' one character
    assert api.tables("hive", DB, like="nothing%") == []


def test_a_table_is_described_as_spark_wrote_it(api: CatalogServiceClient, spark: Any) -> None:
    table = api.table("hive", DB, "sales")
    assert {key: table[key] for key in ("catalog", "database", "name", "format", "file_format", "partition_keys")} == {
        "catalog": "hive", "database": DB, "name": "sales", "format": "HIVE", "file_format": "parquet",
        "partition_keys": ["dt"]}
    assert table["location"].endswith(f"{DB}.db/sales") and isinstance(table["version"], int)
    assert "MapredParquetInputFormat" in table["reason"]  # why it was classified HIVE
    assert table["columns"] == [
        {"name": "id", "type": "bigint", "nullable": True, "partition_key": False, "comment": ""},
        {"name": "amount", "type": "decimal(10,2)", "nullable": True, "partition_key": False, "comment": ""},
        {"name": "tags", "type": "map<string,int>", "nullable": True, "partition_key": False, "comment": ""},
        {"name": "dt", "type": "string", "nullable": True, "partition_key": True, "comment": ""},
    ]
    assert table["spark_schema"] == spark.table(f"{DB}.sales").schema.jsonValue()
    assert api.table("HIVE", DB.upper(), "SALES")["name"] == "sales"  # names are case-insensitive, as in HMS


def test_a_plan_is_made_on_the_server_with_partitions_pruned(service: Server, api: CatalogServiceClient) -> None:
    answer = service.request("POST", f"/v1/catalogs/hive/databases/{DB}/tables/sales/plan",
                             {"where": "dt > '2024-01-01'", "columns": ["id", "dt"]})
    assert answer.status == 200 and answer.headers["content-type"] == "application/json"
    plan = SplitPlan.loads(answer.body.decode("utf-8"))
    assert (plan.full_name, plan.table_format, plan.file_format) == (f"hive.{DB}.sales", "HIVE", "parquet")
    assert plan.options["columns"] == "id,dt" and plan.predicate is not None and "2024-01-01" in plan.predicate
    assert plan.summary.partitions_scanned == 1 and plan.summary.files == len(plan.splits) == 1
    assert {split.partition_values for split in plan.splits} == {(("dt", "2024-01-02"),)}

    everything = SplitPlan.loads(api.plan("hive", DB, "sales"))
    assert everything.summary.partitions_scanned == 2 and everything.summary.partitions_pruned == 0
    assert {split.partition_values for split in everything.splits} == {(("dt", "2024-01-01"),), (("dt", "2024-01-02"),)}
    assert [column.name for column in everything.schema.columns] == ["id", "amount", "tags", "dt"]


def test_refresh_at_each_level_drops_what_was_cached(service: Server, api: CatalogServiceClient) -> None:
    def cached() -> set[tuple[str, str]]:
        return {(row[0], row[1]) for row in api.schema_cache("hive")["rows"]}

    def refreshed(body: dict[str, str], expected_object: str) -> None:
        api.table("hive", DB, "sales")
        assert (DB, "sales") in cached()
        before = api.changes("hive")["current"]
        answer = service.request("POST", "/v1/catalogs/hive/refresh", body)
        assert answer.status == 200, answer
        result = answer.json()
        assert result == {"catalog": "hive", "database": body.get("database"), "table": body.get("table"),
                          "version": result["version"]}
        assert result["version"] > before
        assert (DB, "sales") not in cached()
        changes = api.changes("hive", since=before)["changes"]
        assert [(c["kind"], c["object"], c["source"]) for c in changes] == [("invalidated", expected_object, "refresh")]

    refreshed({"database": DB, "table": "sales"}, f"table {DB}.sales")
    refreshed({"database": DB}, f"database {DB}")
    refreshed({}, "catalog")


def test_cache_endpoints_answer_as_show_cache(api: CatalogServiceClient) -> None:
    api.table("hive", DB, "salaries")
    cache = api.cache("hive")
    shown = api.statement("SHOW CACHE FROM hive")
    assert cache["columns"] == shown["columns"] == [
        "Cache", "Entries", "Capacity", "TtlSeconds", "Hits", "Misses", "Loads", "Evictions", "AvgLoadMs", "Bytes",
        "MemoryEvictions"]
    assert [row[:4] for row in cache["rows"]] == [row[:4] for row in shown["rows"]]
    assert {row[0] for row in cache["rows"]} >= {"names", "schema", "partition_values", "partitions", "files"}
    schema = api.schema_cache("hive")
    shown = api.statement("SHOW SCHEMA CACHE FROM hive")
    assert schema["columns"] == shown["columns"] == ["Database", "Table", "Format", "Columns", "LoadedAt", "AgeSeconds", "Hits"]
    assert [row[:4] for row in schema["rows"]] == [row[:4] for row in shown["rows"]]
    assert [DB, "salaries", "HIVE", 1] in [row[:4] for row in schema["rows"]]


def test_changes_are_listed_since_a_version(api: CatalogServiceClient) -> None:
    first = api.refresh("hive", DB, "other")["version"]
    second = api.refresh("hive", DB, "salaries")["version"]
    log = api.changes("hive", since=0)
    assert log["current"] >= second > first and log["truncated"] is False
    objects = [change["object"] for change in log["changes"]]
    assert objects.index(f"table {DB}.other") < objects.index(f"table {DB}.salaries")
    after = api.changes("hive", since=first)
    assert [c["object"] for c in after["changes"]][-1] == f"table {DB}.salaries"
    assert all(c["version"] > first for c in after["changes"])
    assert api.changes("hive", since=log["current"], wait=0)["changes"] == []


def test_statements_carry_the_position_back(api: CatalogServiceClient) -> None:
    switched = api.statement("SWITCH hive")
    assert (switched["catalog"], switched["database"], switched["columns"], switched["rows"]) == ("hive", None, [], [])
    assert switched["message"] == "switched to catalog 'hive'" and switched["statement"] == "SWITCH hive"
    used = api.statement(f"USE {DB}", catalog="hive")
    assert (used["catalog"], used["database"]) == ("hive", DB)
    described = api.statement("DESCRIBE sales", catalog="hive", database=DB)
    assert described["columns"] == ["Field", "Type", "Nullable", "PartitionKey", "Comment"]
    assert [row[:2] for row in described["rows"]] == [
        ["id", "bigint"], ["amount", "decimal(10,2)"], ["tags", "map<string,int>"], ["dt", "string"]]
    assert (described["catalog"], described["database"]) == ("hive", DB)  # the position given is the one answered
    several = api.statement(f"SWITCH hive; USE {DB}; SHOW TABLES LIKE 'oth%'")
    assert several["rows"] == [["other"]] and (several["catalog"], several["database"]) == ("hive", DB)
    assert several["statement"] == "SHOW TABLES LIKE 'oth%'"  # the answer is the last statement's


def test_ddl_statements_answer_with_a_message(api: CatalogServiceClient, metastore_uri: str, unique_name: str) -> None:
    created = api.statement(f"CREATE CATALOG {unique_name} COMMENT 'by sql' "
                            f"PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}')")
    assert created["message"] == f"catalog '{unique_name}' created" and created["rows"] == []
    assert api.catalog(unique_name)["comment"] == "by sql"  # one store behind statements and REST
    altered = api.statement(f"ALTER CATALOG {unique_name} SET PROPERTIES ('hive.metastore.client.pool.size'='3')")
    assert altered["message"] == f"catalog '{unique_name}' altered (version 2)"
    assert api.catalog(unique_name)["properties"]["hive.metastore.client.pool.size"] == "3"
    listed = [row[:5] for row in api.statement("SHOW CATALOGS")["rows"] if row[0] == unique_name]
    assert listed == [[unique_name, "hms", "by sql", api.catalog(unique_name)["id"], 2]]
    dropped = api.statement(f"DROP CATALOG {unique_name}")
    assert unique_name in dropped["message"] and unique_name not in {c["name"] for c in api.catalogs()}


def test_metrics_count_requests_metastore_calls_and_cache_use(service: Server, api: CatalogServiceClient,
                                                              metastore_uri: str, unique_name: str) -> None:
    api.create_catalog(unique_name, hms_properties(metastore_uri))
    try:
        before = service.metrics()
        databases = f"/v1/catalogs/{unique_name}/databases"
        assert [service.request("GET", databases).status for _ in range(2)] == [200, 200]
        assert service.request("GET", "/v1/catalogs/nope/databases").status == 404
        assert service.request("GET", f"/v1/catalogs/{unique_name}/databases/{DB}/tables/sales").status == 200
        after = service.metrics()

        def grew(name: str, **labels: str) -> float:
            return metric(after, name, **labels) - metric(before, name, **labels)

        route = "/v1/catalogs/{catalog}/databases"
        assert grew("hms_catalog_requests_total", method="GET", route=route, status="200") == 2
        assert grew("hms_catalog_requests_total", method="GET", route=route, status="404") == 1
        assert grew("hms_catalog_request_seconds_count", method="GET", route=route) == 3
        assert grew("hms_catalog_request_seconds_bucket", method="GET", route=route, le="+Inf") == 3
        assert grew("hms_catalog_request_seconds_sum", method="GET", route=route) > 0
        assert grew("hms_catalog_requests_total", method="GET", route=TABLE_ROUTE, status="200") == 1
        assert "# TYPE hms_catalog_request_seconds histogram" in after

        # The new catalog's figures: one call of each kind, then answers from its caches.
        calls = {"catalog": unique_name}
        assert metric(after, "hms_catalog_metastore_calls_total", **calls, method="get_all_databases") == 1
        assert metric(after, "hms_catalog_metastore_calls_total", **calls, method="get_table_req") == 1
        assert metric(after, "hms_catalog_cache_misses_total", **calls, cache="names") == 1
        assert metric(after, "hms_catalog_cache_loads_total", **calls, cache="names") == 1
        assert metric(after, "hms_catalog_cache_hits_total", **calls, cache="names") == 1
        assert metric(after, "hms_catalog_cache_loads_total", **calls, cache="schema") == 1
        assert metric(after, "hms_catalog_cache_entries", **calls, cache="schema") == 1
        for name in ("hits", "misses", "loads"):
            assert f'hms_catalog_cache_{name}_total{{catalog="{unique_name}",cache="files"}} 0' in after
    finally:
        api.drop_catalog(unique_name)
