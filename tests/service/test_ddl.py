"""The DDL routes end to end: databases, tables and partitions created, changed and dropped through a real
server on the embedded metastore, each change seen by the read routes at once and logged as a DDL."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import pytest

from tests.support.hms import Admin
from tests.support.service import Answer, Server

pytestmark = pytest.mark.metastore


def ok(answer: Answer) -> dict[str, Any]:
    """The answer of a DDL route that succeeded: what was done and the catalog's version after it."""
    assert answer.status == 200, answer
    body = answer.json()
    assert set(body) == {"result", "version"} and isinstance(body["version"], int), body
    return dict(body)


def refused(answer: Answer, status: int, error_type: str, *words: str) -> dict[str, Any]:
    assert answer.status == status, answer
    error = answer.error()
    assert error["type"] == error_type and all(word in error["message"] for word in words), error
    return error


def ddl_changes(server: Server, since: int) -> list[tuple[str, str]]:
    changes = server.request("GET", f"/v1/catalogs/hive/changes?since={since}").json()["changes"]
    return [(change["kind"], change["object"]) for change in changes if change["source"] == "ddl"]


def current(server: Server) -> int:
    return int(server.request("GET", "/v1/catalogs/hive/changes").json()["current"])


@pytest.fixture
def database(ddl_service: Server, unique_name: str) -> Any:
    """A database of catalog ``hive`` made through the API, dropped (with its tables) after the test."""
    ok(ddl_service.request("POST", "/v1/catalogs/hive/databases", {"name": unique_name}))
    yield unique_name
    ddl_service.request("DELETE", f"/v1/catalogs/hive/databases/{unique_name}?cascade=true&if_exists=true")


SALES = {"name": "sales", "columns": [{"name": "id", "type": "int", "comment": "the key"}, {"name": "amount", "type": "decimal(10,2)"}],
         "partition_columns": [{"name": "dt", "type": "string"}, {"name": "h", "type": "int"}], "stored_as": "PARQUET",
         "comment": "made over REST", "properties": {"made.by": "tests"}}


def test_a_database_is_created_altered_and_dropped(ddl_service: Server, admin: Admin, unique_name: str) -> None:
    server, path = ddl_service, f"/v1/catalogs/hive/databases/{unique_name}"
    before = current(server)
    created = ok(server.request("POST", "/v1/catalogs/hive/databases",
                                {"name": unique_name, "comment": "scratch", "properties": {"team": "sales"}}))
    assert created["result"] == f"database 'hive.{unique_name}' created" and created["version"] > before
    assert unique_name in server.request("GET", "/v1/catalogs/hive/databases").json()["databases"]  # at once
    assert ddl_changes(server, before) == [("added", f"database {unique_name}")]
    stored = admin.pool.call("get_database", unique_name)
    assert (stored.description, stored.parameters) == ("scratch", {"team": "sales"})
    shown = server.request("GET", path).json()
    assert {key: shown[key] for key in ("catalog", "name", "comment", "properties")} == {
        "catalog": "hive", "name": unique_name, "comment": "scratch", "properties": {"team": "sales"}}

    refused(server.request("POST", "/v1/catalogs/hive/databases", {"name": unique_name}), 409, "AlreadyExistsError", unique_name)
    again = ok(server.request("POST", "/v1/catalogs/hive/databases", {"name": unique_name, "if_not_exists": True}))
    assert "already exists; nothing changed" in again["result"]

    altered = ok(server.request("PATCH", path, {"properties": {"stage": "test"}}))
    assert altered["version"] > created["version"] and "stage" in altered["result"]
    assert admin.pool.call("get_database", unique_name).parameters == {"team": "sales", "stage": "test"}
    assert server.request("GET", path).json()["properties"] == {"team": "sales", "stage": "test"}  # not the cached one

    ok(server.request("POST", path + "/tables", {"name": "t", "columns": [{"name": "id", "type": "int"}]}))
    refused(server.request("DELETE", path), 400, "ConfigurationError", "not empty", "t")  # RESTRICT, naming the table
    dropped = ok(server.request("DELETE", path + "?cascade=true"))
    assert "with its 1 table(s)" in dropped["result"]
    assert unique_name not in server.request("GET", "/v1/catalogs/hive/databases").json()["databases"]
    refused(server.request("DELETE", path), 404, "NotFoundError", unique_name)
    refused(server.request("GET", path), 404, "NotFoundError", unique_name)
    assert "does not exist; nothing changed" in ok(server.request("DELETE", path + "?if_exists=true"))["result"]


def test_a_table_is_created_seen_at_once_altered_and_dropped(ddl_service: Server, database: str) -> None:
    server, tables = ddl_service, f"/v1/catalogs/hive/databases/{database}/tables"
    assert server.request("GET", tables).json() == {"tables": []}  # cached now: the create must drop that
    before = current(server)
    created = ok(server.request("POST", tables, SALES))
    assert created["result"] == f"PARQUET table 'hive.{database}.sales' created with 2 column(s), partitioned"
    assert server.request("GET", tables).json() == {"tables": ["sales"]}
    view = server.request("GET", f"{tables}/sales").json()
    assert [(c["name"], c["type"], c["partition_key"], c["comment"]) for c in view["columns"]] == [
        ("id", "int", False, "the key"), ("amount", "decimal(10,2)", False, ""), ("dt", "string", True, ""), ("h", "int", True, "")]
    assert (view["format"], view["file_format"], view["partition_keys"]) == ("HIVE", "parquet", ["dt", "h"])
    assert view["location"].endswith(f"{database}.db/sales") and view["storage"]["table_parameters"]["made.by"] == "tests"
    assert ("added", f"table {database}.sales") in ddl_changes(server, before)
    refused(server.request("POST", tables, SALES), 409, "AlreadyExistsError", "sales")

    # Changes in order, each its own DDL; the rename in the middle moves the later ones to the new name.
    changes = [
        {"op": "add_columns", "columns": [{"name": "note", "type": "string"}]},
        {"op": "rename_column", "old": "note", "new": "remark"},
        {"op": "change_column", "old": "id", "type": "bigint", "comment": "wider"},
        {"op": "set_properties", "properties": {"a": "1", "b": "2"}},
        {"op": "rename", "name": "orders"},
        {"op": "unset_properties", "keys": ["b", "missing"], "if_exists": True},
    ]
    altered = ok(server.request("PATCH", f"{tables}/sales", {"changes": changes}))
    assert altered["version"] > view["version"] and "properties unset: b, missing" in altered["result"]
    assert server.request("GET", tables).json() == {"tables": ["orders"]}
    renamed = server.request("GET", f"{tables}/orders").json()
    assert [(c["name"], c["type"], c["comment"]) for c in renamed["columns"]] == [
        ("id", "bigint", "wider"), ("amount", "decimal(10,2)", ""), ("remark", "string", ""), ("dt", "string", ""), ("h", "int", "")]
    parameters = renamed["storage"]["table_parameters"]
    assert parameters["a"] == "1" and "b" not in parameters
    assert renamed["version"] > view["version"]

    # What the metastore would accept and every reader then fail on is refused, naming both types.
    refused(server.request("PATCH", f"{tables}/orders", {"changes": [{"op": "change_column", "old": "remark", "type": "int"}]}),
            400, "ConfigurationError", "string", "int")
    refused(server.request("PATCH", f"{tables}/orders", {"changes": [{"op": "drop_everything"}]}), 400, "BadRequest", "op")
    refused(server.request("PATCH", f"{tables}/orders", {"changes": []}), 400, "BadRequest", "changes")

    dropped = ok(server.request("DELETE", f"{tables}/orders"))
    assert "dropped" in dropped["result"] and server.request("GET", tables).json() == {"tables": []}
    refused(server.request("GET", f"{tables}/orders"), 404, "NotFoundError", "orders")
    refused(server.request("DELETE", f"{tables}/orders"), 404, "NotFoundError", "orders")
    assert "nothing changed" in ok(server.request("DELETE", f"{tables}/orders?if_exists=true"))["result"]


def test_tables_of_each_kind_and_like(ddl_service: Server, database: str, tmp_path: Path) -> None:
    server, tables = ddl_service, f"/v1/catalogs/hive/databases/{database}/tables"
    ok(server.request("POST", tables, SALES))
    like = ok(server.request("POST", tables, {"name": "sales_copy", "like": "sales"}))
    assert like["result"] == f"table 'hive.{database}.sales_copy' created like {database}.sales"
    copy = server.request("GET", f"{tables}/sales_copy").json()
    assert [c["name"] for c in copy["columns"]] == ["id", "amount", "dt", "h"] and copy["location"].endswith("sales_copy")
    ok(server.request("POST", tables, {"name": "ext", "like": f"{database}.sales", "external": True,
                                       "location": (tmp_path / "ext").as_uri()}))
    source = ok(server.request("POST", tables, {"name": "events", "columns": [{"name": "id", "type": "bigint"},
                                                                              {"name": "day", "type": "string"}],
                                                "provider": "parquet", "partition_transforms": ["day"]}))
    assert "parquet table" in source["result"]
    events = server.request("GET", f"{tables}/events").json()
    assert events["spark_provider"] == "parquet" and events["partition_keys"] == ["day"]
    text = ok(server.request("POST", tables, {"name": "csvish", "columns": [{"name": "a", "type": "string"}],
                                              "row_format": {"fields_terminated_by": ","}}))
    assert "TEXTFILE table" in text["result"]
    assert server.request("GET", f"{tables}/csvish").json()["storage"]["serde_parameters"]["field.delim"] == ","
    refused(server.request("POST", tables, {"name": "x", "like": "a.b.c.d"}), 400, "ConfigurationError", "'like'")
    refused(server.request("POST", tables, {"name": "x", "like": "other.db.t"}), 400, "ConfigurationError", "same catalog")
    refused(server.request("POST", tables, {"name": "x", "columns": [{"name": "a", "type": "nonsense<"}]}), 400, "ConfigurationError",
            "column 'a'", "nonsense")
    refused(server.request("POST", "/v1/catalogs/hive/databases/nope_db/tables", {"name": "x", "columns": [{"name": "a", "type": "int"}]}),
            404, "NotFoundError", "nope_db")
    refused(server.request("POST", tables, {"name": "x"}), 400, "BadRequest", "columns")


def test_partitions_are_added_listed_dropped_and_recovered(ddl_service: Server, database: str) -> None:
    server, table = ddl_service, f"/v1/catalogs/hive/databases/{database}/tables/sales"
    ok(server.request("POST", f"/v1/catalogs/hive/databases/{database}/tables", SALES))
    partitions = table + "/partitions"
    added = ok(server.request("POST", partitions, {"partitions": [
        {"values": {"dt": "2024-01-01", "h": "2"}}, {"values": {"dt": "2024-01-01", "h": "12"}},
        {"values": {"dt": "2024-01-02", "h": "05"}}, {"values": {"dt": "a/b", "h": "1"}}]}))
    assert added["result"] == f"4 partition(s) added to 'hive.{database}.sales'"
    listed = server.request("GET", partitions).json()["partitions"]
    assert listed == ["dt=2024-01-01/h=12", "dt=2024-01-01/h=2", "dt=2024-01-02/h=5", "dt=a%2Fb/h=1"]  # 05 as Spark spells it
    assert server.request("GET", partitions + "?where=" + quote("h > 2")).json()["partitions"] == [
        "dt=2024-01-01/h=12", "dt=2024-01-02/h=5"]  # typed: 12 > 2
    refused(server.request("GET", partitions + "?where=" + quote("h > > 2")), 400, "SqlSyntaxError")
    first = server.request("GET", partitions + "?page_size=3").json()  # a page at a time, in the same order
    assert first["partitions"] == listed[:3] and first["next_page_token"]
    rest = server.request("GET", partitions + "?page_size=3&page_token=" + quote(first["next_page_token"])).json()
    assert rest == {"partitions": listed[3:]}  # the last page: no token
    assert server.request("GET", partitions).json() == {"partitions": listed}  # no page_size: every name, as before
    filtered = server.request("GET", partitions + "?page_size=1&where=" + quote("h > 2")).json()
    assert filtered["partitions"] == ["dt=2024-01-01/h=12"] and filtered["next_page_token"]
    refused(server.request("GET", partitions + "?page_size=0"), 400, "BadRequest", "page_size")
    refused(server.request("GET", partitions + "?page_token=bogus"), 400, "ConfigurationError", "page_token")

    refused(server.request("POST", partitions, {"partitions": [{"values": {"dt": "2024-01-01", "h": "2"}}]}), 409, "AlreadyExistsError")
    same = ok(server.request("POST", partitions, {"partitions": [{"values": {"dt": "2024-01-01", "h": "2"}},
                                                                 {"values": {"dt": "2024-01-03", "h": "1"}}], "if_not_exists": True}))
    assert same["result"].startswith("1 partition(s) added") and "1 existed already" in same["result"]
    refused(server.request("POST", partitions, {"partitions": [{"values": {"dt": "x", "h": "abc"}}]}), 400, "ConfigurationError",
            "'abc'", "int")

    dropped = ok(server.request("DELETE", partitions + "?name=" + quote("dt=2024-01-01/h=12") + "&name=" + quote("dt=a%2Fb")))
    assert dropped["result"].startswith("2 partition(s) dropped")
    refused(server.request("DELETE", partitions + "?name=" + quote("dt=2099-01-01")), 404, "NotFoundError", "2099")
    assert "nothing changed" in ok(server.request("DELETE", partitions + "?if_exists=true&name=" + quote("dt=2099-01-01")))["result"]
    refused(server.request("DELETE", partitions), 400, "BadRequest", "name")
    refused(server.request("DELETE", partitions + "?name=dt"), 400, "ConfigurationError", "k=v")
    assert server.request("GET", partitions).json()["partitions"] == ["dt=2024-01-01/h=2", "dt=2024-01-02/h=5", "dt=2024-01-03/h=1"]

    # A folder written beside the metastore's knowledge, and one whose partition is gone from storage.
    location = Path(unquote(urlsplit(server.request("GET", table).json()["location"]).path))
    (location / "dt=2024-02-01" / "h=7").mkdir(parents=True)
    recovered = ok(server.request("POST", partitions + "/recover", {}))
    assert "1 added" in recovered["result"]
    assert "dt=2024-02-01/h=7" in server.request("GET", partitions).json()["partitions"]
    listed = server.request("GET", partitions).json()["partitions"]
    shutil.rmtree(location / "dt=2024-01-03", ignore_errors=True)  # the metastore made the folders it added: one is gone now
    synced = ok(server.request("POST", partitions + "/recover", {"add": True, "drop": True}))
    assert "1 dropped" in synced["result"]
    assert server.request("GET", partitions).json()["partitions"] == [name for name in listed if name != "dt=2024-01-03/h=1"]
    moved = ok(server.request("PATCH", table, {"changes": [{"op": "set_location", "location": (location / "elsewhere").as_uri(),
                                                            "partition": {"dt": "2024-02-01", "h": "7"}}]}))
    assert "moved to" in moved["result"]


def test_if_match_makes_a_table_change_conditional(ddl_service: Server, database: str) -> None:
    server, table = ddl_service, f"/v1/catalogs/hive/databases/{database}/tables/sales"
    ok(server.request("POST", f"/v1/catalogs/hive/databases/{database}/tables", SALES))
    read = server.request("GET", table).json()["version"]
    add = {"changes": [{"op": "add_columns", "columns": [{"name": "x", "type": "int"}]}]}
    ok(server.request("PATCH", table, add, headers={"If-Match": f'"{read}"'}))
    after = server.request("GET", table).json()
    assert after["version"] > read and [c["name"] for c in after["columns"]][-3:] == ["x", "dt", "h"]
    stale = refused(server.request("PATCH", table, {"changes": [{"op": "set_properties", "properties": {"late": "1"}}]},
                                   headers={"If-Match": f'"{read}"'}), 412, "VersionMismatchError", f"not {read}", "sales")
    assert "changed since it was read" in stale["message"]
    assert "late" not in server.request("GET", table).json()["storage"]["table_parameters"]  # nothing changed
    refused(server.request("DELETE", table, headers={"If-Match": f'"{read}"'}), 412, "VersionMismatchError")
    refused(server.request("PATCH", table, add, headers={"If-Match": "latest"}), 400, "ConfigurationError", "If-Match", "latest")
    ok(server.request("PATCH", table, {"changes": [{"op": "set_properties", "properties": {"now": "1"}}]},
                      headers={"If-Match": f'W/"{after["version"]}"'}))
    refused(server.request("PATCH", f"/v1/catalogs/hive/databases/{database}/tables/nope", add, headers={"If-Match": '"1"'}),
            404, "NotFoundError", "nope")


def test_ddls_on_one_table_are_serialised_and_others_run_alongside(ddl_service: Server, database: str) -> None:
    """Eight clients add a column each to one table at once: each ALTER reads the table and writes it back,
    so without the table's lock some columns would be lost. Tables of their own are changed meanwhile."""
    server, tables = ddl_service, f"/v1/catalogs/hive/databases/{database}/tables"
    for name in ("shared", "own_0", "own_1"):
        ok(server.request("POST", tables, {"name": name, "columns": [{"name": "id", "type": "int"}]}))
    answers: list[Answer] = []
    lock = threading.Lock()

    def add(table: str, column: str) -> None:
        answer = server.request("PATCH", f"{tables}/{table}", {"changes": [{"op": "add_columns",
                                                                            "columns": [{"name": column, "type": "int"}]}]})
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=add, args=("shared", f"c{n}")) for n in range(8)]
    threads += [threading.Thread(target=add, args=(f"own_{n % 2}", f"o{n}")) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert [answer.status for answer in answers] == [200] * 12, answers
    shared = [c["name"] for c in server.request("GET", f"{tables}/shared").json()["columns"]]
    assert sorted(shared) == sorted(["id", *(f"c{n}" for n in range(8))])
    assert len({answer.json()["version"] for answer in answers}) == 12  # each its own catalog event
    for n in (0, 1):
        assert len(server.request("GET", f"{tables}/own_{n}").json()["columns"]) == 3


def test_a_filesystem_catalog_refuses_ddl_saying_why(ddl_service: Server, tmp_path: Path, unique_name: str) -> None:
    client = ddl_service.client()
    try:
        client.create_catalog(unique_name, {"type": "filesystem", "root": tmp_path.as_uri()})
        refused(ddl_service.request("POST", f"/v1/catalogs/{unique_name}/databases", {"name": "x"}), 400, "ConfigurationError",
                "serves folders")
    finally:
        client.drop_catalog(unique_name)
        client.close()


def test_the_typed_client_speaks_the_ddl_routes(ddl_service: Server, unique_name: str) -> None:
    client = ddl_service.client()
    try:
        assert client.create_database("hive", unique_name, comment="by client")["version"] > 0
        client.create_table("hive", unique_name, {**SALES, "name": "t"})
        client.add_partitions("hive", unique_name, "t", [{"values": {"dt": "d", "h": "1"}}])
        assert client.partitions("hive", unique_name, "t", where="h = 1") == ["dt=d/h=1"]
        version = client.table("hive", unique_name, "t")["version"]
        client.alter_table("hive", unique_name, "t", [{"op": "set_properties", "properties": {"k": "v"}}], if_version=version)
        assert client.drop_partitions("hive", unique_name, "t", ["dt=d"])["result"].startswith("1 partition(s) dropped")
        assert client.recover_partitions("hive", unique_name, "t")["version"] >= version
        client.drop_table("hive", unique_name, "t", purge=True)
        client.alter_database("hive", unique_name, {"k": "v"})
        assert "dropped" in client.drop_database("hive", unique_name)["result"]
        assert unique_name not in client.databases("hive")
    finally:
        client.drop_database("hive", unique_name, cascade=True, if_exists=True)
        client.close()
