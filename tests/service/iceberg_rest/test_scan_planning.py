"""Server-side scan planning: pyiceberg's RestCatalog with ``scan-planning-mode=server`` plans the same files and
reads the same rows as its own client-side planning of the same tables, and the answers on the wire are the
spec's (checked against the OpenAPI document)."""

from __future__ import annotations

import time
import urllib.parse
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.service.iceberg_rest.conftest import CATALOG, OTHER_TOKEN, READ_TOKEN, checked, rest_catalog
from tests.support.iceberg_deletes import commit_deletes, equality_delete_file, position_delete_file
from tests.support.service import Server

V1 = f"/iceberg/v1/{CATALOG}"
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string()),
                   pa.field("amount", pa.float64())])
ROUTES = ["POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
          "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
          "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
          "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks"]


def _schema() -> Any:
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType

    return Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType()),
                  NestedField(3, "amount", DoubleType()))


def _by_region() -> Any:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import IdentityTransform

    return PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))


def _rows(ids: list[int], region: str | None = None) -> pa.Table:
    regions = [region or ("eu" if i % 2 else "us") for i in ids]
    return pa.table({"id": ids, "region": regions, "amount": [float(i) for i in ids]}, schema=ARROW)


def _tables(server: Server, identifier: tuple[str, str]) -> tuple[Any, Any]:
    """The table as a client that plans itself loads it, and as one that asks the service to plan."""
    client = rest_catalog(server).load_table(identifier)
    served = rest_catalog(server, **{"scan-planning-mode": "server"}).load_table(identifier)
    assert served.catalog.supports_server_side_planning() and not client.catalog.supports_server_side_planning()
    return client, served


def _files(tasks: Any) -> list[tuple[str, tuple[str, ...]]]:
    return sorted((t.file.file_path, tuple(sorted(d.file_path for d in t.delete_files))) for t in tasks)


def _read(table: Any, **scan: Any) -> list[tuple[Any, ...]]:
    data = table.scan(**scan).to_arrow()
    return sorted(zip(*(data.column(name).to_pylist() for name in data.column_names)), key=repr)


def _same(server: Server, identifier: tuple[str, str], *scans: dict[str, Any]) -> None:
    """Each scan plans the same files, with the same delete files, and reads the same rows either way."""
    client, served = _tables(server, identifier)
    for scan in scans or ({},):
        local = _files(client.scan(**scan).plan_files())
        assert _files(served.scan(**scan).plan_files()) == local, scan
        assert _read(served, **scan) == _read(client, **scan), scan


def _path(namespace: str, table: str, rest: str = "plan") -> str:
    return f"{V1}/namespaces/{namespace}/tables/{table}/{rest}"


def _plan(server: Server, namespace: str, table: str, body: dict[str, Any], token: str | None = "") -> dict[str, Any]:
    return checked(server.request("POST", _path(namespace, table), body, token=token), 200, "PlanTableScanResult")


def test_config_advertises_the_scan_planning_routes(iceberg_service: Server) -> None:
    config = checked(iceberg_service.request("GET", f"/iceberg/v1/config?warehouse={CATALOG}"), 200, "CatalogConfig")
    assert set(ROUTES) <= set(config["endpoints"])


@pytest.mark.parametrize("partitioned", [False, True])
def test_same_files_and_rows_with_filters_on_partition_and_data_columns(iceberg_service: Server, namespace: str,
                                                                        partitioned: bool) -> None:
    from pyiceberg.partitioning import PartitionSpec

    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "sales"), schema=_schema(),
                              partition_spec=_by_region() if partitioned else PartitionSpec())
    for ids in ([1, 2, 3], [4, 5], [6]):
        table.append(_rows(ids))
    _same(iceberg_service, (namespace, "sales"), {}, {"row_filter": "region == 'eu'"}, {"row_filter": "amount > 4.5"},
          {"row_filter": "region == 'us' or id < 2"}, {"row_filter": "id > 100"},
          {"row_filter": "region == 'eu'", "selected_fields": ("id",)}, {"row_filter": "REGION == 'eu'", "case_sensitive": False})
    plan = _plan(iceberg_service, namespace, "sales", {"filter": {"type": "eq", "term": "region", "value": "eu"}})
    assert plan["status"] == "completed" and plan["plan-id"]
    files = [task["data-file"] for task in plan["file-scan-tasks"]]
    if partitioned:
        assert len(files) == 2 and all(f["partition"] == ["eu"] for f in files)
        assert all(task["residual-filter"] is True for task in plan["file-scan-tasks"])  # the partition answers it
    else:
        assert len(files) == 2 and all(f["partition"] == [] for f in files)  # the file of [6] is all 'us': pruned
        assert plan["file-scan-tasks"][0]["residual-filter"] == {"type": "eq", "term": "region", "value": "eu"}
    assert {f["record-count"] for f in files} <= {1, 2, 3} and all(f["file-format"] == "parquet" for f in files)
    assert all("value-counts" not in f for f in files)  # statistics only when asked
    # fetching the plan again answers the same tasks; cancelling it is no error
    again = checked(iceberg_service.request("GET", _path(namespace, "sales", f"plan/{plan['plan-id']}")), 200,
                    "FetchPlanningResult")
    assert again["file-scan-tasks"] == plan["file-scan-tasks"]
    assert iceberg_service.request("DELETE", _path(namespace, "sales", f"plan/{plan['plan-id']}")).status == 204


def test_statistics_of_the_fields_asked(iceberg_service: Server, namespace: str) -> None:
    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "stats"), schema=_schema())
    table.append(_rows([3, 1, 2]))
    plan = _plan(iceberg_service, namespace, "stats", {"stats-fields": ["id", "region"], "select": ["id"]})
    data_file = plan["file-scan-tasks"][0]["data-file"]
    assert data_file["value-counts"] == {"keys": [1, 2], "values": [3, 3]}
    assert data_file["null-value-counts"] == {"keys": [1, 2], "values": [0, 0]}
    assert data_file["lower-bounds"] == {"keys": [1, 2], "values": [1, "eu"]}
    assert data_file["upper-bounds"] == {"keys": [1, 2], "values": [3, "us"]}
    unknown = checked(iceberg_service.request("POST", _path(namespace, "stats"), {"stats-fields": ["nope"]}), 400,
                      "IcebergErrorResponse")
    assert "nope" in unknown["error"]["message"]


def test_partition_evolution_and_schema_evolution(iceberg_service: Server, namespace: str) -> None:
    from pyiceberg.transforms import BucketTransform
    from pyiceberg.types import DateType

    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "evolving"), schema=_schema(), partition_spec=_by_region())
    table.append(_rows([1, 2, 3]))
    with table.update_schema() as update:
        update.add_column("day", DateType())
        update.rename_column("amount", "total")
    with table.update_spec() as spec:
        spec.remove_field("region")
        spec.add_field("id", BucketTransform(4), "id_bucket")
        spec.add_identity("day")
    import datetime

    later = pa.table({"id": [7, 8, 9], "region": ["eu", "us", "eu"], "total": [7.0, 8.0, 9.0],
                      "day": [datetime.date(2026, 1, d) for d in (1, 2, 2)]},
                     schema=pa.schema([*ARROW.remove(2), pa.field("total", pa.float64()), pa.field("day", pa.date32())]))
    table = rest.load_table((namespace, "evolving"))
    table.append(later)
    _same(iceberg_service, (namespace, "evolving"), {}, {"row_filter": "region == 'eu'"}, {"row_filter": "total >= 8"},
          {"row_filter": "day == '2026-01-02'"}, {"row_filter": "day is null"}, {"row_filter": "id == 8"})
    plan = _plan(iceberg_service, namespace, "evolving", {})
    by_spec = {task["data-file"]["spec-id"]: task["data-file"]["partition"] for task in plan["file-scan-tasks"]}
    assert set(by_spec) == {0, 1}
    assert by_spec[0] in (["eu"], ["us"])
    late = [t["data-file"]["partition"] for t in plan["file-scan-tasks"] if t["data-file"]["spec-id"] == 1]
    assert {p[-1] for p in late} == {"2026-01-01", "2026-01-02"}  # a date partition value as the spec writes it
    assert all(len(p) == 2 and isinstance(p[0], int) for p in late), late  # a v2 spec drops the removed field


def test_position_deletes(iceberg_service: Server, namespace: str) -> None:
    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "deleted"), schema=_schema())
    table.append(_rows([1, 2, 3]))
    table.append(_rows([4, 5]))
    first = next(t.file.file_path for t in table.scan().plan_files() if t.file.record_count == 3)
    commit_deletes(table, [position_delete_file(table, {first: [0, 2]})])
    table = rest.load_table((namespace, "deleted"))
    table.append(_rows([6]))
    _same(iceberg_service, (namespace, "deleted"), {}, {"row_filter": "id < 4"}, {"row_filter": "region == 'us'"})
    client, _ = _tables(iceberg_service, (namespace, "deleted"))
    assert sorted(row[0] for row in _read(client)) == [2, 4, 5, 6]
    plan = _plan(iceberg_service, namespace, "deleted", {})
    assert [d["content"] for d in plan["delete-files"]] == ["position-deletes"]
    # an unpartitioned position delete file applies to every data file not newer than it (the spec's rule)
    referencing = {t["data-file"]["record-count"]: t.get("delete-file-references") for t in plan["file-scan-tasks"]}
    assert referencing == {3: [0], 2: [0], 1: None}


def test_equality_deletes_apply_to_older_files_of_their_partition(iceberg_service: Server, namespace: str) -> None:
    """pyiceberg's client refuses equality deletes, so the answer is checked on the wire against the spec's rule."""
    from pyiceberg.typedef import Record

    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "eq"), schema=_schema(), partition_spec=_by_region())
    table.append(_rows([1, 2, 3, 4]))  # one file in eu, one in us
    commit_deletes(table, [equality_delete_file(table, ["id"], [{"id": 1}], partition=Record("eu"))])
    table = rest.load_table((namespace, "eq"))
    table.append(_rows([5, 7]))  # a newer eu file: the delete is older, so it does not apply
    plan = _plan(iceberg_service, namespace, "eq", {})
    assert [(d["content"], d["equality-ids"], d["partition"]) for d in plan["delete-files"]] == [("equality-deletes", [1], ["eu"])]
    referenced = sorted((t["data-file"]["partition"][0], t["data-file"]["record-count"], bool(t.get("delete-file-references")))
                        for t in plan["file-scan-tasks"])
    assert referenced == [("eu", 2, False), ("eu", 2, True), ("us", 2, False)]
    # a filter on another column keeps the delete file (its values cannot prune it)
    filtered = _plan(iceberg_service, namespace, "eq", {"filter": {"type": "lt", "term": "amount", "value": 2.5}})
    assert len(filtered["delete-files"]) == 1


def test_time_travel_refs_snapshot_schema_and_appends(iceberg_service: Server, namespace: str) -> None:
    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "travel"), schema=_schema())
    table.append(_rows([1, 2]))
    first = table.current_snapshot().snapshot_id
    table.append(_rows([3]))
    second = table.current_snapshot().snapshot_id
    table.manage_snapshots().create_tag(first, "v1").create_branch(second, "audit").commit()
    table = rest.load_table((namespace, "travel"))
    table.append(_rows([4, 5]))
    third = table.current_snapshot().snapshot_id
    table = rest.load_table((namespace, "travel"))
    with table.update_schema() as update:
        update.rename_column("amount", "total")
    tag, branch = table.snapshot_by_name("v1").snapshot_id, table.snapshot_by_name("audit").snapshot_id
    _same(iceberg_service, (namespace, "travel"), {"snapshot_id": first}, {"snapshot_id": tag}, {"snapshot_id": branch},
          {"snapshot_id": second, "row_filter": "id > 1"})
    client, served = _tables(iceberg_service, (namespace, "travel"))
    assert sorted(r[0] for r in _read(served, snapshot_id=tag)) == [1, 2]
    # the snapshot's schema: a filter on the column's old name binds only with use-snapshot-schema
    old = {"snapshot-id": first, "filter": {"type": "gt", "term": "amount", "value": 1.5}}
    assert len(_plan(iceberg_service, namespace, "travel", {**old, "use-snapshot-schema": True})["file-scan-tasks"]) == 1
    refused = checked(iceberg_service.request("POST", _path(namespace, "travel"), old), 400, "IcebergErrorResponse")
    assert "amount" in refused["error"]["message"]
    # appends after the first snapshot, up to the third: the files the second and third added
    appended = _plan(iceberg_service, namespace, "travel", {"start-snapshot-id": first, "end-snapshot-id": third})
    added = {t.file.file_path for t in client.scan(snapshot_id=third).plan_files()} - {
        t.file.file_path for t in client.scan(snapshot_id=first).plan_files()}
    assert {t["data-file"]["file-path"] for t in appended["file-scan-tasks"]} == added and len(added) == 2
    missing = checked(iceberg_service.request("POST", _path(namespace, "travel"), {"snapshot-id": 12345}), 400,
                      "IcebergErrorResponse")
    assert "12345" in missing["error"]["message"]


def test_an_empty_table(iceberg_service: Server, namespace: str) -> None:
    rest_catalog(iceberg_service).create_table((namespace, "empty"), schema=_schema(), partition_spec=_by_region())
    plan = _plan(iceberg_service, namespace, "empty", {"filter": {"type": "eq", "term": "region", "value": "eu"}})
    assert plan["file-scan-tasks"] == [] and plan["delete-files"] == []
    _same(iceberg_service, (namespace, "empty"), {}, {"row_filter": "id > 1"})


@pytest.mark.slow  # about 30 s: pyiceberg writes 2,500 files, and both clients read them
def test_a_table_of_thousands_of_files_answers_plan_tasks(iceberg_service: Server, namespace: str) -> None:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import IdentityTransform

    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "big"), schema=_schema(),
                              partition_spec=PartitionSpec(PartitionField(1, 1000, IdentityTransform(), "id")))
    started = time.perf_counter()
    table.append(_rows(list(range(2500))))  # one file per id
    plan = _plan(iceberg_service, namespace, "big", {})
    assert plan["status"] == "completed" and "file-scan-tasks" not in plan and len(plan["plan-tasks"]) == 3
    paths: list[str] = []
    for task in plan["plan-tasks"]:
        page = checked(iceberg_service.request("POST", _path(namespace, "big", "tasks"), {"plan-task": task}), 200,
                       "FetchScanTasksResult")
        paths += [t["data-file"]["file-path"] for t in page["file-scan-tasks"]]
    assert len(paths) == len(set(paths)) == 2500
    # the plan task alone names its page: with the plan dropped from the service's cache, it is planned again
    assert iceberg_service.request("DELETE", _path(namespace, "big", f"plan/{plan['plan-id']}")).status == 204
    page = checked(iceberg_service.request("POST", _path(namespace, "big", "tasks"), {"plan-task": plan["plan-tasks"][2]}),
                   200, "FetchScanTasksResult")
    assert [t["data-file"]["file-path"] for t in page["file-scan-tasks"]] == paths[2000:]
    _same(iceberg_service, (namespace, "big"), {}, {"row_filter": "id >= 2490 or amount == 7.0"})
    assert time.perf_counter() - started < 120


def test_access_and_errors(iceberg_service: Server, namespace: str, unique_name: str) -> None:
    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "guarded"), schema=_schema())
    table.append(_rows([1]))
    rest.create_table((namespace, "other"), schema=_schema())
    plan = _plan(iceberg_service, namespace, "guarded", {}, token=READ_TOKEN)  # a read token plans
    assert len(plan["file-scan-tasks"]) == 1
    assert iceberg_service.request("POST", _path(namespace, "guarded"), {}, token=None).status == 401
    refused = checked(iceberg_service.request("POST", _path(namespace, "guarded"), {}, token=OTHER_TOKEN), 403,
                      "IcebergErrorResponse")
    assert refused["error"]["type"] == "ForbiddenException"
    missing = checked(iceberg_service.request("POST", _path(namespace, "nope"), {}), 404, "IcebergErrorResponse")
    assert missing["error"]["type"] == "NoSuchTableException"
    for path, kind in ((_path(namespace, "guarded", "plan/p1.garbage"), "NoSuchPlanIdException"),
                       (_path(namespace, "other", f"plan/{urllib.parse.quote(plan['plan-id'])}"), "NoSuchPlanIdException")):
        answer = checked(iceberg_service.request("GET", path), 404, "IcebergErrorResponse")
        assert answer["error"]["type"] == kind, answer
    task = checked(iceberg_service.request("POST", _path(namespace, "guarded", "tasks"), {"plan-task": f"{plan['plan-id']}.7"}),
                   404, "IcebergErrorResponse")
    assert task["error"]["type"] == "NoSuchPlanTaskException"
    bad = checked(iceberg_service.request("POST", _path(namespace, "guarded"), {"filter": {"type": "eq", "term": "nope",
                                                                                          "value": 1}}),
                  400, "IcebergErrorResponse")
    assert "nope" in bad["error"]["message"]
    both = checked(iceberg_service.request("POST", _path(namespace, "guarded"), {"snapshot-id": 1, "start-snapshot-id": 1,
                                                                                 "end-snapshot-id": 2}), 400,
                   "IcebergErrorResponse")
    assert both["error"]["type"] == "BadRequestException"


def test_a_file_outside_the_table_location_is_never_listed(iceberg_service: Server, namespace: str, tmp_path: Any) -> None:
    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "escaped"), schema=_schema())
    outside = tmp_path / "elsewhere.parquet"
    pq.write_table(_rows([1]), outside)
    table.add_files([f"file://{outside}"])
    refused = checked(iceberg_service.request("POST", _path(namespace, "escaped"), {}), 403, "IcebergErrorResponse")
    assert refused["error"]["type"] == "ForbiddenException" and str(outside) in refused["error"]["message"]


def _manifest_reads(server: Server) -> dict[str, int]:
    """The service's ``iceberg_manifests`` cache counters (summed over catalogs), from ``/metrics``."""
    text = server.request("GET", "/metrics").body.decode("utf-8")
    counts = {"loads": 0, "hits": 0}
    for line in text.splitlines():
        for name in counts:
            if line.startswith(f"hms_catalog_cache_{name}_total{{") and 'cache="iceberg_manifests"' in line:
                counts[name] += int(float(line.rsplit(" ", 1)[1]))
    return counts


def test_a_plan_with_a_new_filter_reads_no_manifest_from_the_store_again(iceberg_service: Server, namespace: str) -> None:
    """Manifest lists and manifests are never rewritten: the service reads each once, whatever the filters of the
    plans that need it, and the plans answer what the client's own planning does."""
    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "manifests"), schema=_schema(), partition_spec=_by_region())
    for ids in ([1, 2], [3, 4], [5]):
        table.append(_rows(ids))
    files = 1 + len(table.current_snapshot().manifests(table.io))  # the manifest list and its manifests
    before = _manifest_reads(iceberg_service)
    _plan(iceberg_service, namespace, "manifests", {"filter": {"type": "eq", "term": "region", "value": "eu"}})
    first = _manifest_reads(iceberg_service)
    assert first["loads"] - before["loads"] == files
    _same(iceberg_service, (namespace, "manifests"), {"row_filter": "id > 3"}, {"row_filter": "amount < 2.5"})
    second = _manifest_reads(iceberg_service)
    assert second["loads"] == first["loads"] and second["hits"] - first["hits"] >= 2 * files
    table.append(_rows([6]))  # a new snapshot: its new manifest list and manifest are read, the others are not
    _plan(iceberg_service, namespace, "manifests", {"filter": {"type": "eq", "term": "region", "value": "us"}})
    assert _manifest_reads(iceberg_service)["loads"] - second["loads"] == 2
