"""Asynchronous scan plans: a service whose bound is 0 answers every plan ``submitted``, then ``completed``,
``failed`` or ``cancelled`` when polled; the package's service (the default bound) is the replica that did not
make those plans and answers their ids by planning them itself."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from tests.service.iceberg_rest.conftest import CATALOG, checked, conforms, rest_catalog, serving_ice
from tests.support.service import Server

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

V1 = f"/iceberg/v1/{CATALOG}"
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("amount", pa.float64())])


@pytest.fixture(scope="module")
def waitless(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str) -> Iterator[Server]:
    """A second service on the same metastore whose plan requests wait for nothing."""
    with serving_ice(tmp_path_factory.mktemp("waitless") / "home", metastore_uri, "--iceberg-plan-wait", "0") as running:
        yield running


def _table(server: Server, namespace: str, name: str, ids: int, partitioned: bool = False) -> None:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DoubleType, LongType, NestedField

    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "amount", DoubleType()))
    spec = PartitionSpec(PartitionField(1, 1000, IdentityTransform(), "id")) if partitioned else PartitionSpec()
    table = rest_catalog(server).create_table((namespace, name), schema=schema, partition_spec=spec)
    for start in range(0, ids, max(1, ids // 3)):
        chunk = list(range(start, min(ids, start + max(1, ids // 3))))
        table.append(pa.table({"id": chunk, "amount": [float(i) for i in chunk]}, schema=ARROW))


def _path(namespace: str, table: str, rest: str = "plan") -> str:
    return f"{V1}/namespaces/{namespace}/tables/{table}/{rest}"


def _submitted(server: Server, namespace: str, table: str, body: dict[str, Any]) -> str:
    # The document's PlanTableScanResult is a oneOf whose EmptyPlanningResult also matches a submitted answer: its
    # discriminator picks AsyncPlanningResult, which is checked here.
    answer = checked(server.request("POST", _path(namespace, table), body), 200, "AsyncPlanningResult")
    assert answer["status"] == "submitted"
    plan_id: str = answer["plan-id"]
    return plan_id


def _poll(server: Server, namespace: str, table: str, plan_id: str) -> dict[str, Any]:
    """The plan's answer once it is no longer ``submitted``."""
    deadline = time.monotonic() + 60
    while True:
        got = server.request("GET", _path(namespace, table, f"plan/{plan_id}"))
        answer = checked(got, 200, None if got.json().get("status") == "failed" else "FetchPlanningResult")
        if answer is None:
            # The document's FailedPlanningResult adds status to IcebergErrorResponse, which allows no other property,
            # so no answer passes it as written: its two parts are checked (pyiceberg's PlanFailed reads this shape).
            failed = got.json()
            conforms({"error": failed["error"]}, "IcebergErrorResponse")
            assert set(failed) == {"status", "error"}
            return dict(failed)
        if answer["status"] != "submitted" or time.monotonic() > deadline:
            return dict(answer)
        time.sleep(0.05)


def _paths(answer: dict[str, Any]) -> list[str]:
    assert answer["status"] == "completed", answer
    return sorted(task["data-file"]["file-path"] for task in answer["file-scan-tasks"])


def test_submitted_then_completed_with_the_files_of_a_synchronous_plan(waitless: Server, iceberg_service: Server,
                                                                      namespace: str) -> None:
    _table(iceberg_service, namespace, "polled", 30)
    body = {"filter": {"type": "gt-eq", "term": "id", "value": 10}}
    plan_id = _submitted(waitless, namespace, "polled", body)
    completed = _poll(waitless, namespace, "polled", plan_id)
    synchronous = checked(iceberg_service.request("POST", _path(namespace, "polled"), body), 200, "PlanTableScanResult")
    assert synchronous["status"] == "completed" and synchronous["plan-id"] == plan_id  # the id names the request
    assert _paths(completed) == _paths(synchronous) and len(_paths(completed)) == 2  # the first third is filtered out
    # a replica that did not make the plan answers its id by planning it itself
    elsewhere = checked(iceberg_service.request("GET", _path(namespace, "polled", f"plan/{plan_id}")), 200,
                        "FetchPlanningResult")
    assert _paths(elsewhere) == _paths(completed)


def test_a_cancelled_plan_stops_and_says_so_here_and_is_planned_again_elsewhere(waitless: Server, iceberg_service: Server,
                                                                               namespace: str) -> None:
    _table(iceberg_service, namespace, "slow", 300, partitioned=True)  # a file per id: planning takes a while
    plan_id = _submitted(waitless, namespace, "slow", {})
    assert waitless.request("DELETE", _path(namespace, "slow", f"plan/{plan_id}")).status == 204
    assert _poll(waitless, namespace, "slow", plan_id) == {"status": "cancelled"}
    conforms({"status": "cancelled"}, "FetchPlanningResult")
    # another replica knows of no cancel: it plans the id again, as the docs say
    elsewhere = checked(iceberg_service.request("GET", _path(namespace, "slow", f"plan/{plan_id}")), 200,
                        "FetchPlanningResult")
    assert elsewhere["status"] == "completed" and len(elsewhere["file-scan-tasks"]) == 300
    # a new plan request here plans again
    assert _submitted(waitless, namespace, "slow", {}) == plan_id
    assert len(_paths(_poll(waitless, namespace, "slow", plan_id))) == 300


def test_a_plan_that_fails_answers_failed_in_the_error_model(waitless: Server, namespace: str, iceberg_service: Server) -> None:
    _table(iceberg_service, namespace, "broken", 3)
    plan_id = _submitted(waitless, namespace, "broken", {"filter": {"type": "eq", "term": "nope", "value": 1}})
    failed = _poll(waitless, namespace, "broken", plan_id)
    assert failed["status"] == "failed" and failed["error"]["code"] == 400, failed
    assert failed["error"]["type"] == "BadRequestException" and "nope" in failed["error"]["message"]


def test_pyiceberg_which_does_not_poll_gets_its_plan_when_it_is_done(waitless: Server, iceberg_service: Server,
                                                                     namespace: str) -> None:
    """pyiceberg 0.12 raises on ``submitted`` (its polling is a TODO): a service that would answer every other client
    ``submitted`` (a bound of 0) answers pyiceberg's plan request when the plan is done, with its files."""
    _table(iceberg_service, namespace, "unpolled", 30, partitioned=True)
    assert _submitted(waitless, namespace, "unpolled", {"filter": {"type": "lt", "term": "id", "value": 7}})
    served = rest_catalog(waitless, **{"scan-planning-mode": "server"}).load_table((namespace, "unpolled"))
    own = rest_catalog(iceberg_service).load_table((namespace, "unpolled"))
    for row_filter in ("id < 7", "id >= 12"):
        planned = sorted(task.file.file_path for task in served.scan(row_filter=row_filter).plan_files())
        assert planned == sorted(task.file.file_path for task in own.scan(row_filter=row_filter).plan_files())
        assert len(planned) == (7 if row_filter == "id < 7" else 18)
