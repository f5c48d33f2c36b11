"""``/v1/health`` (no token needed) and ``/metrics``."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter
from starlette.responses import PlainTextResponse

import hms_catalog
from service.metrics import render_metrics
from service.state import ServiceState

__all__ = ["router"]


def router(state: ServiceState) -> APIRouter:
    routes = APIRouter()

    @routes.get("/v1/health")
    def health() -> dict[str, Any]:
        answer = {"status": "stopping" if state.stopping.is_set() else "ok", "version": hms_catalog.__version__,
                  "home": str(state.manager.store.home), "uptime_seconds": round(time.time() - state.started, 3)}
        return {**answer, **{name: companion.health() for name, companion in state.companions.items()}}

    @routes.get("/metrics", response_class=PlainTextResponse)
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(render_metrics(state.requests, state.manager.live_catalogs()),
                                 media_type="text/plain; version=0.0.4")

    return routes
