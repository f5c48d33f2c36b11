"""Named tokens over a real server: a read token reads and follows but changes nothing, a write token changes
only its catalogs, catalog definitions take the server's own token; and the audit line of every change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.service.conftest import READ_TOKEN, SECRET, WRITE_TOKEN, hms_properties
from tests.service.test_ddl import SALES, ok, refused
from tests.support.service import Answer, Server

pytestmark = pytest.mark.metastore

AUDIT_KEYS = {"time", "token", "catalog", "statement", "version_before", "version_after", "outcome"}


def _forbidden(answer: Answer, token: str, *words: str) -> None:
    error = refused(answer, 403, "ForbiddenError", "permission denied", f"token '{token}'", *words)
    assert error["token"] == token and error["access"] in ("read", "write") and isinstance(error["catalogs"], list)
    assert READ_TOKEN.encode() not in answer.body and WRITE_TOKEN.encode() not in answer.body


def _audit(server: Server, needle: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in (server.home / "audit.log").read_text(encoding="utf-8").splitlines()]
    assert all(set(line) >= AUDIT_KEYS for line in lines)
    return [line for line in lines if needle in line["statement"] or needle == line["catalog"]]


def _folder_of_parquet(path: Path) -> str:
    path.mkdir(parents=True)
    pq.write_table(pa.table({"id": [1, 2]}), path / "part-0.parquet")
    return path.as_uri()


def test_a_read_token_reads_and_follows_but_changes_nothing(ddl_service: Server, unique_name: str, metastore_uri: str,
                                                           tmp_path: Path) -> None:
    server, db = ddl_service, unique_name
    base = f"/v1/catalogs/hive/databases/{db}"
    ok(server.request("POST", "/v1/catalogs/hive/databases", {"name": db}))
    try:
        ok(server.request("POST", base + "/tables", SALES))
        ok(server.request("POST", base + "/tables/sales/partitions", {"partitions": [{"values": {"dt": "d", "h": "1"}}]}))
        reads = [
            ("GET", "/v1/catalogs", None), ("GET", "/v1/catalogs/hive", None), ("GET", "/v1/catalogs/hive/databases", None),
            ("GET", base + "/tables", None), ("GET", base + "/tables/sales", None), ("GET", base + "/tables/sales/partitions", None),
            ("POST", base + "/tables/sales/plan", {}), ("GET", "/v1/catalogs/hive/changes?since=0&wait=0", None),
            ("POST", "/v1/catalogs/hive/refresh", {"database": db}), ("GET", "/v1/catalogs/hive/cache", None),
            ("POST", "/v1/statements", {"sql": f"SHOW TABLES FROM hive.{db}; DESCRIBE hive.{db}.sales; REFRESH TABLE hive.{db}.sales"}),
        ]
        for method, path, body in reads:
            assert server.request(method, path, body, token=READ_TOKEN).status == 200, (method, path)

        changes: list[tuple[str, str, dict[str, Any] | None, str]] = [
            ("POST", "/v1/catalogs/hive/databases", {"name": f"{db}_no"}, "CREATE DATABASE"),
            ("PATCH", base, {"properties": {"a": "b"}}, "ALTER DATABASE"),
            ("DELETE", base + "?cascade=true", None, "DROP DATABASE"),
            ("POST", base + "/tables", {"name": "no", "columns": [{"name": "a", "type": "int"}]}, "CREATE TABLE"),
            ("POST", base + "/tables", {"name": "no", "like": "sales"}, "CREATE TABLE LIKE"),
            ("PATCH", base + "/tables/sales", {"changes": [{"op": "set_properties", "properties": {"a": "b"}}]},
             "ALTER TABLE SET TABLE PROPERTIES"),
            ("DELETE", base + "/tables/sales", None, "DROP TABLE"),
            ("POST", base + "/tables/sales/partitions", {"partitions": [{"values": {"dt": "e", "h": "1"}}]}, "ADD PARTITIONS"),
            ("DELETE", base + "/tables/sales/partitions?name=dt%3Dd", None, "DROP PARTITIONS"),
            ("POST", base + "/tables/sales/partitions/recover", {}, "RECOVER PARTITIONS"),
        ]
        for method, path, body, title in changes:
            _forbidden(server.request(method, path, body, token=READ_TOKEN), "ro", "read every catalog, but change none", title,
                       "catalog 'hive'")
        statements = [f"CREATE TABLE hive.{db}.no LIKE PATH '{_folder_of_parquet(tmp_path / 'files')}'",
                      f"SHOW TABLES FROM hive.{db}; CREATE TABLE hive.{db}.no LIKE PATH 'file:///nowhere'"]
        statements += [f"CREATE DATABASE hive.{db}_no", f"DROP TABLE hive.{db}.sales", f"ALTER TABLE hive.{db}.sales ADD COLUMNS (x int)",
                       f"SWITCH hive; ALTER TABLE {db}.sales ADD PARTITION (dt='e', h=1)", f"MSCK REPAIR TABLE hive.{db}.sales"]
        for sql in statements:
            _forbidden(server.request("POST", "/v1/statements", {"sql": sql}, token=READ_TOKEN), "ro", "catalog 'hive'")
        for sql in (f"CREATE CATALOG {db}_c PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}')",
                    "ALTER CATALOG hive SET PROPERTIES ('a.b'='c')", "DROP CATALOG other"):
            _forbidden(server.request("POST", "/v1/statements", {"sql": sql}, token=READ_TOKEN), "ro", "catalog definitions")
        _forbidden(server.request("POST", "/v1/catalogs", {"name": f"{db}_c", "properties": hms_properties(metastore_uri)},
                                  token=READ_TOKEN), "ro", "CREATE CATALOG")
        _forbidden(server.request("DELETE", "/v1/catalogs/other", token=READ_TOKEN), "ro", "DROP CATALOG")

        # Nothing of it happened.
        assert server.request("GET", base + "/tables").json() == {"tables": ["sales"]}
        assert server.request("GET", base + "/tables/sales/partitions").json() == {"partitions": ["dt=d/h=1"]}
        assert "a" not in server.request("GET", base + "/tables/sales").json()["storage"]["table_parameters"]
        assert {c["name"] for c in server.request("GET", "/v1/catalogs").json()["catalogs"]} >= {"hive", "other"}
        assert f"{db}_no" not in server.request("GET", "/v1/catalogs/hive/databases").json()["databases"]
        refusals = [line for line in _audit(server, db) if line["token"] == "ro"]
        assert len(refusals) == len(changes) + len(statements) + 2 and {line["outcome"] for line in refusals} == {"refused"}
    finally:
        server.request("DELETE", f"{base}?cascade=true&if_exists=true")


def test_a_write_token_changes_only_its_catalogs(ddl_service: Server, unique_name: str, metastore_uri: str, tmp_path: Path) -> None:
    server, db = ddl_service, unique_name
    try:
        created = ok(server.request("POST", "/v1/catalogs/hive/databases", {"name": db}, token=WRITE_TOKEN))
        assert f"'hive.{db}'" in created["result"]
        ok(server.request("POST", f"/v1/catalogs/hive/databases/{db}/tables", SALES, token=WRITE_TOKEN))
        made = server.request("POST", "/v1/statements", {"sql": f"CREATE TABLE hive.{db}.files LIKE PATH "
                                                                f"'{_folder_of_parquet(tmp_path / 'files')}'"}, token=WRITE_TOKEN)
        assert made.status == 200, made
        assert server.request("GET", f"/v1/catalogs/hive/databases/{db}/tables").json() == {"tables": ["files", "sales"]}
        altered = server.request("POST", "/v1/statements", {"sql": f"ALTER TABLE hive.{db}.sales ADD COLUMNS (x int)"},
                                 token=WRITE_TOKEN)
        assert altered.status == 200 and "column(s) added: x" in altered.json()["rows"][0][0], altered
        _forbidden(server.request("POST", "/v1/statements", {"sql": f"CREATE DATABASE other.{db}_s"}, token=WRITE_TOKEN), "etl",
                   "CREATE DATABASE changes catalog 'other'")

        # Catalog 'other' is the same metastore, but not this token's to change.
        _forbidden(server.request("POST", "/v1/catalogs/other/databases", {"name": f"{db}_x"}, token=WRITE_TOKEN), "etl",
                   "change catalog(s) hive", "catalog 'other'")
        _forbidden(server.request("DELETE", f"/v1/catalogs/other/databases/{db}/tables/sales", token=WRITE_TOKEN), "etl",
                   "catalog 'other'")
        _forbidden(server.request("POST", "/v1/statements", {"sql": f"CREATE TABLE other.{db}.files2 LIKE PATH 'file:///x'"},
                                  token=WRITE_TOKEN), "etl", "catalog 'other'")
        # SWITCH moves the catalog a statement without one changes.
        _forbidden(server.request("POST", "/v1/statements", {"sql": f"SWITCH other; CREATE TABLE {db}.files3 LIKE PATH 'file:///x'"},
                                  token=WRITE_TOKEN), "etl", "catalog 'other'")
        # Catalog definitions are the admin's.
        _forbidden(server.request("POST", "/v1/catalogs", {"name": f"{db}_c", "properties": hms_properties(metastore_uri)},
                                  token=WRITE_TOKEN), "etl", "server's own token")
        _forbidden(server.request("PATCH", "/v1/catalogs/hive", {"properties": {"a.b": "c"}}, token=WRITE_TOKEN), "etl",
                   "ALTER CATALOG")
        _forbidden(server.request("POST", "/v1/statements", {"sql": "DROP CATALOG hive"}, token=WRITE_TOKEN), "etl",
                   "catalog definitions")
        assert server.request("GET", f"/v1/catalogs/other/databases/{db}/tables/sales").status == 200  # it was not dropped
        lines = _audit(server, db)
        assert {(line["token"], line["catalog"], line["outcome"]) for line in lines if line["token"] == "etl"} >= {
            ("etl", "hive", "ok"), ("etl", "other", "refused")}
    finally:
        server.request("DELETE", f"/v1/catalogs/hive/databases/{db}?cascade=true&if_exists=true")


def test_every_change_is_audited_once_with_its_outcome_and_no_secret(ddl_service: Server, unique_name: str,
                                                                    metastore_uri: str) -> None:
    server, db = ddl_service, unique_name
    base = f"/v1/catalogs/hive/databases/{db}"
    before = ok(server.request("POST", "/v1/catalogs/hive/databases", {"name": db, "properties": {"x.password": SECRET}}))
    refused(server.request("POST", "/v1/catalogs/hive/databases", {"name": db}), 409, "AlreadyExistsError")
    _forbidden(server.request("PATCH", base, {"properties": {"a": "b"}}, token=READ_TOKEN), "ro")
    ok(server.request("POST", base + "/tables", {"name": "t", "columns": [{"name": "a", "type": "int"}]}, token=WRITE_TOKEN))
    two = ok(server.request("PATCH", base + "/tables/t", {"changes": [{"op": "set_properties", "properties": {"s3.secret.key": SECRET}},
                                                                      {"op": "rename", "name": "u"}]}))
    refused(server.request("PATCH", base + "/tables/u", {"changes": [{"op": "rename_column", "old": "a", "new": "b"}]},
                           headers={"If-Match": '"1"'}), 412, "VersionMismatchError")
    catalog = f"{db}_cat"
    assert server.request("POST", "/v1/catalogs", {"name": catalog, "properties": hms_properties(
        metastore_uri, **{"x.password": SECRET})}).status == 201
    assert server.request("DELETE", f"/v1/catalogs/{catalog}").status == 204
    ok(server.request("DELETE", base + "?cascade=true"))

    path = server.home / "audit.log"
    assert path.stat().st_mode & 0o777 == 0o600
    text = path.read_text(encoding="utf-8")
    for secret in (SECRET, READ_TOKEN, WRITE_TOKEN, server.token):
        assert secret not in text
    lines = _audit(server, db)
    shown = [(line["token"], line["catalog"], line["outcome"].split(":")[0], line["statement"].split(" ")[0]) for line in lines]
    assert shown == [
        ("admin", "hive", "ok", "POST"), ("admin", "hive", "error", "POST"), ("ro", "hive", "refused", "PATCH"),
        ("etl", "hive", "ok", "POST"), ("admin", "hive", "ok", "PATCH"), ("admin", "hive", "ok", "PATCH"),
        ("admin", "hive", "error", "PATCH"), ("admin", catalog, "ok", "POST"), ("admin", catalog, "ok", "DELETE"),
        ("admin", "hive", "ok", "DELETE"),
    ]
    first = lines[0]
    assert first["statement"] == f'POST /v1/catalogs/hive/databases {{"name": "{db}", "properties": {{"x.password": "******"}}}}'
    assert first["version_after"] == before["version"] and first["version_before"] < first["version_after"]
    assert lines[1]["outcome"] == f"error: database '{db}' already exists"
    assert lines[5]["version_after"] == two["version"] and '"op": "rename"' in lines[5]["statement"]
    assert "is at version" in lines[6]["outcome"]
    assert (lines[7]["version_before"], lines[7]["version_after"]) == (None, 1)  # a definition's own version
    assert (lines[8]["version_before"], lines[8]["version_after"]) == (1, None)
