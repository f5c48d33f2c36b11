"""The REST API over one :class:`CatalogManager`: every client shares its catalogs, pools and caches.

Endpoints are plain functions run on the server's thread pool, so a blocking metastore call holds one
worker thread, never the event loop, and unrelated requests go on. The one endpoint that waits on
purpose (``/changes?wait=``) waits on a pool of its own, in slices, so long polls cannot starve the rest
and a stopping server ends them at once.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any, Literal

import anyio.to_thread
from anyio import CapacityLimiter
from fastapi import FastAPI, Header, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import hms_catalog
from hms_catalog import types as canonical
from hms_catalog.errors import AlreadyExistsError, ConfigurationError, HmsCatalogError
from hms_catalog.execution import Result, Session
from hms_catalog.execution.browse_commands import like_matcher
from hms_catalog.formats.metadata import TableMetadata
from hms_catalog.manager import CatalogManager
from hms_catalog.masking import mask_text
from hms_catalog.properties import mask_properties
from hms_catalog.remote.values import encode_value
from hms_catalog.sql import ast
from hms_catalog.store import CatalogDefinition
from planner.aggregates import AggregateFunction, AggregateRequest
from planner.core import plan_table
from service.auth import token_matches
from service.companions import RunningCompanion
from service.errors import error_response, exception_response
from service.metrics import RequestMetrics, render_metrics

__all__ = ["MAX_BODY_BYTES", "MAX_WAIT_SECONDS", "create_app"]

MAX_BODY_BYTES = 1024 * 1024
MAX_WAIT_SECONDS = 60.0
_WAIT_SLICE = 0.5  # a long poll looks at other processes' REFRESHes and at shutdown this often
_COMPANION_WAIT_SECONDS = 180.0  # a Spark Connect server being started: SELECTs wait for it, not start their own Spark
_OPEN_PATHS = frozenset({"/v1/health"})
_DRAIN_BYTES = 16 * 1024 * 1024  # the most of an oversized body read and dropped before answering 413


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewCatalog(_Body):
    name: str
    comment: str = ""
    properties: dict[str, str]


class CatalogChange(_Body):
    properties: dict[str, str] | None = None
    rename: str | None = None


class AggregateFunctionBody(_Body):
    function: Literal["count_star", "count", "min", "max"]
    column: str | None = None


class AggregateBody(_Body):
    """Aggregates to answer from metadata; the answer is per partition, whatever the grouping."""

    functions: list[AggregateFunctionBody]
    group_by: list[str] = []


class PlanRequest(_Body):
    where: str | None = None
    columns: list[str] | None = None
    statistics: bool = False
    aggregate: AggregateBody | None = None


class RefreshRequest(_Body):
    database: str | None = None
    table: str | None = None


class StatementRequest(_Body):
    sql: str
    catalog: str | None = None
    database: str | None = None


def create_app(manager: CatalogManager, token: str, *, stopping: threading.Event | None = None,
               max_body_bytes: int = MAX_BODY_BYTES, companions: Mapping[str, RunningCompanion] | None = None) -> FastAPI:
    """The service's application. ``stopping`` is set when the server begins to shut down; ``companions``
    (``serve --spark-connect``) are shown in ``/v1/health`` and run the sessions' SELECTs once ready."""
    companions = dict(companions or {})
    stopping = stopping if stopping is not None else threading.Event()
    requests = RequestMetrics()
    engine: dict[str, Any] = {}  # SELECT's engine (a SparkSession), shared by every request, closed at shutdown
    engine_lock = threading.Lock()
    waiters = CapacityLimiter(256)
    # A table's JSON view, made once per load of it: a reload is a new TableMetadata, so entries of
    # replaced loads go with them.
    views: weakref.WeakKeyDictionary[TableMetadata, dict[str, Any]] = weakref.WeakKeyDictionary()
    views_lock = threading.Lock()
    started = time.time()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            stopping.set()
            engine_session = Session(manager)
            engine_session.extras = engine
            await anyio.to_thread.run_sync(_close_all, engine_session, manager)

    app = FastAPI(title="hms-catalog", version=hms_catalog.__version__, lifespan=lifespan,
                  summary="One warm, versioned catalog over Hive Metastores, shared by every client.")

    def session(catalog: str | None = None, database: str | None = None) -> Session:
        """A session for one request. What statements started in earlier sessions (SELECT's Spark) is
        shared through each extra's ``for_session``, so names resolve by this request's position."""
        opened = Session(manager)
        opened.set_position(catalog, database)
        for companion in companions.values():
            opened.engine_options.update(companion.engine_options())
        with engine_lock:
            shared = dict(engine)
        opened.extras = {key: value.for_session(opened) if hasattr(value, "for_session") else value
                         for key, value in shared.items()}
        return opened

    def keep_engines(opened: Session) -> None:
        """Keep what a request's statements started (the first SELECT's Spark) for the requests after it."""
        with engine_lock:
            for key, value in opened.extras.items():
                engine.setdefault(key, value)

    # Middleware and error handlers -------------------------------------------------------------------

    app.add_middleware(_Gate, token=token)
    app.add_middleware(_BodyLimit, limit=max_body_bytes)  # before the gate: nothing reads an oversized body
    app.add_middleware(_Measured, requests=requests)  # outermost: every answer counted, 413s included

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

    # Service ----------------------------------------------------------------------------------------

    @app.get("/v1/health")
    def health() -> dict[str, Any]:
        answer = {"status": "stopping" if stopping.is_set() else "ok", "version": hms_catalog.__version__,
                  "home": str(manager.store.home), "uptime_seconds": round(time.time() - started, 3)}
        return {**answer, **{name: companion.health() for name, companion in companions.items()}}

    @app.get("/metrics", response_class=PlainTextResponse)
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(render_metrics(requests, manager.live_catalogs()),
                                 media_type="text/plain; version=0.0.4")

    # Catalogs ---------------------------------------------------------------------------------------

    @app.get("/v1/catalogs")
    def list_catalogs() -> dict[str, Any]:
        return {"catalogs": [_definition_json(definition) for definition in manager.definitions()]}

    @app.post("/v1/catalogs", status_code=201)
    def create_catalog(body: NewCatalog, response: Response) -> dict[str, Any]:
        created = manager.create(body.name, body.properties, comment=body.comment)
        assert created is not None  # no IF NOT EXISTS here: an existing name raised AlreadyExistsError
        response.headers["ETag"] = _etag(created)
        return _definition_json(created)

    @app.get("/v1/catalogs/{catalog}")
    def get_catalog(catalog: str, response: Response) -> dict[str, Any]:
        definition = manager.store.get(catalog)
        response.headers["ETag"] = _etag(definition)
        return _definition_json(definition)

    @app.patch("/v1/catalogs/{catalog}")
    def alter_catalog(catalog: str, body: CatalogChange, response: Response,
                      if_match: str | None = Header(default=None)) -> dict[str, Any]:
        expected = _expected_version(if_match)
        if body.properties is None and body.rename is None:
            raise ConfigurationError("PATCH needs 'properties' and/or 'rename'")
        definition = manager.store.get(catalog)
        if body.rename is not None and manager.store.find(body.rename) is not None:
            # Refused before the properties are stored: a PATCH answered 409 must have changed nothing.
            raise AlreadyExistsError("catalog", body.rename.lower())
        if body.properties is not None:
            definition = manager.alter_properties(catalog, body.properties, expected_version=expected)
            expected = definition.version if expected is not None else None
        if body.rename is not None:
            definition = manager.rename(definition.name, body.rename, expected_version=expected)
        response.headers["ETag"] = _etag(definition)
        return _definition_json(definition)

    @app.delete("/v1/catalogs/{catalog}", status_code=204)
    def drop_catalog(catalog: str, if_match: str | None = Header(default=None)) -> Response:
        manager.drop(catalog, expected_version=_expected_version(if_match))
        return Response(status_code=204)

    # Browsing ---------------------------------------------------------------------------------------

    @app.get("/v1/catalogs/{catalog}/databases")
    def databases(catalog: str) -> dict[str, Any]:
        return {"databases": list(manager.catalog(catalog).database_names())}

    @app.get("/v1/catalogs/{catalog}/databases/{database}/tables")
    def tables(catalog: str, database: str, like: str | None = None) -> dict[str, Any]:
        names = manager.catalog(catalog).database(database).table_names()
        if like is not None:
            matcher = like_matcher(like)
            names = tuple(name for name in names if matcher.fullmatch(name))
        return {"tables": list(names)}

    @app.get("/v1/catalogs/{catalog}/databases/{database}/tables/{table}")
    def table(catalog: str, database: str, table: str) -> JSONResponse:
        live = manager.catalog(catalog)
        metadata = live.table(database, table).metadata  # the cached load, or one single-flight load
        with views_lock:
            view = views.get(metadata)
        if view is None:
            view = _table_view(live.name, database, table, metadata)
            with views_lock:
                views[metadata] = view
        return JSONResponse({**view, "version": live.database(database).table_version(table)})

    @app.post("/v1/catalogs/{catalog}/databases/{database}/tables/{table}/plan")
    def plan(catalog: str, database: str, table: str, body: PlanRequest) -> Response:
        live = manager.catalog(catalog)
        handle = live.table(database, table)
        aggregate = None if body.aggregate is None else AggregateRequest(
            tuple(AggregateFunction(f.function, f.column) for f in body.aggregate.functions))
        made = plan_table(live, handle, body.where, statistics=body.statistics or aggregate is not None, aggregate=aggregate)
        if body.columns is not None:
            known = {column.name.lower() for column in made.schema.columns}
            unknown = [name for name in body.columns if name.lower() not in known]
            if unknown:
                raise ConfigurationError(f"table {handle.full_name} has no column(s) {', '.join(unknown)}")
            made = replace(made, options={**made.options, "columns": ",".join(body.columns)})
        return Response(made.dumps(), media_type="application/json")

    # Freshness --------------------------------------------------------------------------------------

    @app.post("/v1/catalogs/{catalog}/refresh")
    def refresh(catalog: str, body: RefreshRequest) -> dict[str, Any]:
        if body.table is not None and body.database is None:
            raise ConfigurationError("refreshing a table needs its 'database' too")
        refreshed = manager.refresh(catalog, body.database, body.table)
        return {"catalog": refreshed.name, "database": body.database, "table": body.table,
                "version": refreshed.versions.current}

    @app.get("/v1/catalogs/{catalog}/cache")
    def cache(catalog: str) -> dict[str, Any]:
        return _result_json(session().execute(ast.ShowCache(catalog=catalog)))

    @app.get("/v1/catalogs/{catalog}/schema-cache")
    def schema_cache(catalog: str) -> dict[str, Any]:
        return _result_json(session().execute(ast.ShowSchemaCache(catalog=catalog)))

    @app.get("/v1/catalogs/{catalog}/changes")
    async def changes(catalog: str, since: int = 0, wait: float | None = None) -> dict[str, Any]:
        if wait is not None and not 0 <= wait <= MAX_WAIT_SECONDS:
            raise ConfigurationError(f"'wait' must be between 0 and {MAX_WAIT_SECONDS:g} seconds, got {wait:g}")
        deadline = time.monotonic() + (wait or 0.0)
        first = None
        while True:
            live = await anyio.to_thread.run_sync(manager.catalog, catalog, limiter=waiters)
            if first is None:
                first = live
            remaining = deadline - time.monotonic()
            log = await anyio.to_thread.run_sync(
                live.versions.wait_for_change, since, min(max(remaining, 0.0), _WAIT_SLICE), limiter=waiters
            )
            # A catalog rebuilt by ALTER (here or in another process) counts versions from 0 again: a
            # position taken before that says nothing now, so the client hears at once that it lost track.
            rebuilt = live is not first or since > log.current
            if rebuilt or log.changes or time.monotonic() >= deadline or stopping.is_set():
                break
            await asyncio.sleep(0)
        return {
            "current": log.current, "oldest": log.oldest, "truncated": log.truncated or rebuilt,
            "changes": [{"version": c.version, "kind": c.kind.value, "object": str(c.object), "source": c.source.value}
                        for c in log.changes],
        }

    # Statements -------------------------------------------------------------------------------------

    @app.post("/v1/statements")
    def statements(body: StatementRequest) -> dict[str, Any]:
        for companion in companions.values():  # SELECT's engine is chosen once: not before the companion is up
            companion.wait_ready(_COMPANION_WAIT_SECONDS)
        ran = session(body.catalog, body.database)
        try:
            outcomes = list(ran.run(body.sql))  # every statement in order; the answer is the last one's
        finally:
            keep_engines(ran)
        text, result = outcomes[-1] if outcomes else ("", Result())
        answer = _result_json(result)
        # The statement is echoed as JSON output shows it: secret property values masked.
        answer.update(statement=mask_text(text), catalog=ran.current_catalog, database=ran.current_database)
        if result.message:
            answer["message"] = result.message
        return answer

    return app


class _Gate:
    """Refuses requests without the bearer token (401)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in _OPEN_PATHS:
            header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            if not token_matches(header, self.token):
                refused = error_response(401, "Unauthorized", "a valid 'Authorization: Bearer <token>' header is required")
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


class _Measured:
    """Measures every request by route template, with the status it was answered with.

    Outside the body limit, which answers 413 itself (and drops what the application then answers), so
    those are counted as 413. Plain ASGI rather than Starlette's ``BaseHTTPMiddleware``, which costs a task
    group per request.
    """

    def __init__(self, app: ASGIApp, requests: RequestMetrics) -> None:
        self.app = app
        self.requests = requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status = 500

        async def noted(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, noted)
        finally:
            route = _route_of(scope["app"], scope) if "app" in scope else "other"
            self.requests.observe(scope["method"], route, status, time.perf_counter() - began)


class _BodyLimit:
    """413 for a request body over ``limit`` bytes, declared or streamed, before anything reads it."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._too_large(scope, receive, send, unread=int(declared))
            return
        received = 0
        refused = False

        async def counted() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                received += len(message.get("body", b""))
                if received > self.limit:
                    # Answer now: the application may turn the exception below into an answer of its own
                    # (a body it could not parse), which ``guarded`` then drops.
                    refused = True
                    more = bool(message.get("more_body", False))
                    await self._too_large(scope, receive, send, unread=_DRAIN_BYTES if more else 0)
                    raise _TooLarge
            return message

        async def guarded(message: Message) -> None:
            if not refused:
                await send(message)

        try:
            await self.app(scope, counted, guarded)
        except Exception:
            if not refused:
                raise

    async def _too_large(self, scope: Scope, receive: Receive, send: Send, *, unread: int) -> None:
        # Read (and drop) what the client is still sending, up to a bound, so that it reads the answer
        # instead of a connection reset by a server closing on unread bytes.
        drained = 0
        while 0 < unread <= _DRAIN_BYTES and drained <= _DRAIN_BYTES:
            message = await receive()
            drained += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        response = error_response(413, "PayloadTooLarge", f"the request body is over {self.limit} bytes")
        await response(scope, receive, send)


class _TooLarge(Exception):
    pass


def _close_all(engine_session: Session, manager: CatalogManager) -> None:
    try:
        engine_session.close()  # stops a SparkSession that SELECT started
    finally:
        manager.close()  # stops event followers, closes metastore connections


def _route_of(app: FastAPI, scope: Scope) -> str:
    """The route template a request matches (``/v1/catalogs/{catalog}``), so metrics do not grow per name."""
    for route in app.router.routes:
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return str(getattr(route, "path", "other"))
    return "other"


def _etag(definition: CatalogDefinition) -> str:
    return f'"{definition.version}"'


def _expected_version(if_match: str | None) -> int | None:
    if if_match is None or if_match.strip() == "*":
        return None
    value = if_match.strip().removeprefix("W/").strip('"')
    if not value.isdigit():
        raise ConfigurationError(f"If-Match must be a catalog version as its ETag gives it (\"3\"), got {if_match!r}")
    return int(value)


def _definition_json(definition: CatalogDefinition) -> dict[str, Any]:
    return {
        "name": definition.name, "type": definition.type, "comment": definition.comment, "id": definition.id,
        "version": definition.version, "created_at": definition.created_at, "updated_at": definition.updated_at,
        "properties": mask_properties(definition.properties),
    }


def _table_view(catalog: str, database: str, name: str, metadata: TableMetadata) -> dict[str, Any]:
    """The table as the API shows it, but its version (which moves without a reload)."""
    detection = metadata.detection
    schema = metadata.schema if detection.readable else None
    columns = [] if schema is None else [
        {"name": c.name, "type": c.source_type, "nullable": c.nullable, "partition_key": c.partition,
         "comment": c.comment}
        for c in schema.columns
    ]
    spark_schema = None
    if schema is not None:
        readable = [c for c in schema.columns if c.readable]
        spark_schema = schema.spark_schema([c.name for c in readable]).jsonValue()
        for field, column in zip(spark_schema["fields"], readable):
            _annotate_field_ids(field, column.type, column.field_id)
    return {
        "catalog": catalog, "database": database.lower(), "name": name.lower(),
        "format": detection.format.value, "file_format": detection.file_format, "reason": detection.reason,
        "location": detection.location, "partition_keys": metadata.partition_key_names,
        "columns": columns, "spark_schema": spark_schema, "spark_provider": detection.spark_provider,
        "storage": _storage_view(metadata),
    }


def _annotate_field_ids(field: dict[str, Any], kind: Any, field_id: int | None) -> None:
    """Iceberg's field ids on a Spark JSON field, as Spark's Parquet reader matches them (``parquet.field.id``),
    so renamed columns are read by id, not by name; nested struct fields too."""
    if field_id is not None:
        field.setdefault("metadata", {})["parquet.field.id"] = field_id
    _annotate_type(field["type"], kind)


def _annotate_type(spark_type: Any, kind: Any) -> None:
    if isinstance(kind, canonical.StructType) and isinstance(spark_type, dict) and spark_type.get("type") == "struct":
        for inner, member in zip(spark_type["fields"], kind.fields):
            _annotate_field_ids(inner, member.type, member.field_id)
    elif isinstance(kind, canonical.ArrayType) and isinstance(spark_type, dict) and spark_type.get("type") == "array":
        _annotate_type(spark_type["elementType"], kind.element)
    elif isinstance(kind, canonical.MapType) and isinstance(spark_type, dict) and spark_type.get("type") == "map":
        _annotate_type(spark_type["keyType"], kind.key)
        _annotate_type(spark_type["valueType"], kind.value)


def _storage_view(metadata: TableMetadata) -> dict[str, Any]:
    """What Hive's own readers need of a table's storage: input format, serde and their parameters."""
    sd = metadata.table.sd
    serde = sd.serdeInfo if sd is not None else None
    return {
        "input_format": sd.inputFormat if sd is not None else None,
        "output_format": sd.outputFormat if sd is not None else None,
        "serde": serde.serializationLib if serde is not None else None,
        "serde_parameters": dict(serde.parameters or {}) if serde is not None else {},
        "table_parameters": mask_properties(dict(metadata.table.parameters or {})),
    }


def _result_json(result: Result) -> dict[str, Any]:
    return {"columns": list(result.columns), "rows": [[encode_value(value) for value in row] for row in result.rows]}


def _describe_validation(error: RequestValidationError) -> str:
    problems = []
    for problem in error.errors():
        if problem.get("type") == "json_invalid":
            reason = (problem.get("ctx") or {}).get("error", "")
            return f"the request body is not valid JSON{': ' + str(reason) if reason else ''}"
        where = ".".join(str(part) for part in problem.get("loc", ()) if part != "body") or "body"
        problems.append(f"{where}: {problem.get('msg', 'invalid')}")
    return "bad request: " + "; ".join(problems)
