"""The service on a real S3 API end to end: a real ``hms-catalog serve`` whose catalog ``s3`` (made with the CLI
against the server) is the session metastore's warehouse on moto's S3 server, and whose catalog ``lake`` (made
through the API) is a filesystem catalog on the same bucket.

Through REST: listings, a table's detected format, a pruned plan whose ``s3a://`` files read back (with the
catalog's own storage settings) the rows the warehouse wrote, REFRESH, a promoted folder's plan. The S3 secret
key appears in no answer but ``/storage-credentials`` and in none of the service's logs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from hms_catalog.storage import StorageResolver
from tests.support.s3 import EVENTS, LAKE_VISITS, SALES, Warehouse, create_catalog_statement
from tests.support.service import Answer, Server, served

pytestmark = pytest.mark.metastore

S3, LAKE = "s3", "lake"
VENDS_ITS_KEY = {"storage.vending": "catalog_key"}  # the driver's endpoint hands out the catalog's key only when told to


@pytest.fixture(scope="module")
def s3_service(tmp_path_factory: pytest.TempPathFactory, s3_warehouse: Warehouse) -> Iterator[Server]:
    """A server with catalog ``s3`` (created by the CLI in ``--server`` mode) and ``lake`` (through the API)."""
    with served(tmp_path_factory.mktemp("s3service") / "home") as server:
        cli = Path(sys.executable).with_name("hms-catalog")
        created = subprocess.run(
            [str(cli), "--server", server.url, "-e", create_catalog_statement(S3, s3_warehouse.catalog_properties(**VENDS_ITS_KEY))],
            env={**os.environ, "HMS_CATALOG_TOKEN": server.token}, capture_output=True, text=True, timeout=120)
        assert created.returncode == 0, created.stderr
        assert s3_warehouse.server.secret_key not in created.stdout + created.stderr
        client = server.client()
        try:
            client.create_catalog(LAKE, s3_warehouse.lake_properties(auto_promote="false"))
        finally:
            client.close()
        yield server


class Calls:
    """Requests to the service whose answers are kept, so that every body can be searched for the secret."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.answers: list[tuple[str, Answer]] = []

    def __call__(self, method: str, path: str, body: dict[str, Any] | None = None, status: int = 200) -> Any:
        answer = self.server.request(method, path, body)
        self.answers.append((f"{method} {path}", answer))
        assert answer.status == status, (path, answer)
        return answer.json()

    def carrying(self, secret: str) -> list[str]:
        return [call for call, answer in self.answers if secret.encode() in answer.body]


@pytest.fixture
def calls(s3_service: Server, s3_warehouse: Warehouse) -> Iterator[Calls]:
    """The test's calls; after it, none of their answers may hold the secret key."""
    made = Calls(s3_service)
    yield made
    assert made.answers, "the test made no call"
    assert made.carrying(s3_warehouse.server.secret_key) == []


def _resolver(warehouse: Warehouse) -> StorageResolver:
    """A resolver of our own from the catalog's properties: what a reader of the plan holds (not the service's)."""
    return StorageResolver.from_properties(warehouse.catalog_properties(), name=S3)


def test_the_s3_catalog_lists_its_databases_and_tables_and_masks_its_secret(calls: Calls, s3_warehouse: Warehouse) -> None:
    shown = calls("GET", f"/v1/catalogs/{S3}")["properties"]
    assert shown["s3.secret_key"] == "******"
    assert shown["s3.endpoint"] == s3_warehouse.server.endpoint and shown["s3.access_key"] == s3_warehouse.server.access_key
    assert S3 in [each["name"] for each in calls("GET", "/v1/catalogs")["catalogs"]]
    assert s3_warehouse.database in calls("GET", f"/v1/catalogs/{S3}/databases")["databases"]
    tables = calls("GET", f"/v1/catalogs/{S3}/databases/{s3_warehouse.database}/tables")["tables"]
    assert {"clicks", "events", "notes", "sales"} <= set(tables), tables  # (other tests add tables beside them)
    created = calls("POST", "/v1/statements", {"sql": f"SHOW CREATE CATALOG {S3}"})
    assert "'s3.secret_key' = '******'" in created["rows"][0][1], created


@pytest.mark.parametrize(("table", "kind", "file_format"), [
    ("sales", "HIVE", "parquet"), ("events", "HIVE", "orc"), ("notes", "HIVE", "text"), ("clicks", "ICEBERG", "iceberg")])
def test_a_table_loads_with_its_detected_format(calls: Calls, s3_warehouse: Warehouse, table: str, kind: str,
                                                file_format: str) -> None:
    view = calls("GET", f"/v1/catalogs/{S3}/databases/{s3_warehouse.database}/tables/{table}")
    assert (view["format"], view["file_format"]) == (kind, file_format), view
    assert view["location"] == f"{s3_warehouse.root}/{table}"


def test_a_pruned_plan_names_s3a_files_that_read_back_the_rows_written(calls: Calls, s3_warehouse: Warehouse) -> None:
    path = f"/v1/catalogs/{S3}/databases/{s3_warehouse.database}/tables/sales/plan"
    plan = calls("POST", path, {"where": "region <> 'north'"})
    summary = plan["summary"]  # (the metastore filtered the partitions: their total is not known, nor counted pruned)
    assert (summary["partitions_scanned"], summary["files"]) == (2, 2), summary
    assert plan["splits"] and all(split["path"].startswith(f"{s3_warehouse.root}/sales/region=") for split in plan["splits"])
    resolver = _resolver(s3_warehouse)
    try:
        read = []
        for split in plan["splits"]:
            filesystem, resolved = resolver.resolve(split["path"])
            region = dict(split["partition_values"])["region"]
            read += [(row["id"], row["name"], row["amount"], region)
                     for row in pq.read_table(resolved, filesystem=filesystem).to_pylist()]
        assert sorted(read) == sorted((r[0], r[1], r[2], region) for region in ("south east", "a/b") for r in SALES[region])

        orc_plan = calls("POST", path.replace("/sales/", "/events/"), {"where": "dt = '2026-01-02'"})
        assert [split["path"] for split in orc_plan["splits"]] == [f"{s3_warehouse.root}/events/dt=2026-01-02/part-00000.orc"]
        filesystem, resolved = resolver.resolve(orc_plan["splits"][0]["path"])
        with filesystem.open_input_file(resolved) as handle:
            assert orc.read_table(handle).to_pylist() == [{"id": i, "kind": k} for i, k in EVENTS["2026-01-02"]]
    finally:
        resolver.close()


def test_refresh_of_the_catalog_and_of_a_table(calls: Calls, s3_warehouse: Warehouse) -> None:
    before = calls("POST", f"/v1/catalogs/{S3}/refresh", {})["version"]
    refreshed = calls("POST", f"/v1/catalogs/{S3}/refresh", {"database": s3_warehouse.database, "table": "sales"})
    assert refreshed["version"] > before and refreshed["table"] == "sales"
    plan = calls("POST", f"/v1/catalogs/{S3}/databases/{s3_warehouse.database}/tables/sales/plan", {"where": "region = 'a/b'"})
    assert [split["path"] for split in plan["splits"]] == [f"{s3_warehouse.root}/sales/region=a%2Fb/part-00000.parquet"]


def test_a_promoted_folder_of_the_filesystem_catalog_plans_on_s3a(calls: Calls, s3_warehouse: Warehouse) -> None:
    assert calls("GET", f"/v1/catalogs/{LAKE}/databases")["databases"] == ["raw"]
    assert calls("GET", f"/v1/catalogs/{LAKE}")["properties"]["s3.secret_key"] == "******"
    promoted = calls("POST", "/v1/statements", {"sql": f"ALTER TABLE {LAKE}.raw.visits PROMOTE"})
    assert "promoted: parquet" in str(promoted), promoted
    assert "visits" in calls("GET", f"/v1/catalogs/{LAKE}/databases/raw/tables")["tables"]
    plan = calls("POST", f"/v1/catalogs/{LAKE}/databases/raw/tables/visits/plan", {"where": "dt = '2026-02-02'"})
    assert (plan["summary"]["partitions_scanned"], plan["summary"]["files"]) == (1, 1), plan["summary"]
    assert [split["path"] for split in plan["splits"]] == [f"{s3_warehouse.lake}/raw/visits/dt=2026-02-02/part-00000.parquet"]
    resolver = StorageResolver.from_properties(s3_warehouse.lake_properties(), name=LAKE)
    try:
        filesystem, resolved = resolver.resolve(plan["splits"][0]["path"])
        assert pq.read_table(resolved, filesystem=filesystem).column("visit_id").to_pylist() == LAKE_VISITS["2026-02-02"]
    finally:
        resolver.close()


def test_only_the_credentials_endpoint_carries_the_secret_and_no_log_does(s3_service: Server, s3_warehouse: Warehouse) -> None:
    secret = s3_warehouse.server.secret_key
    vended = s3_service.request("GET", f"/v1/catalogs/{S3}/storage-credentials")
    assert vended.status == 200 and vended.headers["cache-control"] == "no-store", vended
    assert vended.json()["hadoop_settings"]["fs.s3a.secret.key"] == secret  # the one answer that has it
    audit = (s3_service.home / "audit.log").read_text(encoding="utf-8")
    assert f"GET /v1/catalogs/{S3}/storage-credentials" in audit and "fs.s3a.secret.key" in audit  # keys, not values
    assert "CREATE CATALOG" in audit
    logs = {path.name: path.read_bytes() for path in s3_service.home.rglob("*.log")}
    assert [name for name, text in logs.items() if secret.encode() in text] == []
    assert secret not in s3_service.stderr()
