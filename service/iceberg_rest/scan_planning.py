"""Server-side scan planning: the spec's ``planTableScan``, ``fetchPlanningResult``, ``cancelPlanning`` and
``fetchScanTasks`` routes, answered by the planner (:mod:`.scans`) over the catalog's cached metadata.

A read token plans. A plan runs on the service's small pool of planning threads (:mod:`.plan_runs`);
``POST .../plan`` waits for it up to the service's bound (``serve --iceberg-plan-wait``) and answers
``completed``, with every file scan task when there are at most a page of them and otherwise one plan task per
page (which ``POST .../tasks`` answers), or ``submitted`` with the plan id to poll (not to pyiceberg, which does
not poll: its request waits until the plan is done). ``GET .../plan/{id}`` waits
up to the bound too and answers ``completed``, ``submitted``, ``failed`` (the spec's error model) or
``cancelled``; ``DELETE .../plan/{id}`` stops the work and drops the plan. Plan ids and plan tasks carry what
they name (:mod:`.plan_ids`), so any replica answers them: one that did not make a plan plans it again, and a
plan cancelled on another replica is simply planned again (no replica knows of another's cancel). A replica
keeps the plans it made or re-made (:class:`.scans.PlanCache`) so that fetching the pages of one plans it once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.responses import JSONResponse, Response

from hms_catalog.model import ExternalCatalog
from service.iceberg_rest.context import IcebergContext, namespace_of
from service.iceberg_rest.credentials import Delegation, vend
from service.iceberg_rest.errors import IcebergError, IcebergRoute, iceberg_error
from service.iceberg_rest.plan_ids import PlanKey, plan_task, read_plan_id, read_plan_task
from service.iceberg_rest.plan_runs import PlanCancelled, PlanRun, PlanRuns
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


# X-Client-Version prefixes of the clients that raise on a ``submitted`` plan instead of polling it
_CLIENTS_THAT_DO_NOT_POLL = ("PyIceberg ",)


def _client_polls(request: Request) -> bool:
    """Whether the client polls a ``submitted`` plan. pyiceberg does not (0.12 raises ``NotImplementedError: Async
    scan planning not yet supported``; its polling is a TODO), so its plan requests are answered when the plan is
    done, however long that takes, rather than with an answer it can only fail on: the cold plan of a table of
    2,000 manifests on S3 takes longer than the default bound."""
    return not request.headers.get("X-Client-Version", "").startswith(_CLIENTS_THAT_DO_NOT_POLL)


class _Scans:
    """What the routes share: the context and this replica's runs of plans (the plans are kept in each catalog's
    ``iceberg_plans`` cache, :class:`.scans.PlanCache`)."""

    def __init__(self, context: IcebergContext) -> None:
        self.context = context
        self.runs = PlanRuns(context.state.plan_pool)

    def table(self, prefix: str, namespace: str, table: str, principal: Any) -> tuple[ExternalCatalog, str, str]:
        """The catalog (read access checked), the table's name, and its current metadata file."""
        catalog = self.context.catalog(prefix)
        self.context.read(principal, catalog)
        database, name = namespace_of(namespace), table.lower()
        return catalog, f"{database}.{name}", self.context.metadata_location(catalog, database, name)

    def planned(self, catalog: ExternalCatalog, name: str, current: str, key: PlanKey, kind: str,
                check: Callable[[], None] | None = None) -> Planned:
        """The plan of ``key``, made here once; 404 ``kind`` unless its metadata file is one of this table's.
        ``check`` raises to stop the planning (:mod:`.plan_runs`)."""
        from pyiceberg.io import load_file_io

        from hms_catalog.cache.manifest_io import ManifestCachingIO

        metadata = self.metadata(catalog, name, current, key, kind)

        def make() -> Planned:
            io = ManifestCachingIO(load_file_io(catalog.io_properties, metadata.location), catalog.caches.iceberg_manifests)
            return plan_scan(metadata, io, _request(json.loads(key.request)), name, check)

        return PlanCache(catalog.caches.iceberg_plans).get(key, make)

    def metadata(self, catalog: ExternalCatalog, name: str, current: str, key: PlanKey, kind: str) -> Any:
        """The metadata file ``key`` plans; 404 ``kind`` unless it is one of this table's."""
        metadata = self.context.read_metadata(catalog, current)
        if key.metadata_location != current:
            if key.metadata_location not in {entry.metadata_file for entry in metadata.metadata_log}:
                raise IcebergError(404, kind, f"the plan was made of a metadata file that table {name} does not list "
                                              "(another table's, or one its metadata log no longer keeps): plan again")
            metadata = self.context.read_metadata(catalog, key.metadata_location)
        return metadata

    def run(self, catalog: ExternalCatalog, name: str, current: str, key: PlanKey) -> PlanRun:
        """The run of ``key`` on this replica, started if none is running or done here; 404 first (not as a failed
        plan) unless its metadata file is one of this table's."""
        self.metadata(catalog, name, current, key, "NoSuchPlanIdException")
        return self.runs.start(key, lambda check: self.planned(catalog, name, current, key, "NoSuchPlanIdException",
                                                               check))

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

    def answer_of(request: Request, principal: Any, catalog: ExternalCatalog, current: str, delegation: str | None,
               key: PlanKey, run: PlanRun, *, raising: bool) -> dict[str, Any]:
        """The run's state after waiting up to the bound (for a client that does not poll: until it is done); a
        failure raised (``raising``: a plan request's own error answer) or answered ``failed`` in the spec's error
        model (a poll's)."""
        try:
            plan = run.outcome(context.state.plan_wait if _client_polls(request) else None)
        except PlanCancelled:
            return {"status": "cancelled"}
        except Exception as error:
            if raising:
                raise
            status, kind, message = iceberg_error(error)
            return {"status": "failed", "error": {"message": message, "type": kind, "code": status}}
        if plan is None:
            return {"status": "submitted"}
        return scans.completed(key, plan, credentials(request, principal, catalog, current, delegation))

    @routes.post("/plan")
    def plan_table_scan(prefix: str, namespace: str, table: str, payload: Payload, request: Request, principal: Who,
                        delegation: Delegation = None) -> JSONResponse:
        catalog, name, current = scans.table(prefix, namespace, table, principal)
        body = _request(payload)
        key = PlanKey.of(current, body.model_dump(mode="json", by_alias=True, exclude_none=True))
        run = scans.run(catalog, name, current, key)
        answer = answer_of(request, principal, catalog, current, delegation, key, run, raising=True)
        return JSONResponse({**answer, "plan-id": key.plan_id} if answer["status"] != "cancelled" else answer)

    @routes.get("/plan/{plan_id}")
    def fetch_planning_result(prefix: str, namespace: str, table: str, plan_id: str, request: Request, principal: Who,
                              delegation: Delegation = None) -> JSONResponse:
        catalog, name, current = scans.table(prefix, namespace, table, principal)
        key = read_plan_id(plan_id)
        scans.metadata(catalog, name, current, key, "NoSuchPlanIdException")  # this table's plan, or 404
        run = scans.runs.find(key) or scans.run(catalog, name, current, key)  # another replica's plan: planned here
        return JSONResponse(answer_of(request, principal, catalog, current, delegation, key, run, raising=False))

    @routes.delete("/plan/{plan_id}", status_code=204)
    def cancel_planning(prefix: str, namespace: str, table: str, plan_id: str, principal: Who) -> Response:
        catalog, _, _ = scans.table(prefix, namespace, table, principal)
        key = read_plan_id(plan_id)
        scans.runs.cancel(key)
        PlanCache(catalog.caches.iceberg_plans).drop(key)
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
