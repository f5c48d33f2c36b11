"""Server-side scan planning: the spec's ``planTableScan``, ``fetchPlanningResult``, ``cancelPlanning`` and
``fetchScanTasks`` routes, answered by the planner (:mod:`.scans`) over the catalog's cached metadata.

A read token plans. Planning is synchronous: ``POST .../plan`` always answers ``completed`` (never
``submitted``), with every file scan task when there are at most a page of them, and otherwise with one plan
task per page, which ``POST .../tasks`` answers. Plan ids and plan tasks carry what they name
(:mod:`.plan_ids`), so any replica answers them; a replica keeps the plans it made or re-made
(:class:`.scans.PlanCache`) so that fetching the pages of one plans it once. ``DELETE .../plan/{id}`` drops
the plan from this replica's cache; there is no work to stop.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.responses import JSONResponse, Response

from hms_catalog.model import ExternalCatalog
from service.iceberg_rest.context import IcebergContext, namespace_of
from service.iceberg_rest.credentials import Delegation, vend
from service.iceberg_rest.errors import IcebergError, IcebergRoute
from service.iceberg_rest.plan_ids import PlanKey, plan_task, read_plan_id, read_plan_task
from service.iceberg_rest.scans import PlanCache, Planned, plan_scan
from service.iceberg_rest.tables import Payload
from service.routes._common import Who

__all__ = ["ENDPOINTS", "router"]

ENDPOINTS = (("POST", "namespaces/{namespace}/tables/{table}/plan"),
             ("GET", "namespaces/{namespace}/tables/{table}/plan/{plan-id}"),
             ("DELETE", "namespaces/{namespace}/tables/{table}/plan/{plan-id}"),
             ("POST", "namespaces/{namespace}/tables/{table}/tasks"))


def _spec_expressions(node: Any) -> Any:
    """The deprecated ``{"type": "true"}`` and ``{"type": "false"}`` as the bare booleans pyiceberg reads."""
    if isinstance(node, dict):
        if node.get("type") in ("true", "false") and len(node) == 1:
            return node["type"] == "true"
        return {key: _spec_expressions(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_spec_expressions(item) for item in node]
    return node


def _request(payload: dict[str, Any]) -> Any:
    from pyiceberg.catalog.rest.scan_planning import PlanTableScanRequest

    try:
        return PlanTableScanRequest.model_validate(_spec_expressions(payload))
    except ValidationError:
        raise  # a bad request, each problem named (errors.iceberg_error)
    except (TypeError, ValueError) as error:  # pyiceberg's expression parser raises these past pydantic's checks
        raise IcebergError(400, "BadRequestException", f"the scan request's expressions are not the spec's expression "
                                                       f"JSON: {error}") from error


class _Scans:
    """What the routes share: the context, and this replica's plans."""

    def __init__(self, context: IcebergContext) -> None:
        self.context = context
        self.plans = PlanCache()

    def table(self, prefix: str, namespace: str, table: str, principal: Any) -> tuple[ExternalCatalog, str, str]:
        """The catalog (read access checked), the table's name, and its current metadata file."""
        catalog = self.context.catalog(prefix)
        self.context.read(principal, catalog)
        database, name = namespace_of(namespace), table.lower()
        return catalog, f"{database}.{name}", self.context.metadata_location(catalog, database, name)

    def planned(self, catalog: ExternalCatalog, name: str, current: str, key: PlanKey, kind: str) -> Planned:
        """The plan of ``key``, made here once; 404 ``kind`` unless its metadata file is one of this table's."""
        from pyiceberg.io import load_file_io

        metadata = self.context.read_metadata(catalog, current)
        if key.metadata_location != current:
            if key.metadata_location not in {entry.metadata_file for entry in metadata.metadata_log}:
                raise IcebergError(404, kind, f"the plan was made of a metadata file that table {name} does not list "
                                              "(another table's, or one its metadata log no longer keeps): plan again")
            metadata = self.context.read_metadata(catalog, key.metadata_location)

        def make() -> Planned:
            io = load_file_io(catalog.io_properties, metadata.location)
            return plan_scan(metadata, io, _request(json.loads(key.request)), name)

        return self.plans.get(key, make)

    def completed(self, key: PlanKey, plan: Planned, credentials: list[dict[str, Any]]) -> dict[str, Any]:
        """The spec's CompletedPlanningResult: the tasks, or a plan task per page when there are more than a page."""
        answer: dict[str, Any] = {"status": "completed"}
        if plan.pages > 1:
            answer["plan-tasks"] = [plan_task(key, page) for page in range(plan.pages)]
        else:
            answer.update(plan.page())
        if credentials:
            answer["storage-credentials"] = credentials
        return answer


def router(context: IcebergContext) -> APIRouter:
    scans = _Scans(context)
    routes = APIRouter(prefix="/iceberg/v1/{prefix}/namespaces/{namespace}/tables/{table}", route_class=IcebergRoute,
                       tags=["iceberg"], include_in_schema=False)

    def credentials(request: Request, principal: Any, catalog: ExternalCatalog, current: str,
                    delegation: str | None) -> list[dict[str, Any]]:
        location = context.read_metadata(catalog, current).location
        return vend(context, request, principal, catalog, location, delegation).storage_credentials

    @routes.post("/plan")
    def plan_table_scan(prefix: str, namespace: str, table: str, payload: Payload, request: Request, principal: Who,
                        delegation: Delegation = None) -> JSONResponse:
        catalog, name, current = scans.table(prefix, namespace, table, principal)
        body = _request(payload)
        key = PlanKey.of(current, body.model_dump(mode="json", by_alias=True, exclude_none=True))
        plan = scans.planned(catalog, name, current, key, "NoSuchPlanIdException")
        answer = scans.completed(key, plan, credentials(request, principal, catalog, current, delegation))
        return JSONResponse({**answer, "plan-id": key.plan_id})

    @routes.get("/plan/{plan_id}")
    def fetch_planning_result(prefix: str, namespace: str, table: str, plan_id: str, request: Request, principal: Who,
                              delegation: Delegation = None) -> JSONResponse:
        catalog, name, current = scans.table(prefix, namespace, table, principal)
        key = read_plan_id(plan_id)
        plan = scans.planned(catalog, name, current, key, "NoSuchPlanIdException")
        return JSONResponse(scans.completed(key, plan, credentials(request, principal, catalog, current, delegation)))

    @routes.delete("/plan/{plan_id}", status_code=204)
    def cancel_planning(prefix: str, namespace: str, table: str, plan_id: str, principal: Who) -> Response:
        scans.table(prefix, namespace, table, principal)
        scans.plans.drop(read_plan_id(plan_id))
        return Response(status_code=204)

    @routes.post("/tasks")
    def fetch_scan_tasks(prefix: str, namespace: str, table: str, payload: Payload, principal: Who) -> JSONResponse:
        catalog, name, current = scans.table(prefix, namespace, table, principal)
        task = payload.get("plan-task")
        if not isinstance(task, str):
            raise IcebergError(400, "BadRequestException", "bad request: plan-task: a plan task this service gave is required")
        key, page = read_plan_task(task)
        plan = scans.planned(catalog, name, current, key, "NoSuchPlanTaskException")
        if page >= plan.pages:
            raise IcebergError(404, "NoSuchPlanTaskException", f"plan task {task[:80]!r} names page {page} of a plan "
                                                               f"of {plan.pages}")
        return JSONResponse(plan.page(page))

    return routes
