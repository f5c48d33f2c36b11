"""Iceberg views through the REST catalog: pyiceberg's RestCatalog (create, list, load, exists, drop) and raw
requests (replace, rename, errors), every answer checked against the OpenAPI document's schemas; the view is
a metastore table as Iceberg's HiveViewOperations writes it, seen by a second service on the same metastore."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.service.iceberg_rest.conftest import CATALOG, EVENTS, READ_TOKEN, audit_lines, checked, rest_catalog
from tests.support.service import Server, served

V1 = f"/iceberg/v1/{CATALOG}"


def _version(sql: str, schema_id: int = 0, namespace: str = "default") -> Any:
    from pyiceberg.view.metadata import SQLViewRepresentation, ViewRepresentation, ViewVersion

    representation = ViewRepresentation(SQLViewRepresentation(type="sql", sql=sql, dialect="spark"))
    return ViewVersion.model_validate({"version-id": 1, "schema-id": schema_id, "default-namespace": [namespace],
                                       "representations": [representation]})


@pytest.fixture
def views_namespace(iceberg_service: Server, unique_name: str) -> Iterator[str]:
    """A namespace of its own, dropped after with whatever views and tables remain."""
    rest = rest_catalog(iceberg_service)
    rest.create_namespace(unique_name)
    yield unique_name
    rest = rest_catalog(iceberg_service)
    for identifier in rest.list_views(unique_name):
        rest.drop_view(identifier)
    for identifier in rest.list_tables(unique_name):
        rest.drop_table(identifier, purge_requested=True)
    rest.drop_namespace(unique_name)


def _metastore_table(metastore_uri: str, database: str, name: str) -> Any:
    from pyiceberg.catalog.hive import HiveCatalog

    hive = HiveCatalog("check", uri=metastore_uri)
    with hive._client as client:
        return client.get_table(database, name)


@pytest.mark.slow
def test_views_through_pyiceberg_and_the_wire(iceberg_service: Server, views_namespace: str, metastore_uri: str) -> None:
    ns = views_namespace
    rest = rest_catalog(iceberg_service)
    config = checked(iceberg_service.request("GET", f"/iceberg/v1/config?warehouse={CATALOG}"), 200, "CatalogConfig")
    assert "POST /v1/{prefix}/namespaces/{namespace}/views/{view}" in config["endpoints"]
    rest.create_table((ns, "t"), schema=pa.schema([("id", pa.int64())]))
    view = rest.create_view((ns, "v"), schema=pa.schema([("id", pa.int64())]), view_version=_version(f"SELECT id FROM {ns}.t"))
    assert view.current_version().representations[0].root.sql == f"SELECT id FROM {ns}.t"
    assert rest.list_views(ns) == [(ns, "v")] and rest.list_tables(ns) == [(ns, "t")]
    assert rest.view_exists((ns, "v")) and not rest.view_exists((ns, "t"))
    # the metastore holds it as Iceberg's HiveViewOperations writes it
    stored = _metastore_table(metastore_uri, ns, "v")
    assert stored.tableType == "VIRTUAL_VIEW" and stored.parameters["table_type"] == "ICEBERG-VIEW"
    assert stored.viewOriginalText == f"SELECT id FROM {ns}.t"
    path = f"{V1}/namespaces/{ns}/views/v"
    loaded = checked(iceberg_service.request("GET", path, token=READ_TOKEN), 200, "LoadViewResult")
    assert loaded["metadata-location"] == stored.parameters["metadata_location"] and loaded["config"] == {}
    assert "/metadata/00000-" in loaded["metadata-location"]
    # a view is no table, a table no view: the spec's 404s
    assert checked(iceberg_service.request("GET", f"{V1}/namespaces/{ns}/tables/v"), 404,
                   "IcebergErrorResponse")["error"]["type"] == "NoSuchTableException"
    assert checked(iceberg_service.request("GET", f"{V1}/namespaces/{ns}/views/t"), 404,
                   "IcebergErrorResponse")["error"]["type"] == "NoSuchViewException"
    assert iceberg_service.request("HEAD", f"{V1}/namespaces/{ns}/tables/v").status == 404
    assert [e["name"] for e in checked(iceberg_service.request("GET", f"{V1}/namespaces/{ns}/tables"), 200,
                                       "ListTablesResponse")["identifiers"]] == ["t"]
    again = iceberg_service.request("POST", f"{V1}/namespaces/{ns}/views", json.loads(
        checked_create_body(ns, "v")))
    assert checked(again, 409, "IcebergErrorResponse")["error"]["type"] == "AlreadyExistsException"
    refused = iceberg_service.request("DELETE", path, token=READ_TOKEN)
    assert checked(refused, 403, "IcebergErrorResponse")["error"]["type"] == "ForbiddenException"

    # replace: a new schema and version made current, a property set
    uuid = loaded["metadata"]["view-uuid"]
    new_version = json.loads(_version(f"SELECT id, id * 2 AS twice FROM {ns}.t", schema_id=-1).model_dump_json())
    replace = {"requirements": [{"type": "assert-view-uuid", "uuid": uuid}], "updates": [
        {"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "type": "long", "required": False},
            {"id": 2, "name": "twice", "type": "long", "required": False}]}},
        {"action": "add-view-version", "view-version": new_version},
        {"action": "set-current-view-version", "view-version-id": -1},
        {"action": "set-properties", "updates": {"owner": "etl"}}]}
    replaced = checked(iceberg_service.request("POST", path, replace), 200, "LoadViewResult")
    metadata = replaced["metadata"]
    assert metadata["current-version-id"] == 2 and [s["schema-id"] for s in metadata["schemas"]] == [0, 1]
    assert metadata["versions"][-1]["schema-id"] == 1 and [e["version-id"] for e in metadata["version-log"]] == [1, 2]
    assert metadata["properties"]["owner"] == "etl" and "/metadata/00001-" in replaced["metadata-location"]
    assert rest.load_view((ns, "v")).schema().find_field("twice")
    stored = _metastore_table(metastore_uri, ns, "v")
    assert stored.parameters["metadata_location"] == replaced["metadata-location"]
    assert stored.parameters["previous_metadata_location"] == loaded["metadata-location"]
    assert stored.parameters["owner"] == "etl" and "twice" in stored.viewOriginalText
    stale = {**replace, "requirements": [{"type": "assert-view-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}]}
    assert checked(iceberg_service.request("POST", path, stale), 409,
                   "IcebergErrorResponse")["error"]["type"] == "CommitFailedException"
    removed = checked(iceberg_service.request("POST", path, {"updates": [{"action": "remove-properties", "removals": ["owner"]}]}),
                      200, "LoadViewResult")
    assert "owner" not in removed["metadata"]["properties"]
    assert "owner" not in _metastore_table(metastore_uri, ns, "v").parameters

    # rename, then drop
    rename = {"source": {"namespace": [ns], "name": "v"}, "destination": {"namespace": [ns], "name": "w"}}
    assert checked(iceberg_service.request("POST", f"{V1}/views/rename", rename), 204, None) is None
    assert rest.list_views(ns) == [(ns, "w")] and not rest.view_exists((ns, "v"))
    assert rest.load_view((ns, "w")).metadata.view_uuid == uuid
    assert checked(iceberg_service.request("POST", f"{V1}/views/rename", rename), 404,
                   "IcebergErrorResponse")["error"]["type"] == "NoSuchViewException"
    rest.drop_view((ns, "w"))
    assert rest.list_views(ns) == [] and rest.list_tables(ns) == [(ns, "t")]
    assert checked(iceberg_service.request("DELETE", f"{V1}/namespaces/{ns}/views/w"), 404,
                   "IcebergErrorResponse")["error"]["type"] == "NoSuchViewException"
    statements = [line["statement"] for line in audit_lines(iceberg_service) if f"{ns}.v" in line["statement"]
                  or f"{ns}.w" in line["statement"]]
    assert any("create Iceberg view" in s for s in statements) and any("drop Iceberg view" in s for s in statements)


def checked_create_body(namespace: str, name: str) -> str:
    """A CreateViewRequest as pyiceberg sends it."""
    from pyiceberg.catalog.rest import CreateViewRequest
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    schema = Schema(NestedField(1, "id", LongType(), required=False))
    return CreateViewRequest.model_validate({"name": name, "location": None, "schema": schema,
                                             "view-version": _version("SELECT 1"), "properties": {}}).model_dump_json()


def test_list_views_pages(iceberg_service: Server, views_namespace: str) -> None:
    rest = rest_catalog(iceberg_service)
    for name in ("a", "b", "c"):
        rest.create_view((views_namespace, name), schema=pa.schema([("id", pa.int64())]), view_version=_version("SELECT 1"))
    first = checked(iceberg_service.request("GET", f"{V1}/namespaces/{views_namespace}/views?pageSize=2"), 200,
                    "ListTablesResponse")
    assert [e["name"] for e in first["identifiers"]] == ["a", "b"]
    rest_page = checked(iceberg_service.request("GET", f"{V1}/namespaces/{views_namespace}/views?pageSize=2&pageToken="
                                                       f"{first['next-page-token']}"), 200, "ListTablesResponse")
    assert [e["name"] for e in rest_page["identifiers"]] == ["c"] and rest_page.get("next-page-token") is None


@pytest.mark.slow
def test_a_second_service_on_the_same_metastore_sees_the_view(iceberg_service: Server, views_namespace: str,
                                                              metastore_uri: str, tmp_path: Path) -> None:
    rest = rest_catalog(iceberg_service)
    rest.create_view((views_namespace, "shared"), schema=pa.schema([("id", pa.int64())]), view_version=_version("SELECT 7"))
    with served(tmp_path / "home") as second:
        client = second.client()
        try:
            client.create_catalog(CATALOG, {"type": "hms", "hive.metastore.uris": metastore_uri, **EVENTS})
        finally:
            client.close()
        other = rest_catalog(second)
        assert other.list_views(views_namespace) == [(views_namespace, "shared")]
        loaded = checked(second.request("GET", f"{V1}/namespaces/{views_namespace}/views/shared"), 200, "LoadViewResult")
        assert loaded["metadata"]["versions"][0]["representations"][0]["sql"] == "SELECT 7"
        other.drop_view((views_namespace, "shared"))
    deadline = time.monotonic() + 10  # the first service sees the other's drop within its event polling
    while rest.view_exists((views_namespace, "shared")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not rest.view_exists((views_namespace, "shared"))


def test_register_view_and_expired_versions(iceberg_service: Server, views_namespace: str) -> None:
    """A dropped view's metadata file registered again under another name (register-view); a view keeps the
    newest ``version.history.num-entries`` versions, the current one always."""
    ns = views_namespace
    rest = rest_catalog(iceberg_service)
    rest.create_view((ns, "v"), schema=pa.schema([("id", pa.int64())]), view_version=_version("SELECT 1 AS id"),
                     properties={"version.history.num-entries": "2"})
    path = f"{V1}/namespaces/{ns}/views/v"
    for n in range(2, 5):
        version = json.loads(_version(f"SELECT {n} AS id").model_dump_json())
        replaced = checked(iceberg_service.request("POST", path, {"updates": [
            {"action": "add-view-version", "view-version": version},
            {"action": "set-current-view-version", "view-version-id": -1}]}), 200, "LoadViewResult")
    metadata = replaced["metadata"]
    assert metadata["current-version-id"] == 4 and [v["version-id"] for v in metadata["versions"]] == [3, 4]
    assert [e["version-id"] for e in metadata["version-log"]] == [3, 4]
    back = checked(iceberg_service.request("POST", path, {"updates": [{"action": "set-current-view-version", "view-version-id": 3}]}),
                   200, "LoadViewResult")["metadata"]
    assert [v["version-id"] for v in back["versions"]] == [3, 4] and back["current-version-id"] == 3
    location = replaced["metadata-location"]
    rest.drop_view((ns, "v"))

    register = f"{V1}/namespaces/{ns}/register-view"
    refused = iceberg_service.request("POST", register, {"name": "r", "metadata-location": location}, token=READ_TOKEN)
    assert checked(refused, 403, "IcebergErrorResponse")["error"]["type"] == "ForbiddenException"
    registered = checked(iceberg_service.request("POST", register, {"name": "r", "metadata-location": location}), 200,
                         "LoadViewResult")
    assert registered["metadata-location"] == location and registered["metadata"]["view-uuid"] == metadata["view-uuid"]
    assert rest.list_views(ns) == [(ns, "r")]
    assert rest.load_view((ns, "r")).current_version().representations[0].root.sql == "SELECT 4 AS id"
    again = iceberg_service.request("POST", register, {"name": "r", "metadata-location": location})
    assert checked(again, 409, "IcebergErrorResponse")["error"]["type"] == "AlreadyExistsException"
    missing = iceberg_service.request("POST", register, {"name": "m", "metadata-location": location + ".gone"})
    assert checked(missing, 400, "IcebergErrorResponse")["error"]["type"] == "BadRequestException"
    secret = Path(location.removeprefix("file:")).parent / "not-metadata.json"
    secret.write_text('{"a-secret-the-service-can-read": "s3cr3t-value-0001"}')
    leaked = iceberg_service.request("POST", register, {"name": "m", "metadata-location": secret.as_uri()})
    message = checked(leaked, 400, "IcebergErrorResponse")["error"]["message"]
    assert "s3cr3t" not in message and "a-secret" not in message
    assert message == checked(missing, 400, "IcebergErrorResponse")["error"]["message"].replace(location + ".gone", secret.as_uri())
    assert checked(iceberg_service.request("POST", register, {"name": "m"}), 400, "IcebergErrorResponse")
    assert rest.list_views(ns) == [(ns, "r")]
    assert any(f"register Iceberg view {ns}.r" in line["statement"] for line in audit_lines(iceberg_service))
