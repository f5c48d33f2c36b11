"""The Iceberg REST catalog's routes at ``/iceberg``: the config, the OAuth exchange, and the resources.

``GET /iceberg/v1/config?warehouse=<catalog>`` answers the catalog as the ``prefix`` every other route
starts with, and the endpoints served (the view endpoints included: :mod:`.views`; scan planning:
:mod:`.scan_planning`).
"""

from __future__ import annotations

import urllib.parse
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request, Response
from starlette.responses import JSONResponse

from service.iceberg_rest import commits, credentials, namespaces, scan_planning, tables, views
from service.iceberg_rest.auth import IssuedTokens, OAuthError, exchange
from service.iceberg_rest.context import IcebergContext
from service.iceberg_rest.errors import IcebergError, IcebergRoute
from service.middleware import TOKEN_EXCHANGE
from service.routes._common import Who
from service.state import ServiceState

__all__ = ["ENDPOINTS", "router"]

ENDPOINTS = tuple(f"{method} /v1/{{prefix}}/{path}" for method, path in (
    ("GET", "namespaces"), ("POST", "namespaces"), ("GET", "namespaces/{namespace}"), ("HEAD", "namespaces/{namespace}"),
    ("DELETE", "namespaces/{namespace}"), ("POST", "namespaces/{namespace}/properties"),
    ("GET", "namespaces/{namespace}/tables"), ("POST", "namespaces/{namespace}/tables"),
    ("GET", "namespaces/{namespace}/tables/{table}"), ("HEAD", "namespaces/{namespace}/tables/{table}"),
    ("POST", "namespaces/{namespace}/tables/{table}"), ("DELETE", "namespaces/{namespace}/tables/{table}"),
    ("GET", "namespaces/{namespace}/tables/{table}/credentials"),
    ("POST", "namespaces/{namespace}/register"), ("POST", "namespaces/{namespace}/tables/{table}/metrics"),
    ("POST", "tables/rename"), ("POST", "transactions/commit"),
    ("GET", "namespaces/{namespace}/views"), ("POST", "namespaces/{namespace}/views"),
    ("GET", "namespaces/{namespace}/views/{view}"), ("HEAD", "namespaces/{namespace}/views/{view}"),
    ("POST", "namespaces/{namespace}/views/{view}"), ("DELETE", "namespaces/{namespace}/views/{view}"),
    ("POST", "views/rename"), ("POST", "namespaces/{namespace}/register-view"),
    *scan_planning.ENDPOINTS,
))


def router(state: ServiceState) -> APIRouter:
    context = IcebergContext(state)
    routes = APIRouter(route_class=IcebergRoute, tags=["iceberg"], include_in_schema=False)

    @routes.get("/iceberg/v1/config")
    def config(principal: Who, warehouse: str | None = None) -> dict[str, Any]:
        if not warehouse:
            names = [definition.name for definition in state.manager.store.list()]
            if len(names) != 1:
                raise IcebergError(400, "BadRequestException", "name the catalog to serve as the warehouse: "
                                                               "GET /iceberg/v1/config?warehouse=<catalog>")
            warehouse = names[0]
        catalog = context.catalog(warehouse)
        context.read(principal, catalog)
        return {"defaults": {}, "overrides": {"prefix": catalog.name}, "endpoints": list(ENDPOINTS)}

    @routes.post("/iceberg/v1/oauth/tokens", response_model=None)
    async def oauth_tokens(request: Request, authorization: Annotated[str | None, Header()] = None) -> Response:
        # The form is parsed here (application/x-www-form-urlencoded): FastAPI's Form needs python-multipart.
        found = request.scope.get(TOKEN_EXCHANGE)
        assert found is not None, "the gate hands the exchange its token tables"
        issued: IssuedTokens = found
        fields = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), keep_blank_values=True)
        form = {key: values[-1] for key, values in fields.items()}
        try:
            return JSONResponse(exchange(form, authorization, issued))
        except OAuthError as error:
            return JSONResponse({"error": error.code, "error_description": error.description}, status_code=error.status)

    routes.include_router(namespaces.router(context))
    routes.include_router(tables.router(context))
    routes.include_router(credentials.router(context))
    routes.include_router(commits.router(context))
    routes.include_router(views.router(context))
    routes.include_router(scan_planning.router(context))

    @routes.api_route("/iceberg/{rest:path}", methods=["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"], include_in_schema=False)
    def unknown(rest: str, request: Request, principal: Who) -> Response:
        """Last of all: a route the protocol here does not have, in the spec's error model too."""
        raise IcebergError(404, "NotFoundException", f"{request.method} {request.url.path} is not an endpoint of this "
                                                     "Iceberg REST catalog (the config's endpoints list those served)")

    return routes
