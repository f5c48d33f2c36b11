"""Every error the service answers, in its one shape ``{"error": {"type", "message"}}`` and with its status, and
secrets that never leave it unmasked."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from hms_catalog.errors import MetastoreUnavailableError
from hms_catalog.remote import CatalogServiceClient
from tests.service.conftest import DB, SECRET, closed_port, hms_properties, metric
from tests.support.service import Server, send

pytestmark = pytest.mark.metastore

LIMIT = 1024 * 1024


def _catalog_names(api: CatalogServiceClient) -> set[str]:
    return {entry["name"] for entry in api.catalogs()}


@pytest.mark.parametrize("path", ["/v1/catalogs", "/v1/catalogs/hive", "/metrics", "/openapi.json", "/v2/unknown"])
def test_requests_without_the_token_are_401(service: Server, api: CatalogServiceClient, path: str) -> None:
    for headers, token in (({}, None), ({}, "wrong-token-of-a-decent-length"),
                           ({"Authorization": f"Basic {service.token}"}, None), ({"Authorization": "Bearer"}, None)):
        answer = service.request("GET", path, headers=headers, token=token)
        assert answer.status == 401, (path, headers, token)
        assert answer.error()["type"] == "Unauthorized" and answer.headers["www-authenticate"] == "Bearer"
        assert service.token.encode() not in answer.body
    assert service.request("GET", "/v1/health", token="wrong-token-of-a-decent-length").status == 200


def test_a_refused_request_changes_nothing(service: Server, api: CatalogServiceClient, metastore_uri: str,
                                           unique_name: str) -> None:
    answer = service.request("POST", "/v1/catalogs", {"name": unique_name, "properties": hms_properties(metastore_uri)},
                             token=None)
    assert answer.status == 401 and unique_name not in _catalog_names(api)


def test_bad_requests_are_400(service: Server, api: CatalogServiceClient, metastore_uri: str, unique_name: str) -> None:
    def refused(method: str, path: str, body: bytes | dict[str, object] | None, error_type: str, *words: str,
                headers: dict[str, str] | None = None) -> None:
        answer = service.request(method, path, body, headers={"Content-Type": "application/json", **(headers or {})})
        assert answer.status == 400, (method, path, body, answer)
        error = answer.error()
        assert error["type"] == error_type and all(word in error["message"] for word in words), error

    catalogs = "/v1/catalogs"
    good = hms_properties(metastore_uri)
    refused("POST", catalogs, {"name": unique_name, "properties": {**good, "hive.metastore.client.pool.size": "zero"}},
            "ConfigurationError", "hive.metastore.client.pool.size", "zero")
    refused("POST", catalogs, {"name": unique_name, "properties": {"type": "hms"}}, "ConfigurationError", "hive.metastore.uris")
    refused("POST", catalogs, {"name": unique_name, "properties": {**good, "type": "jdbc"}}, "ConfigurationError", "type")
    refused("POST", catalogs, b'{"name": "x", "properties": {', "BadRequest", "not valid JSON")
    refused("POST", catalogs, b"", "BadRequest", "body")
    refused("POST", catalogs, {"name": unique_name, "properties": good, "owner": "me"}, "BadRequest", "owner")
    refused("POST", catalogs, {"name": unique_name}, "BadRequest", "properties", "required")
    refused("POST", catalogs, {"name": unique_name, "properties": ["type", "hms"]}, "BadRequest", "properties")
    assert unique_name not in _catalog_names(api)  # nothing stored by any of them

    before = api.catalog("hive")
    for value in ("yesterday", '"v3"', '"-1"'):
        refused("PATCH", "/v1/catalogs/hive", {"properties": {"a.b": "c"}}, "ConfigurationError", "If-Match", value,
                headers={"If-Match": value})
    refused("PATCH", "/v1/catalogs/hive", {}, "ConfigurationError", "'properties' and/or 'rename'")
    refused("PATCH", "/v1/catalogs/hive", {"properties": {"hive.metastore.uris": "nowhere"}}, "ConfigurationError",
            "hive.metastore.uris")
    refused("DELETE", "/v1/catalogs/hive", None, "ConfigurationError", "If-Match", headers={"If-Match": "latest"})
    assert api.catalog("hive") == before  # nor did any of these

    refused("POST", "/v1/statements", {"sql": "SHOW TABLES FROM"}, "SqlSyntaxError", "line 1:17", "SHOW TABLES FROM\n")
    refused("POST", "/v1/statements", {"sql": "SHOW CATALOGS", "extra": 1}, "BadRequest", "extra")
    refused("POST", "/v1/statements", {"sql": 42}, "BadRequest", "sql")
    refused("POST", f"/v1/catalogs/hive/databases/{DB}/tables/sales/plan", {"columns": ["id", "nope"]},
            "ConfigurationError", "no column", "nope")
    refused("POST", f"/v1/catalogs/hive/databases/{DB}/tables/sales/plan", {"where": "dt = = 1"}, "SqlSyntaxError", "line 1:")
    refused("POST", "/v1/catalogs/hive/refresh", {"table": "sales"}, "ConfigurationError", "needs its 'database'")
    for wait in ("61", "-1"):
        refused("GET", f"/v1/catalogs/hive/changes?since=0&wait={wait}", None, "ConfigurationError", "'wait' must be between 0 and 60")
    refused("GET", "/v1/catalogs/hive/changes?since=0&wait=soon", None, "BadRequest", "wait")


def test_unknown_objects_are_404_and_name_what_is_missing(service: Server, api: CatalogServiceClient) -> None:
    missing = [
        ("GET", "/v1/catalogs/nope", "catalog", "nope"),
        ("PATCH", "/v1/catalogs/nope", "catalog", "nope"),
        ("DELETE", "/v1/catalogs/nope", "catalog", "nope"),
        ("GET", "/v1/catalogs/nope/databases", "catalog", "nope"),
        ("GET", "/v1/catalogs/nope/changes", "catalog", "nope"),
        ("GET", "/v1/catalogs/nope/cache", "catalog", "nope"),
        ("POST", "/v1/catalogs/nope/refresh", "catalog", "nope"),
        ("GET", "/v1/catalogs/hive/databases/nope/tables", "database", "hive.nope"),
        ("GET", f"/v1/catalogs/hive/databases/{DB}/tables/nope", "table", f"hive.{DB}.nope"),
        ("POST", f"/v1/catalogs/hive/databases/{DB}/tables/nope/plan", "table", f"hive.{DB}.nope"),
    ]
    for method, path, kind, name in missing:
        body = {"properties": {"a.b": "c"}} if method == "PATCH" else {} if method == "POST" else None
        answer = service.request(method, path, body)
        assert answer.status == 404, (method, path, answer)
        error = answer.error()
        assert (error["type"], error["kind"], error["name"]) == ("NotFoundError", kind, name), error
        assert error["message"].startswith(f"{kind} '{name}' does not exist")
    unknown = service.request("GET", "/v1/nothing")
    assert unknown.status == 404 and unknown.error()["type"] == "NotFound"
    wrong_method = service.request("PUT", "/v1/catalogs", {})
    assert wrong_method.status == 405 and wrong_method.error()["type"] == "MethodNotAllowed"


def test_existing_names_are_409(service: Server, api: CatalogServiceClient, metastore_uri: str, unique_name: str) -> None:
    api.create_catalog(unique_name, hms_properties(metastore_uri))
    try:
        before = api.catalog(unique_name)
        again = service.request("POST", "/v1/catalogs", {"name": unique_name.upper(), "properties": hms_properties("thrift://x:1")})
        assert again.status == 409 and again.error() == {
            "type": "AlreadyExistsError", "message": f"catalog '{unique_name}' already exists", "kind": "catalog",
            "name": unique_name}
        sql = service.request("POST", "/v1/statements", {"sql": f"CREATE CATALOG {unique_name} PROPERTIES ('type'='hms', "
                                                                f"'hive.metastore.uris'='{metastore_uri}')"})
        assert sql.status == 409 and sql.error()["type"] == "AlreadyExistsError"
        # A rename onto a name in use is refused, and the properties asked for with it are not applied.
        onto = service.request("PATCH", f"/v1/catalogs/{unique_name}", {"properties": {"a.b": "c"}, "rename": "hive"},
                               headers={"If-Match": f'"{before["version"]}"'})
        assert onto.status == 409 and onto.error()["message"] == "catalog 'hive' already exists"
        assert api.catalog(unique_name) == before
        assert "a.b" not in api.catalog("hive")["properties"]
    finally:
        api.drop_catalog(unique_name)


def test_oversized_bodies_are_413_and_the_connection_goes_on(service: Server, api: CatalogServiceClient) -> None:
    before = service.metrics()
    big = json.dumps({"sql": "SHOW CATALOGS -- " + "x" * LIMIT}).encode()
    headers = {"Authorization": f"Bearer {service.token}", "Content-Type": "application/json"}
    connection = service.connection()
    try:
        declared = send(connection, "POST", "/v1/statements", big, headers)
        assert declared.status == 413 and declared.error() == {
            "type": "PayloadTooLarge", "message": f"the request body is over {LIMIT} bytes"}
        kept = connection.sock
        assert send(connection, "GET", "/v1/catalogs", None, headers).status == 200
        assert connection.sock is kept  # answered on the same connection

        def chunks() -> Iterator[bytes]:  # no Content-Length to go by: the server counts as it reads
            for start in range(0, len(big), 64 * 1024):
                yield big[start:start + 64 * 1024]

        connection.request("POST", "/v1/statements", body=chunks(), headers=headers, encode_chunked=True)
        response = connection.getresponse()
        streamed = response.status, json.loads(response.read())["error"]["type"]
        assert streamed == (413, "PayloadTooLarge")
        assert send(connection, "GET", "/v1/catalogs", None, headers).status == 200
    finally:
        connection.close()
    # Just under the limit is fine.
    fits = json.dumps({"sql": "SHOW CATALOGS -- " + "x" * (LIMIT - 100)}).encode()
    assert len(fits) <= LIMIT
    answer = service.request("POST", "/v1/statements", fits, headers={"Content-Type": "application/json"})
    assert answer.status == 200 and ["hive"] in [row[:1] for row in answer.json()["rows"]]
    after = service.metrics()
    counted = (metric(after, "hms_catalog_requests_total", method="POST", route="/v1/statements", status="413")
               - metric(before, "hms_catalog_requests_total", method="POST", route="/v1/statements", status="413"))
    assert counted == 2


def test_an_unreachable_metastore_is_503(service: Server, api: CatalogServiceClient, unique_name: str) -> None:
    port = closed_port()
    api.create_catalog(unique_name, hms_properties(f"thrift://127.0.0.1:{port}", **{
        "hive.metastore.failure.retries": "0", "hive.metastore.client.connect.timeout": "1s", "x.password": SECRET}))
    try:
        began = time.monotonic()
        for method, path, body in (("GET", f"/v1/catalogs/{unique_name}/databases", None),
                                   ("GET", f"/v1/catalogs/{unique_name}/databases/{DB}/tables/sales", None),
                                   ("POST", "/v1/statements", {"sql": f"SHOW DATABASES FROM {unique_name}"})):
            answer = service.request(method, path, body)
            assert answer.status == 503, (path, answer)
            error = answer.error()
            assert error["type"] == "MetastoreUnavailableError" and f"127.0.0.1:{port}" in error["message"], error
            assert SECRET.encode() not in answer.body
        assert time.monotonic() - began < 30  # no retries: it fails fast rather than at a client's timeout
        with pytest.raises(MetastoreUnavailableError, match=f"127.0.0.1:{port}"):
            api.databases(unique_name)
        assert service.request("GET", "/v1/catalogs/hive/databases").status == 200  # the others are served as ever
    finally:
        api.drop_catalog(unique_name)


def test_secrets_never_leave_the_service_unmasked(service: Server, api: CatalogServiceClient, metastore_uri: str,
                                                  unique_name: str) -> None:
    secret = SECRET.encode()
    properties = hms_properties(metastore_uri, **{"x.password": SECRET, "s3.secret.key": SECRET})
    answers = [
        service.request("POST", "/v1/catalogs", {"name": unique_name, "properties": properties}),
        service.request("GET", "/v1/catalogs"),
        service.request("GET", f"/v1/catalogs/{unique_name}"),
        service.request("GET", "/v1/catalogs/hive"),
        service.request("PATCH", f"/v1/catalogs/{unique_name}", {"properties": {"other.token": SECRET}}),
        service.request("POST", "/v1/statements", {"sql": f"SHOW CREATE CATALOG {unique_name}"}),
        service.request("POST", "/v1/statements", {"sql": "SHOW CREATE CATALOG hive"}),
        # Statements that carry a secret: their answers echo them masked.
        service.request("POST", "/v1/statements", {"sql": f"ALTER CATALOG {unique_name} SET PROPERTIES ('x.password'='{SECRET}')"}),
        service.request("POST", "/v1/statements", {"sql": f"CREATE CATALOG {unique_name}_2 PROPERTIES ('type'='hms', "
                                                          f"'hive.metastore.uris'='{metastore_uri}', 'x.password'='{SECRET}')"}),
        # Errors whose messages quote the statement or the properties.
        service.request("POST", "/v1/statements", {"sql": f"CREATE CATALOG {unique_name}_3 PROPERTIES ('x.password'='{SECRET}'"}),
        service.request("POST", "/v1/statements", {"sql": f"CREATE CATALOG {unique_name} PROPERTIES ('type'='hms', "
                                                          f"'hive.metastore.uris'='{metastore_uri}', 'x.password'='{SECRET}')"}),
        service.request("POST", "/v1/catalogs", {"name": unique_name, "properties": properties}),
        service.request("POST", "/v1/catalogs", {"name": f"{unique_name}_4", "properties": {**properties, "x.password": 7}}),
        service.request("POST", "/v1/statements", {"sql": f"x.password={SECRET} 'x.token'='{SECRET}'"}),
    ]
    try:
        assert [answer.status for answer in answers] == [201, 200, 200, 200, 200, 200, 200, 200, 200, 400, 409, 409, 400, 400]
        leaked = [(index, answer.body) for index, answer in enumerate(answers) if secret in answer.body]
        assert leaked == []
        shown = answers[2].json()["properties"]
        assert shown["x.password"] == shown["s3.secret.key"] == "******"
        assert "******" in answers[5].json()["rows"][0][1] and "******" in answers[7].json()["statement"]
        assert "******" in answers[9].error()["message"]  # the excerpt, masked, is still there
        assert secret not in service.metrics().encode() and SECRET not in service.stderr()
    finally:
        for name in (unique_name, f"{unique_name}_2"):
            if name in _catalog_names(api):
                api.drop_catalog(name)


def test_a_client_that_goes_away_mid_request_does_not_hurt_the_server(service: Server) -> None:
    head = (f"POST /v1/statements HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {service.token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"sql\": ")
    with socket.create_connection(("127.0.0.1", service.port), timeout=10) as sock:
        sock.sendall(head.encode())
    assert service.request("GET", "/v1/health", token=None).status == 200
