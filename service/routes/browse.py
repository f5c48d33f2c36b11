"""Reading the catalog: databases, a database, tables, a table's view and version, its split plan, and what is cached."""

from __future__ import annotations

import itertools
from typing import Any

from fastapi import APIRouter, Response
from starlette.responses import JSONResponse, StreamingResponse

from hms_catalog.errors import ConfigurationError
from hms_catalog.execution.browse_commands import like_matcher
from hms_catalog.properties import mask_properties
from hms_catalog.sql import ast
from planner.aggregates import AggregateFunction, AggregateRequest
from planner.core import plan_table_stream
from planner.plan_json import plan_json_pieces
from service.bodies import PlanRequest
from service.routes._common import Acting
from service.routes._route import ServiceRoute
from service.state import ServiceState
from service.views import result_json

__all__ = ["router"]


def router(state: ServiceState) -> APIRouter:
    routes = APIRouter(route_class=ServiceRoute)

    @routes.get("/v1/catalogs/{catalog}/databases")
    def databases(catalog: str, who: Acting) -> dict[str, Any]:
        return {"databases": list(state.reading(who, catalog).database_names())}

    @routes.get("/v1/catalogs/{catalog}/databases/{database}")
    def database(catalog: str, database: str, who: Acting) -> dict[str, Any]:
        """The database as the metastore keeps it (what CREATE and ALTER DATABASE set), secrets masked."""
        live = state.reading(who, catalog)
        found = live.database(database).definition
        return {"catalog": live.name, "name": found.name, "comment": found.description or "", "location": found.locationUri,
                "properties": mask_properties(dict(found.parameters or {}))}

    @routes.get("/v1/catalogs/{catalog}/databases/{database}/tables")
    def tables(catalog: str, database: str, who: Acting, like: str | None = None) -> dict[str, Any]:
        names = state.reading(who, catalog).database(database).table_names()
        if like is not None:
            matcher = like_matcher(like)
            names = tuple(name for name in names if matcher.fullmatch(name))
        return {"tables": list(names)}

    @routes.get("/v1/catalogs/{catalog}/databases/{database}/tables/{table}")
    def table(catalog: str, database: str, table: str, who: Acting) -> JSONResponse:
        """The table's view; its ``version`` is what ``If-Match`` on a PATCH of the table may expect."""
        live = state.reading(who, catalog)
        metadata = live.table(database, table).metadata  # the cached load, or one single-flight load
        view = state.views.get(live.name, database, table, metadata)
        return JSONResponse({**view, "version": live.database(database).table_version(table)})

    @routes.post("/v1/catalogs/{catalog}/databases/{database}/tables/{table}/plan")
    def plan(catalog: str, database: str, table: str, body: PlanRequest, who: Acting) -> Response:
        """The split plan, streamed: the text ``SplitPlan.dumps`` writes, sent chunked as the splits are cut (a
        batch of partitions at a time), so neither the splits nor the text of a plan of half a million partitions
        is held whole. What is refused before any split (too many partitions, a table that cannot be read) and a
        failure of the first batch are the usual error answers; a failure after the answer has begun cuts it short
        (no final chunk), which every HTTP client reports as an incomplete answer."""
        live = state.reading(who, catalog, "the plan")
        handle = live.table(database, table)
        aggregate = None if body.aggregate is None else AggregateRequest(
            tuple(AggregateFunction(f.function, f.column) for f in body.aggregate.functions))
        stream = plan_table_stream(live, handle, body.where, statistics=body.statistics or aggregate is not None,
                                   aggregate=aggregate)
        if body.columns is not None:
            known = {column.name.lower() for column in stream.header.schema.columns}
            unknown = [name for name in body.columns if name.lower() not in known]
            if unknown:
                raise ConfigurationError(f"table {handle.full_name} has no column(s) {', '.join(unknown)}")
            stream.with_options(columns=",".join(body.columns))
        pieces = plan_json_pieces(stream)
        first = next(pieces)  # the first batch planned here: its failure is an error answer, not a cut stream
        return StreamingResponse(itertools.chain((first,), pieces), media_type="application/json")

    @routes.get("/v1/catalogs/{catalog}/cache")
    def cache(catalog: str, who: Acting) -> dict[str, Any]:
        """SHOW CACHE's rows, and its message (the memory budget and what every catalog's caches hold)."""
        result = state.session(who).execute(ast.ShowCache(catalog=catalog))
        return {**result_json(result), "message": result.message}

    @routes.get("/v1/catalogs/{catalog}/schema-cache")
    def schema_cache(catalog: str, who: Acting) -> dict[str, Any]:
        return result_json(state.session(who).execute(ast.ShowSchemaCache(catalog=catalog)))

    return routes
