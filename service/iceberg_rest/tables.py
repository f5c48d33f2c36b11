"""Tables: a namespace's Iceberg tables (Hive, Hudi tables and views are neither listed nor loaded).

Loads answer from the catalog's warm cache (the table's ``metadata_location``) and a metadata file parsed
once; creates, drops, renames and registers go through pyiceberg's HiveCatalog as catalog events. A staged
create (``stage-create``) writes and registers nothing: the answer's metadata is what the client builds its
create transaction on, and its commit (``assert-create``, :mod:`.commits`) creates the table.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Query, Request, Response
from pydantic import BaseModel

from hms_catalog.cache.versions import CatalogObject, ChangeKind
from hms_catalog.ddl.iceberg_v3 import fresh_metadata, refuse_unreadable
from hms_catalog.ddl.locations import delete_remaining
from hms_catalog.formats.detect import TableFormat, TableKind
from service.iceberg_rest.context import IcebergContext, namespace_of
from service.iceberg_rest.credentials import Delegation, Vended, vend
from service.iceberg_rest.errors import IcebergError, IcebergRoute
from service.routes._common import Who

__all__ = ["Payload", "RenameRequest", "json_answer", "router", "single", "table_answer"]

Payload = Annotated[dict[str, Any], Body()]  # a JSON object, validated with pyiceberg's own request models


class _Identifier(BaseModel):
    namespace: list[str]
    name: str


class RenameRequest(BaseModel):
    source: _Identifier
    destination: _Identifier


def json_answer(model: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A pyiceberg model as the spec spells it (its aliases, no nulls)."""
    return Response(model.model_dump_json(), status_code=status, media_type="application/json", headers=headers)


def _make_folders(catalog: Any, location: str) -> None:
    """A new table's ``metadata/`` and ``data/`` folders, on a filesystem that has folders: writers that put files
    straight into them (DuckDB) do not make them first. Object stores have no folders to make."""
    from hms_catalog.storage.files import make_folder

    if catalog.storage.is_object_store(location):
        return
    for folder in ("metadata", "data"):
        make_folder(catalog.storage, f"{location.rstrip('/')}/{folder}")


def etag_of(metadata_location: str) -> str:
    return '"' + hashlib.sha256(metadata_location.encode("utf-8")).hexdigest()[:32] + '"'


def table_answer(metadata_location: str | None, metadata: Any, status: int = 200, vended: Vended | None = None) -> Response:
    """A LoadTableResult: the metadata file's location, its content, and the credentials vended (:mod:`.credentials`;
    none unless the client asked and the catalog vends them)."""
    from pyiceberg.catalog.rest import TableResponse

    vended = vended or Vended()
    answer = TableResponse(**{"metadata-location": metadata_location, "metadata": metadata, "config": vended.config,
                              "storage-credentials": vended.storage_credentials})
    headers = {"ETag": etag_of(metadata_location)} if metadata_location else {}
    return json_answer(answer, status, {**headers, **vended.headers})


def single(identifier: _Identifier) -> tuple[str, str]:
    """The (database, name) of a rename's identifier: single-level namespaces only."""
    if len(identifier.namespace) != 1:
        raise IcebergError(404, "NoSuchNamespaceException", f"namespace {identifier.namespace} does not exist: a "
                                                            "metastore's namespaces are single-level")
    return identifier.namespace[0].lower(), identifier.name.lower()


def _is_iceberg_table(metadata: Any) -> bool:
    return metadata.detection.format is TableFormat.ICEBERG and metadata.detection.kind is TableKind.TABLE


def router(context: IcebergContext) -> APIRouter:
    routes = APIRouter(prefix="/iceberg/v1/{prefix}", route_class=IcebergRoute, tags=["iceberg"], include_in_schema=False)

    @routes.get("/namespaces/{namespace}/tables")
    def list_tables(prefix: str, namespace: str, principal: Who,
                    page_token: Annotated[str | None, Query(alias="pageToken")] = None,
                    page_size: Annotated[int | None, Query(alias="pageSize", ge=1)] = None) -> dict[str, Any]:
        catalog = context.catalog(prefix)
        context.read(principal, catalog)
        return context.listed(catalog, namespace_of(namespace), _is_iceberg_table, page_token, page_size)

    @routes.post("/namespaces/{namespace}/tables")
    def create_table(prefix: str, namespace: str, payload: Payload, request: Request, principal: Who,
                     delegation: Delegation = None) -> Response:
        from pyiceberg.catalog.rest import CreateTableRequest
        from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
        from pyiceberg.table.sorting import UNSORTED_SORT_ORDER

        catalog = context.catalog(prefix)
        database = namespace_of(namespace)
        refuse_unreadable(payload.get("schema"), f"table {database}.{payload.get('name', '')}")  # before pyiceberg parses it
        body = CreateTableRequest.model_validate({"location": None, "partition-spec": None, "write-order": None, **payload})
        table = body.name.lower()
        hive = context.hive(catalog)
        spec = body.partition_spec or UNPARTITIONED_PARTITION_SPEC
        order = body.write_order or UNSORTED_SORT_ORDER
        if body.stage_create:  # it makes folders and no catalog change (only a writer's commit finishes it): gated, audited
            with context.audited(request, principal, catalog, "CREATE TABLE", f"stage Iceberg table {database}.{table}"):
                context.database_exists(catalog, database)
                location = hive._resolve_table_location(body.location, database, table)  # the HiveCatalog's default place
                metadata = fresh_metadata(body.table_schema, spec, order, location, body.properties)
                _make_folders(catalog, location)
            return table_answer(None, metadata, vended=vend(context, request, principal, catalog, location, delegation))
        with context.changing(request, principal, catalog, "CREATE TABLE", f"create Iceberg table {database}.{table}",
                              [(database, table)], [("CREATE_TABLE", database, table, 1)]) as changes:
            context.database_exists(catalog, database)
            created = hive.create_table((database, table), schema=body.table_schema, location=body.location,
                                        partition_spec=spec, sort_order=order, properties=body.properties)
            changes.append((ChangeKind.ADDED, CatalogObject.for_table(database, table)))
        _make_folders(catalog, created.location())
        vended = vend(context, request, principal, catalog, created.location(), delegation)
        return table_answer(created.metadata_location, created.metadata, vended=vended)

    @routes.get("/namespaces/{namespace}/tables/{table}")
    def load_table(prefix: str, namespace: str, table: str, principal: Who, request: Request,
                   if_none_match: Annotated[str | None, Header()] = None, delegation: Delegation = None) -> Response:
        catalog = context.catalog(prefix)
        context.read(principal, catalog)
        location = context.metadata_location(catalog, namespace_of(namespace), table.lower())
        if if_none_match is not None and etag_of(location) in [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]:
            return Response(status_code=304, headers={"ETag": etag_of(location)})
        metadata = context.read_metadata(catalog, location)
        return table_answer(location, metadata, vended=vend(context, request, principal, catalog, metadata.location, delegation))

    @routes.head("/namespaces/{namespace}/tables/{table}", status_code=204)
    def table_exists(prefix: str, namespace: str, table: str, principal: Who) -> Response:
        catalog = context.catalog(prefix)
        context.read(principal, catalog)
        context.metadata_location(catalog, namespace_of(namespace), table.lower())
        return Response(status_code=204)

    @routes.delete("/namespaces/{namespace}/tables/{table}", status_code=204)
    def drop_table(prefix: str, namespace: str, table: str, principal: Who, request: Request,
                   purge: Annotated[bool, Query(alias="purgeRequested")] = False) -> Response:
        catalog = context.catalog(prefix)
        database, name = namespace_of(namespace), table.lower()
        summary = f"drop Iceberg table {database}.{name}" + (" with purge" if purge else "")
        with context.changing(request, principal, catalog, "DROP TABLE", summary, [(database, name)],
                              [("DROP_TABLE", database, name, 1)]) as changes:
            context.metadata_location(catalog, database, name)
            location = context.hive(catalog).load_table((database, name)).location()
            context.hive(catalog).drop_table((database, name))
            changes.append((ChangeKind.DROPPED, CatalogObject.for_table(database, name)))
        if purge:  # every file under the table's location, once the drop is recorded (as DROP TABLE ... PURGE does)
            left = delete_remaining(location, catalog.storage)
            if left:
                raise IcebergError(500, "ServiceFailureException", f"table '{database}.{name}' was dropped, but files "
                                                                   f"of it remain under {location} (e.g. {', '.join(left)})")
        return Response(status_code=204)

    @routes.post("/tables/rename", status_code=204)
    def rename_table(prefix: str, body: RenameRequest, principal: Who, request: Request) -> Response:
        catalog = context.catalog(prefix)
        (database, name), (new_database, new_name) = single(body.source), single(body.destination)
        summary = f"rename Iceberg table {database}.{name} to {new_database}.{new_name}"
        with context.changing(request, principal, catalog, "RENAME TABLE", summary, [(database, name), (new_database, new_name)],
                              [("ALTER_TABLE", database, name, 1)]) as changes:
            context.metadata_location(catalog, database, name)
            context.database_exists(catalog, new_database)
            if new_name in catalog.client.get_all_tables(new_database):
                raise IcebergError(409, "AlreadyExistsException", f"table '{new_database}.{new_name}' already exists")
            context.hive(catalog).rename_table((database, name), (new_database, new_name))
            changes += [(ChangeKind.DROPPED, CatalogObject.for_table(database, name)),
                        (ChangeKind.ADDED, CatalogObject.for_table(new_database, new_name))]
        return Response(status_code=204)

    @routes.post("/namespaces/{namespace}/register")
    def register_table(prefix: str, namespace: str, payload: Payload, request: Request, principal: Who) -> Response:
        from pyiceberg.catalog.rest import RegisterTableRequest

        catalog = context.catalog(prefix)
        database = namespace_of(namespace)
        body = RegisterTableRequest.model_validate({"overwrite": False, **payload})  # optional in the spec
        name = body.name.lower()
        if body.overwrite:
            raise IcebergError(406, "UnsupportedOperationException", "register with overwrite is not supported: drop the "
                                                                     "table first, or commit to it")
        with context.changing(request, principal, catalog, "REGISTER TABLE", f"register {database}.{name} at "
                              f"{body.metadata_location}", [(database, name)], [("CREATE_TABLE", database, name, 1)]) as changes:
            context.database_exists(catalog, database)
            registered = context.hive(catalog).register_table((database, name), body.metadata_location)
            changes.append((ChangeKind.ADDED, CatalogObject.for_table(database, name)))
        return table_answer(registered.metadata_location, registered.metadata)

    @routes.post("/namespaces/{namespace}/tables/{table}/metrics", status_code=204)
    def report_metrics(prefix: str, namespace: str, table: str, principal: Who) -> Response:
        catalog = context.catalog(prefix)
        context.read(principal, catalog)
        context.metadata_location(catalog, namespace_of(namespace), table.lower())
        return Response(status_code=204)  # accepted, as the spec asks; not kept

    return routes

