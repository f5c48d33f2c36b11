"""Catalog definitions: listed and shown to every token; created, altered and dropped with the admin token
only, each change audited, with compare-and-set on the definition's version (``If-Match``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Header, Request, Response

from hms_catalog.errors import AlreadyExistsError, ConfigurationError
from service.access import Access
from service.bodies import CatalogChange, NewCatalog
from service.routes._common import Acting, expected_version, rest_statement
from service.routes._route import ServiceRoute
from service.state import ServiceState
from service.views import definition_json, etag

__all__ = ["router"]

_IF_MATCH = "a catalog version as its ETag gives it"


def router(state: ServiceState) -> APIRouter:
    routes = APIRouter(route_class=ServiceRoute)
    manager = state.manager

    @contextlib.contextmanager
    def definition_change(who: Acting, request: Request, body: NewCatalog | CatalogChange | None, title: str,
                          *names: str) -> Iterator[None]:
        """Refused unless ``who`` is the admin; audited either way, with the definition's version before and after."""
        def version() -> int | None:
            found = next((each for each in map(manager.store.find, names) if each is not None), None)
            return None if found is None else found.version

        with state.gate.admitted(who, names[0].lower(), rest_statement(request, body), title, need=Access.ADMIN,
                                 version=version):
            yield

    @routes.get("/v1/catalogs")
    def list_catalogs(who: Acting) -> dict[str, Any]:
        """The catalogs the token may read: those its entry lists, or every one."""
        return {"catalogs": [definition_json(definition) for definition in manager.definitions() if who.may_read(definition.name)]}

    @routes.post("/v1/catalogs", status_code=201)
    def create_catalog(body: NewCatalog, response: Response, request: Request, who: Acting) -> dict[str, Any]:
        with definition_change(who, request, body, "CREATE CATALOG", body.name):
            created = manager.create(body.name, body.properties, comment=body.comment)
        assert created is not None  # no IF NOT EXISTS here: an existing name raised AlreadyExistsError
        response.headers["ETag"] = etag(created)
        return definition_json(created)

    @routes.get("/v1/catalogs/{catalog}")
    def get_catalog(catalog: str, response: Response, who: Acting) -> dict[str, Any]:
        definition = manager.store.get(catalog)
        who.check(Access.READ, definition.name, "reading the catalog's definition")
        response.headers["ETag"] = etag(definition)
        return definition_json(definition)

    @routes.patch("/v1/catalogs/{catalog}")
    def alter_catalog(catalog: str, body: CatalogChange, response: Response, request: Request, who: Acting,
                      if_match: str | None = Header(default=None)) -> dict[str, Any]:
        with definition_change(who, request, body, "ALTER CATALOG", catalog, *([body.rename] if body.rename else [])):
            expected = expected_version(if_match, _IF_MATCH)
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
        response.headers["ETag"] = etag(definition)
        return definition_json(definition)

    @routes.delete("/v1/catalogs/{catalog}", status_code=204)
    def drop_catalog(catalog: str, request: Request, who: Acting, if_match: str | None = Header(default=None)) -> Response:
        with definition_change(who, request, None, "DROP CATALOG", catalog):
            manager.drop(catalog, expected_version=expected_version(if_match, _IF_MATCH))
        return Response(status_code=204)

    return routes
