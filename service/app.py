"""The REST API over one :class:`CatalogManager`: every client shares its catalogs, pools and caches.

An app factory: the manager, the tokens, the audit log and the companions are handed in; the shared state
(:class:`ServiceState`) is made here and handed to each resource's router (:mod:`service.routes`), so
tests build an app over a temporary home and nothing is a global. Endpoints are plain functions run on
the server's thread pool, so a blocking metastore call holds one worker thread, never the event loop, and
unrelated requests go on; DDLs on one table wait for each other (the catalog's per-table locks), DDLs on
different tables run in parallel.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

import hms_catalog
from hms_catalog.errors import HmsCatalogError
from hms_catalog.manager import CatalogManager
from service.audit import AUDIT_FILE, AuditLog
from service.companions import RunningCompanion
from service.console import Console
from service.defaults import PLAN_WAIT_SECONDS
from service.errors import error_response, exception_response
from service.middleware import BodyLimit, Gate, Measured
from service.routes import routers
from service.routes.changes import MAX_WAIT_SECONDS
from service.state import ServiceState
from service.thrift import ThriftEndpoint, ThriftSettings
from service.tokens import KerberosPrincipals, NamedToken, TokenTable

__all__ = ["MAX_BODY_BYTES", "MAX_WAIT_SECONDS", "create_app"]

MAX_BODY_BYTES = 1024 * 1024


def create_app(manager: CatalogManager, token: str, *, tokens: Sequence[NamedToken] = (), stopping: threading.Event | None = None,
               max_body_bytes: int = MAX_BODY_BYTES, companions: Mapping[str, RunningCompanion] | None = None,
               audit_path: Path | None = None, thrift: ThriftSettings | None = None,
               thrift_listener: socket.socket | None = None, plan_wait: float = PLAN_WAIT_SECONDS) -> FastAPI:
    """The service's application. ``token`` is the admin's (every catalog, and catalog definitions);
    ``tokens`` the named ones (``serve --tokens``). ``stopping`` is set when the server begins to shut down;
    ``companions`` (``serve --spark-connect``) are shown in ``/v1/health`` and run the sessions' SELECTs once
    ready. Changes are audited to ``audit_path`` (default ``HOME/audit.log``). ``thrift``: also serve the catalogs
    as a Hive Metastore (:mod:`service.thrift`) on ``thrift_listener`` (bound by the caller) while the app runs.
    ``plan_wait``: seconds an Iceberg scan plan request waits for its plan before answering ``submitted``."""
    trail = manager.shared.audit if manager.shared is not None else None
    audit = AuditLog(audit_path if audit_path is not None else manager.store.home / AUDIT_FILE, trail=trail)
    state = ServiceState(manager, audit=audit, stopping=stopping, companions=companions, plan_wait=plan_wait)
    endpoint = None if thrift is None else ThriftEndpoint(manager, audit, thrift, thrift_listener,
                                                          principals=KerberosPrincipals(tokens))
    if endpoint is not None:
        state.companions["thrift"] = endpoint  # shown in /v1/health

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(manager.finish_unfinished_commits)  # before the first request is served
        if state.store_follower is not None:
            state.store_follower.start()
        if endpoint is not None:
            endpoint.start()
        try:
            yield
        finally:
            if endpoint is not None:
                await anyio.to_thread.run_sync(endpoint.stop)
            await anyio.to_thread.run_sync(state.close)

    app = FastAPI(title="hms-catalog", version=hms_catalog.__version__, lifespan=lifespan,
                  summary="One warm, versioned catalog over Hive Metastores, shared by every client.")
    stored = manager.shared.tokens.list if manager.shared is not None else None  # replicas share the named tokens
    app.add_middleware(Gate, tokens=TokenTable(token, tokens, stored=stored))
    app.add_middleware(Console)  # the web console's files (/ui), answered ahead of the gate: the sign-in page needs no token
    app.add_middleware(BodyLimit, limit=max_body_bytes)  # before the gate: nothing reads an oversized body
    app.add_middleware(Measured, requests=state.requests)  # outermost: every answer counted, 413s included
    _handle_errors(app)
    for router in routers(state):
        app.include_router(router)
    return app


def _handle_errors(app: FastAPI) -> None:
    """Every failure in the one error shape (:mod:`service.errors`)."""

    @app.exception_handler(HmsCatalogError)
    async def catalog_error(_: Request, error: HmsCatalogError) -> JSONResponse:
        return exception_response(error)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, error: RequestValidationError) -> JSONResponse:
        return error_response(400, "BadRequest", _describe_validation(error))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, error: StarletteHTTPException) -> JSONResponse:
        kind = {404: "NotFound", 405: "MethodNotAllowed"}.get(error.status_code, "HttpError")
        return error_response(error.status_code, kind, str(error.detail))

    @app.exception_handler(Exception)
    async def unexpected(_: Request, error: Exception) -> JSONResponse:
        return exception_response(error)


def _describe_validation(error: RequestValidationError) -> str:
    problems = []
    for problem in error.errors():
        if problem.get("type") == "json_invalid":
            reason = (problem.get("ctx") or {}).get("error", "")
            return f"the request body is not valid JSON{': ' + str(reason) if reason else ''}"
        where = ".".join(str(part) for part in problem.get("loc", ()) if part != "body") or "body"
        problems.append(f"{where}: {problem.get('msg', 'invalid')}")
    return "bad request: " + "; ".join(problems)
