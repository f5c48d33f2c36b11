"""``/v1/health`` (no token needed) and ``/metrics``."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter
from starlette.responses import PlainTextResponse

import hms_catalog
from hms_catalog.errors import HmsCatalogError
from service.metrics import render_metrics
from service.routes._route import ServiceRoute
from service.state import ServiceState

__all__ = ["router"]


def replicas(state: ServiceState) -> dict[str, Any]:
    """This replica, its store, and which replica follows each catalog's metastore events (from the store)."""
    shared = state.manager.shared
    assert shared is not None
    answer: dict[str, Any] = {"replica": shared.replica, "url": state.manager.store.path}  # type: ignore[attr-defined]
    follower = state.store_follower
    if follower is not None:
        answer["following"] = {"rounds": follower.rounds, "failures": follower.failures, "last_error": follower.last_error}
    try:
        names = {definition.id: definition.name for definition in state.manager.definitions()}
        answer["event_followers"] = {names.get(catalog_id, catalog_id): lease
                                     for catalog_id, lease in shared.leases.holders().items()}
        answer["status"] = "ok"
    except HmsCatalogError as error:  # health answers while the store is down, and says so
        answer["status"] = f"unavailable: {error}"
    return answer


def event_followers(state: ServiceState) -> dict[str, Any]:
    """The metastore event followers this process runs, by catalog: whether each follows now (holds the
    lease, where catalogs share a store) and how far it got."""
    answer: dict[str, Any] = {}
    for catalog in state.manager.live_catalogs():
        follower = catalog.follower
        if follower is None:
            continue
        status = follower.status()
        lease = getattr(follower.lease, "lease", None)
        answer[catalog.name] = {"running": status.running, "holds_lease": follower.lease is None or lease is not None,
                                "last_event_id": status.last_event_id, "events": status.events, "applied": status.applied,
                                "batches": status.batches, "full_invalidations": status.full_invalidations,
                                "skipped": status.skipped, "failures": status.failures, "last_error": status.last_error}
    return answer


def router(state: ServiceState) -> APIRouter:
    routes = APIRouter(route_class=ServiceRoute)

    @routes.get("/v1/health")
    def health() -> dict[str, Any]:
        answer: dict[str, Any] = {"status": "stopping" if state.stopping.is_set() else "ok", "version": hms_catalog.__version__,
                  "home": str(state.manager.store.home), "uptime_seconds": round(time.time() - state.started, 3)}
        answer["followers"] = event_followers(state)
        if state.manager.shared is not None:
            answer["store"] = replicas(state)
        return {**answer, **{name: companion.health() for name, companion in state.companions.items()}}

    @routes.get("/metrics", response_class=PlainTextResponse)
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(render_metrics(state.requests, state.manager.live_catalogs(), state.manager.cache_budget),
                                 media_type="text/plain; version=0.0.4")

    return routes
