"""The protocol's answers on the wire: config, namespaces, paging, errors, auth, ETags, staged creates and
transactions, each answer checked against the Iceberg REST OpenAPI document's schemas."""

from __future__ import annotations

import base64
import time
import urllib.parse
from typing import Any

import pyarrow as pa
import pytest

from tests.service.iceberg_rest.conftest import (
    CATALOG,
    OTHER_TOKEN,
    READ_TOKEN,
    WRITE_TOKEN,
    audit_lines,
    checked,
    rest_catalog,
)
from tests.support.service import Server

V1 = f"/iceberg/v1/{CATALOG}"


def test_config_names_the_catalog_as_prefix(iceberg_service: Server) -> None:
    config = checked(iceberg_service.request("GET", f"/iceberg/v1/config?warehouse={CATALOG}"), 200, "CatalogConfig")
    assert config["overrides"] == {"prefix": CATALOG}
    assert "POST /v1/{prefix}/transactions/commit" in config["endpoints"]
    error = checked(iceberg_service.request("GET", "/iceberg/v1/config?warehouse=nowhere"), 404, "IcebergErrorResponse")
    assert error["error"]["code"] == 404 and "nowhere" in error["error"]["message"]


def test_errors_of_the_gate_and_of_access_are_the_spec_error_model(iceberg_service: Server, namespace: str) -> None:
    error = checked(iceberg_service.request("GET", f"{V1}/namespaces", token=None), 401, "IcebergErrorResponse")
    assert error["error"]["type"] == "NotAuthorizedException"
    assert iceberg_service.request("HEAD", f"{V1}/namespaces/{namespace}", token="wrong-token-of-16-chars").status == 401
    # a read token reads, but changes nothing; a write token for another catalog neither
    assert checked(iceberg_service.request("GET", f"{V1}/namespaces/{namespace}", token=READ_TOKEN), 200, "GetNamespaceResponse")
    for token in (READ_TOKEN, OTHER_TOKEN):
        refused = checked(iceberg_service.request("POST", f"{V1}/namespaces", {"namespace": [namespace + "x"]}, token=token),
                          403, "IcebergErrorResponse")
        assert refused["error"]["type"] == "ForbiddenException" and "may" in refused["error"]["message"]
    assert [line["outcome"] for line in audit_lines(iceberg_service) if namespace + "x" in line["statement"]] == ["refused"] * 2
    bad = checked(iceberg_service.request("POST", f"{V1}/namespaces/{namespace}/tables", {"name": "t"}), 400, "IcebergErrorResponse")
    assert bad["error"]["type"] == "BadRequestException"


def test_namespaces(iceberg_service: Server, unique_name: str) -> None:
    created = checked(iceberg_service.request("POST", f"{V1}/namespaces", {"namespace": [unique_name], "properties": {"a": "1"}},
                                              token=WRITE_TOKEN), 200, "CreateNamespaceResponse")
    assert created["namespace"] == [unique_name] and created["properties"]["a"] == "1"
    again = checked(iceberg_service.request("POST", f"{V1}/namespaces", {"namespace": [unique_name]}), 409, "IcebergErrorResponse")
    assert again["error"]["type"] == "AlreadyExistsException"
    listed = checked(iceberg_service.request("GET", f"{V1}/namespaces"), 200, "ListNamespacesResponse")
    assert [unique_name] in listed["namespaces"]
    assert checked(iceberg_service.request("GET", f"{V1}/namespaces?parent={unique_name}"), 200,
                   "ListNamespacesResponse")["namespaces"] == []
    assert iceberg_service.request("HEAD", f"{V1}/namespaces/{unique_name}").status == 204
    assert iceberg_service.request("HEAD", f"{V1}/namespaces/{unique_name}_no").status == 404
    missing = checked(iceberg_service.request("GET", f"{V1}/namespaces/{unique_name}_no"), 404, "IcebergErrorResponse")
    assert missing["error"]["type"] == "NoSuchNamespaceException"
    updated = checked(iceberg_service.request("POST", f"{V1}/namespaces/{unique_name}/properties",
                                              {"updates": {"b": "2"}, "removals": ["a", "nope"]}), 200,
                      "UpdateNamespacePropertiesResponse")
    assert updated == {"updated": ["b"], "removed": ["a"], "missing": ["nope"]}
    properties = checked(iceberg_service.request("GET", f"{V1}/namespaces/{unique_name}"), 200, "GetNamespaceResponse")["properties"]
    assert properties["b"] == "2" and "a" not in properties and properties["location"].endswith(f"{unique_name}.db")
    # Hive 2.3's alter_database keeps a database's comment: refused as such, with nothing of the request made.
    comment = checked(iceberg_service.request("POST", f"{V1}/namespaces/{unique_name}/properties",
                                              {"updates": {"comment": "sales", "c": "3"}}), 400, "IcebergErrorResponse")
    assert comment["error"]["type"] == "BadRequestException", comment
    assert "does not support altering a database's comment" in comment["error"]["message"], comment
    kept = checked(iceberg_service.request("GET", f"{V1}/namespaces/{unique_name}"), 200, "GetNamespaceResponse")["properties"]
    assert kept == properties
    # ... while removing the comment it has not got changes nothing of it, and is no refusal.
    removed = checked(iceberg_service.request("POST", f"{V1}/namespaces/{unique_name}/properties",
                                              {"removals": ["comment", "b"]}), 200, "UpdateNamespacePropertiesResponse")
    assert removed["removed"] == ["comment", "b"]
    left = checked(iceberg_service.request("GET", f"{V1}/namespaces/{unique_name}"), 200, "GetNamespaceResponse")["properties"]
    assert "b" not in left and "comment" not in left
    rest = rest_catalog(iceberg_service)
    rest.create_table((unique_name, "t"), schema=pa.schema([("id", pa.int64())]))
    full = checked(iceberg_service.request("DELETE", f"{V1}/namespaces/{unique_name}"), 409, "IcebergErrorResponse")
    assert full["error"]["type"] == "NamespaceNotEmptyException"
    rest.drop_table((unique_name, "t"), purge_requested=True)
    assert iceberg_service.request("DELETE", f"{V1}/namespaces/{unique_name}").status == 204
    assert not rest.namespace_exists(unique_name)
    lines = [line for line in audit_lines(iceberg_service) if unique_name in line["statement"]]
    assert lines[0]["token"] == "etl" and lines[0]["via"] == "iceberg-rest" and lines[0]["outcome"] == "ok"
    assert lines[0]["version_after"] > lines[0]["version_before"]


def test_paging(iceberg_service: Server, namespace: str) -> None:
    rest = rest_catalog(iceberg_service)
    for name in ("a", "b", "c"):
        rest.create_table((namespace, name), schema=pa.schema([("id", pa.int64())]))
    seen: list[str] = []
    token = None
    while True:
        query = "pageSize=2" + (f"&pageToken={urllib.parse.quote(token)}" if token else "")
        page = checked(iceberg_service.request("GET", f"{V1}/namespaces/{namespace}/tables?{query}"), 200, "ListTablesResponse")
        assert len(page["identifiers"]) <= 2
        seen += [entry["name"] for entry in page["identifiers"]]
        token = page.get("next-page-token")
        if not token:
            break
    assert seen == ["a", "b", "c"]
    assert sorted(t for _, t in rest_catalog(iceberg_service, **{"rest-page-size": "1"}).list_tables(namespace)) == ["a", "b", "c"]


def test_load_etag_and_if_none_match(iceberg_service: Server, namespace: str) -> None:
    table = rest_catalog(iceberg_service).create_table((namespace, "t"), schema=pa.schema([("id", pa.int64())]))
    path = f"{V1}/namespaces/{namespace}/tables/t"
    loaded = iceberg_service.request("GET", path)
    body = checked(loaded, 200, "LoadTableResult")
    assert body["metadata-location"] == table.metadata_location and body["config"] == {}
    etag = loaded.headers["etag"]
    assert iceberg_service.request("GET", path, headers={"If-None-Match": etag}).status == 304
    table.append(pa.table({"id": [1]}))
    changed = iceberg_service.request("GET", path, headers={"If-None-Match": etag})
    assert changed.status == 200 and changed.headers["etag"] != etag
    assert iceberg_service.request("HEAD", path).status == 204
    assert iceberg_service.request("POST", f"{path}/metrics", {"report-type": "scan-report"}).status == 204


def test_a_hive_table_is_not_an_iceberg_table(iceberg_service: Server, namespace: str) -> None:
    client = iceberg_service.client()
    try:
        client.statement(f"CREATE TABLE {CATALOG}.{namespace}.hive_one (id INT) STORED AS PARQUET")
    finally:
        client.close()
    missing = checked(iceberg_service.request("GET", f"{V1}/namespaces/{namespace}/tables/hive_one"), 404, "IcebergErrorResponse")
    assert missing["error"]["type"] == "NoSuchTableException" and "not an Iceberg table" in missing["error"]["message"]
    listed = checked(iceberg_service.request("GET", f"{V1}/namespaces/{namespace}/tables"), 200, "ListTablesResponse")
    assert listed["identifiers"] == []
    client = iceberg_service.client()
    try:
        client.statement(f"DROP TABLE {CATALOG}.{namespace}.hive_one")
    finally:
        client.close()


@pytest.mark.parametrize("how", ["form", "basic"])
def test_client_credentials_exchange(iceberg_service: Server, namespace: str, how: str) -> None:
    form: dict[str, str] = {"grant_type": "client_credentials", "scope": "catalog"}
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if how == "form":
        form.update(client_id="ro", client_secret=READ_TOKEN)
    else:
        headers["Authorization"] = "Basic " + base64.b64encode(f"ro:{READ_TOKEN}".encode()).decode()
    answer = iceberg_service.request("POST", "/iceberg/v1/oauth/tokens", urllib.parse.urlencode(form).encode(),
                                     headers=headers, token=None)
    issued = checked(answer, 200, "OAuthTokenResponse")
    assert issued["token_type"] == "bearer" and issued["access_token"] != READ_TOKEN
    token = issued["access_token"]
    assert checked(iceberg_service.request("GET", f"{V1}/namespaces/{namespace}", token=token), 200, "GetNamespaceResponse")
    assert iceberg_service.request("POST", f"{V1}/namespaces", {"namespace": ["x"]}, token=token).status == 403  # read access
    assert iceberg_service.request("GET", "/v1/catalogs", token=token).status == 401  # an Iceberg token only
    wrong = {"grant_type": "client_credentials", "client_id": "etl", "client_secret": READ_TOKEN}
    refused = iceberg_service.request("POST", "/iceberg/v1/oauth/tokens", urllib.parse.urlencode(wrong).encode(),
                                      headers=headers, token=None)
    assert checked(refused, 401, "OAuthError")["error"] == "invalid_client"


def test_pyiceberg_with_credential(iceberg_service: Server, namespace: str) -> None:
    rest = rest_catalog(iceberg_service, credential=f"etl:{WRITE_TOKEN}")
    table = rest.create_table((namespace, "by_credential"), schema=pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": [1, 2]}))
    assert rest.load_table((namespace, "by_credential")).scan().to_arrow().num_rows == 2
    assert [line["token"] for line in audit_lines(iceberg_service) if f"{namespace}.by_credential" in line["statement"]][0] == "etl"


def test_staged_create_registers_nothing_until_its_commit(iceberg_service: Server, namespace: str) -> None:
    rest = rest_catalog(iceberg_service)
    transaction = rest.create_table_transaction((namespace, "staged"), schema=pa.schema([("id", pa.int64())]))
    assert not rest.table_exists((namespace, "staged"))
    transaction.append(pa.table({"id": [7]}))
    transaction.commit_transaction()
    assert rest.load_table((namespace, "staged")).scan().to_arrow().column("id").to_pylist() == [7]


def _commit_body(table: Any, namespace: str, name: str, key: str, value: str) -> dict[str, Any]:
    return {"identifier": {"namespace": [namespace], "name": name},
            "requirements": [{"type": "assert-table-uuid", "uuid": str(table.metadata.table_uuid)}],
            "updates": [{"action": "set-properties", "updates": {key: value}}]}


def test_transactions_commit_all_or_nothing(iceberg_service: Server, namespace: str) -> None:
    rest = rest_catalog(iceberg_service)
    one = rest.create_table((namespace, "one"), schema=pa.schema([("id", pa.int64())]))
    two = rest.create_table((namespace, "two"), schema=pa.schema([("id", pa.int64())]))
    both = {"table-changes": [_commit_body(one, namespace, "one", "k", "1"), _commit_body(two, namespace, "two", "k", "2")]}
    assert iceberg_service.request("POST", f"{V1}/transactions/commit", both).status == 204
    assert rest.load_table((namespace, "one")).properties["k"] == "1"
    assert rest.load_table((namespace, "two")).properties["k"] == "2"
    stale = _commit_body(two, namespace, "two", "k", "3")
    stale["requirements"] = [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 12345}]
    failed = {"table-changes": [_commit_body(one, namespace, "one", "k", "3"), stale]}
    error = checked(iceberg_service.request("POST", f"{V1}/transactions/commit", failed), 409, "IcebergErrorResponse")
    assert error["error"]["type"] == "CommitFailedException"
    assert rest.load_table((namespace, "one")).properties["k"] == "1"  # nothing committed: checked before any commit


def test_unknown_routes_unreachable_metastores_and_folder_catalogs(iceberg_service: Server, refused_uri: str,
                                                                   tmp_path: Any, unique_name: str) -> None:
    unknown = checked(iceberg_service.request("GET", f"{V1}/namespaces/x/functions"), 404, "IcebergErrorResponse")
    assert unknown["error"]["type"] == "NotFoundException"
    client = iceberg_service.client()
    try:
        client.create_catalog(f"{unique_name}_down", {"type": "hms", "hive.metastore.uris": refused_uri,
                                                      "hive.metastore.failure.retries": "0",
                                                      "hive.metastore.client.connect.timeout": "1"})
        client.create_catalog(f"{unique_name}_lake", {"type": "filesystem", "root": tmp_path.as_uri()})
    finally:
        client.close()
    away = checked(iceberg_service.request("GET", f"/iceberg/v1/{unique_name}_down/namespaces"), 503, "IcebergErrorResponse")
    assert away["error"]["type"] == "ServiceUnavailableException"
    folders = checked(iceberg_service.request("GET", f"/iceberg/v1/config?warehouse={unique_name}_lake"), 400,
                      "IcebergErrorResponse")
    assert "serves folders" in folders["error"]["message"]


SCHEMA_JSON = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}]}


def test_raw_create_stage_commit_and_register_answers(iceberg_service: Server, namespace: str) -> None:
    tables = f"{V1}/namespaces/{namespace}/tables"
    created = checked(iceberg_service.request("POST", tables, {"name": "raw", "schema": SCHEMA_JSON}), 200, "LoadTableResult")
    assert created["metadata"]["format-version"] == 2 and created["metadata-location"].endswith(".metadata.json")
    uuid = created["metadata"]["table-uuid"]
    commit = {"requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
              "updates": [{"action": "set-properties", "updates": {"owner": "raw"}}]}
    committed = checked(iceberg_service.request("POST", f"{tables}/raw", commit, token=WRITE_TOKEN), 200, "CommitTableResponse")
    assert committed["metadata"]["properties"]["owner"] == "raw"
    assert committed["metadata-location"] != created["metadata-location"]
    refused = checked(iceberg_service.request("POST", f"{tables}/raw", commit, token=READ_TOKEN), 403, "IcebergErrorResponse")
    assert refused["error"]["type"] == "ForbiddenException"
    staged = checked(iceberg_service.request("POST", tables, {"name": "later", "schema": SCHEMA_JSON, "stage-create": True}),
                     200, "LoadTableResult")
    assert "metadata-location" not in staged
    assert iceberg_service.request("HEAD", f"{tables}/later").status == 404
    exists = checked(iceberg_service.request("POST", tables, {"name": "raw", "schema": SCHEMA_JSON}), 409, "IcebergErrorResponse")
    assert exists["error"]["type"] == "AlreadyExistsException"
    registered = checked(iceberg_service.request("POST", f"{V1}/namespaces/{namespace}/register",
                                                 {"name": "again", "metadata-location": committed["metadata-location"]}),
                         200, "LoadTableResult")
    assert registered["metadata"]["properties"]["owner"] == "raw"
    renamed = iceberg_service.request("POST", f"{V1}/tables/rename", {"source": {"namespace": [namespace], "name": "again"},
                                                                      "destination": {"namespace": [namespace], "name": "raw"}})
    assert checked(renamed, 409, "IcebergErrorResponse")["error"]["type"] == "AlreadyExistsException"
    assert iceberg_service.request("DELETE", f"{tables}/again").status == 204
    gone = checked(iceberg_service.request("DELETE", f"{tables}/again"), 404, "IcebergErrorResponse")
    assert gone["error"]["type"] == "NoSuchTableException"


def test_removing_a_comment_a_namespace_never_had_is_no_refusal(iceberg_service: Server, iceberg_catalog: Any,
                                                                 unique_name: str) -> None:
    """pyiceberg's HiveCatalog makes a database with no description at all: none is not a comment kept."""
    iceberg_catalog.create_namespace(unique_name, {"a": "1"})
    try:
        deadline = time.monotonic() + 20  # made behind the service: seen once its event follower reads the create
        while iceberg_service.request("HEAD", f"{V1}/namespaces/{unique_name}").status != 204:
            assert time.monotonic() < deadline, "the service did not see the namespace made behind it"
            time.sleep(0.2)
        removed = checked(iceberg_service.request("POST", f"{V1}/namespaces/{unique_name}/properties",
                                                  {"removals": ["comment", "a"]}), 200, "UpdateNamespacePropertiesResponse")
        assert removed["removed"] == ["comment", "a"]
        assert "a" not in iceberg_catalog.load_namespace_properties(unique_name)
    finally:
        iceberg_catalog.drop_namespace(unique_name)
