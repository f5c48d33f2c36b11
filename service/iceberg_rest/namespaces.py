"""Namespaces: a metastore's databases, single-level.

Properties are the database's parameters, with ``location`` (its location URI) and ``comment`` (its
description) beside them, as pyiceberg's HiveCatalog shows them. A namespace with tables is not dropped
(409 ``NamespaceNotEmptyException``), whichever kind its tables are.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field

from hms_catalog.cache.versions import CatalogObject, ChangeKind
from hms_catalog.client.writes import MetastoreWrites
from hms_catalog.errors import AlreadyExistsError
from service.iceberg_rest.context import NAMESPACE_SEPARATOR, IcebergContext, namespace_of
from service.iceberg_rest.errors import IcebergError, IcebergRoute
from service.paging import page
from service.routes._common import Who

__all__ = ["router"]

_LOCATION, _COMMENT = "location", "comment"


class CreateNamespace(BaseModel):
    namespace: list[str]
    properties: dict[str, str] = Field(default_factory=dict)


class UpdateProperties(BaseModel):
    removals: list[str] = Field(default_factory=list)
    updates: dict[str, str] = Field(default_factory=dict)


def _properties(database: Any) -> dict[str, str]:
    shown = dict(database.parameters or {})
    if database.locationUri:
        shown[_LOCATION] = database.locationUri
    if database.description:
        shown[_COMMENT] = database.description
    return shown


def router(context: IcebergContext) -> APIRouter:
    routes = APIRouter(prefix="/iceberg/v1/{prefix}/namespaces", route_class=IcebergRoute, tags=["iceberg"], include_in_schema=False)

    @routes.get("")
    def list_namespaces(prefix: str, principal: Who, parent: str | None = None,
                        page_token: Annotated[str | None, Query(alias="pageToken")] = None,
                        page_size: Annotated[int | None, Query(alias="pageSize", ge=1)] = None) -> dict[str, Any]:
        catalog = context.catalog(prefix)
        context.read(principal, catalog)
        if parent:
            context.database_exists(catalog, namespace_of(parent.split(NAMESPACE_SEPARATOR)[0]))
            return {"namespaces": []}  # single-level: no namespace has children
        names, token = page(list(catalog.database_names()), page_token, page_size, token_name="pageToken")
        return {"namespaces": [[name] for name in names], "next-page-token": token}

    @routes.post("")
    def create_namespace(prefix: str, body: CreateNamespace, principal: Who, request: Request) -> dict[str, Any]:
        catalog = context.catalog(prefix)
        if len(body.namespace) != 1 or not body.namespace[0]:
            raise IcebergError(400, "BadRequestException", f"namespace {body.namespace} is not single-level: a metastore's "
                                                           "namespaces are its databases")
        name = body.namespace[0].lower()
        from hms_catalog.client.hive_thrift import ttypes

        properties = dict(body.properties)
        struct = ttypes.Database(name=name, description=properties.pop(_COMMENT, ""), locationUri=properties.pop(_LOCATION, None),
                                 parameters=properties)
        with context.changing(request, principal, catalog, "CREATE NAMESPACE", f"create namespace {name}",
                              [(name, "")], [("CREATE_DATABASE", name, "", 1)]) as changes:
            try:
                _writes(catalog).create_database(struct)
            except AlreadyExistsError:
                raise IcebergError(409, "AlreadyExistsException", f"namespace '{name}' already exists in catalog "
                                                                  f"'{catalog.name}'") from None
            changes.append((ChangeKind.ADDED, CatalogObject.for_database(name)))
        return {"namespace": [name], "properties": _properties(catalog.client.get_database(name))}

    @routes.get("/{namespace}")
    def load_namespace(prefix: str, namespace: str, principal: Who) -> dict[str, Any]:
        catalog = context.catalog(prefix)
        context.read(principal, catalog)
        name = namespace_of(namespace)
        context.database_exists(catalog, name)
        return {"namespace": [name], "properties": _properties(catalog.database(name).definition)}

    @routes.head("/{namespace}", status_code=204)
    def namespace_exists(prefix: str, namespace: str, principal: Who) -> Response:
        catalog = context.catalog(prefix)
        context.read(principal, catalog)
        context.database_exists(catalog, namespace_of(namespace))
        return Response(status_code=204)

    @routes.delete("/{namespace}", status_code=204)
    def drop_namespace(prefix: str, namespace: str, principal: Who, request: Request) -> Response:
        catalog = context.catalog(prefix)
        name = namespace_of(namespace)
        with context.changing(request, principal, catalog, "DROP NAMESPACE", f"drop namespace {name}",
                              [(name, "")], [("DROP_DATABASE", name, "", 1)]) as changes:
            context.database_exists(catalog, name)
            tables = catalog.client.get_all_tables(name)
            if tables:
                raise IcebergError(409, "NamespaceNotEmptyException", f"namespace '{name}' is not empty: it has "
                                                                      f"{len(tables)} table(s); drop them first")
            _writes(catalog).drop_database(name, delete_data=False, cascade=False)
            changes.append((ChangeKind.DROPPED, CatalogObject.for_database(name)))
        return Response(status_code=204)

    @routes.post("/{namespace}/properties")
    def update_properties(prefix: str, namespace: str, body: UpdateProperties, principal: Who,
                          request: Request) -> dict[str, Any]:
        catalog = context.catalog(prefix)
        name = namespace_of(namespace)
        both = sorted(set(body.removals) & set(body.updates))
        if both:
            raise IcebergError(422, "UnprocessableEntityException", f"properties both set and removed: {', '.join(both)}")
        summary = f"namespace {name} properties: set {sorted(body.updates)}, removed {sorted(body.removals)}"
        with context.changing(request, principal, catalog, "ALTER NAMESPACE", summary,
                              [(name, "")], [("ALTER_DATABASE", name, "", 1)]) as changes:
            context.database_exists(catalog, name)
            before = catalog.client.get_database(name)
            current = copy.copy(before)  # its fields are replaced below, never changed in place
            parameters = dict(current.parameters or {})
            missing = [key for key in body.removals if key not in parameters and key not in (_LOCATION, _COMMENT)]
            removed = [key for key in body.removals if key not in missing]
            for key in removed:
                parameters.pop(key, None)
                if key == _COMMENT:
                    current.description = ""
            updates = dict(body.updates)
            if _LOCATION in updates:
                current.locationUri = updates.pop(_LOCATION)
            if _COMMENT in updates:
                current.description = updates.pop(_COMMENT)
            current.parameters = {**parameters, **updates}
            _writes(catalog).alter_database(name, current, before=before)
            changes.append((ChangeKind.CHANGED, CatalogObject.for_database(name)))
        return {"updated": sorted(body.updates), "removed": removed, "missing": missing}

    return routes


def _writes(catalog: Any) -> MetastoreWrites:
    client = catalog.client
    assert isinstance(client, MetastoreWrites), "IcebergContext.catalog serves hms catalogs only"
    return client
