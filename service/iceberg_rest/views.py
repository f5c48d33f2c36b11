"""Views: Iceberg views stored in the metastore as Iceberg's Java ``HiveViewOperations`` stores them.

A view is a metastore table of type ``VIRTUAL_VIEW`` with ``table_type=ICEBERG-VIEW``, ``metadata_location``
(and ``previous_metadata_location``) naming its view metadata file, written under the view's location (by
default the namespace's location and the view's name), and the SQL of its current version (the ``hive``
dialect's, else the first) as the Hive view text. Another replica, a restarted service and Iceberg's own
``HiveCatalog`` on the same metastore see it. The catalog detects it as a view, so it is never listed or loaded
as a table; only these views are listed here (a Hive view is not an Iceberg view: 404).

A replace (``POST .../views/{view}``) holds the metastore's lock on the view, as ``HiveViewOperations`` does:
it reads the current metadata, checks ``assert-view-uuid`` (409 ``CommitFailedException``), applies the
updates (:mod:`.view_metadata`), writes a new metadata file and swaps ``metadata_location``.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import time
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from hms_catalog.cache.versions import CatalogObject, ChangeKind
from hms_catalog.errors import AlreadyExistsError, NotFoundError
from hms_catalog.formats.detect import TableKind
from hms_catalog.model import ExternalCatalog
from service.iceberg_rest.context import IcebergContext, namespace_of
from service.iceberg_rest.errors import IcebergError, IcebergRoute
from service.iceberg_rest.tables import Payload, RenameRequest, json_answer, single
from service.iceberg_rest.view_metadata import (
    apply_view_updates,
    check_view_requirements,
    metadata_file_for,
    new_view_metadata,
    read_view_metadata,
    write_view_metadata,
)
from service.routes._common import Who

__all__ = ["ICEBERG_VIEW", "is_iceberg_view", "router"]

_log = logging.getLogger(__name__)

ICEBERG_VIEW = "ICEBERG-VIEW"  # HiveOperationsBase.ICEBERG_VIEW_TYPE_VALUE, upper-cased as Java stores it
_VIRTUAL_VIEW = "VIRTUAL_VIEW"


def is_iceberg_view(table_type: str | None, parameters: dict[str, str] | None) -> bool:
    return (table_type or "").upper() == _VIRTUAL_VIEW and (parameters or {}).get("table_type", "").upper() == ICEBERG_VIEW


def _no_view(catalog: ExternalCatalog, database: str, name: str) -> IcebergError:
    return IcebergError(404, "NoSuchViewException", f"view '{database}.{name}' does not exist in catalog '{catalog.name}'")


def _view_location(context: IcebergContext, catalog: ExternalCatalog, database: str, name: str) -> str:
    """The metadata file of an Iceberg view (from the catalog's cache); 404 for anything else."""
    context.database_exists(catalog, database)
    try:
        detection = catalog.table(database, name).detection
    except NotFoundError:
        raise _no_view(catalog, database, name) from None
    location = detection.parameters.get("metadata_location")
    if detection.kind is not TableKind.VIEW or detection.parameters.get("table_type", "").upper() != ICEBERG_VIEW or not location:
        raise _no_view(catalog, database, name)
    return location


def _sql(metadata: Any) -> str | None:
    current = next(v for v in metadata.versions if v.version_id == metadata.current_version_id)
    sqls = [(r.root.dialect.lower(), r.root.sql) for r in current.representations]
    return next((sql for dialect, sql in sqls if dialect == "hive"), sqls[0][1] if sqls else None)


def _hive_view(database: str, name: str, metadata: Any, location: str, previous: str | None, base: Any = None) -> Any:
    """The metastore's record of a view, as HiveViewOperations writes it (a new one, or ``base`` updated)."""
    from pyiceberg.catalog.hive import SchemaToHiveConverter
    from pyiceberg.schema import visit

    from hms_catalog.client.hive_thrift import ttypes

    now = int(time.time())
    table = copy.deepcopy(base) if base is not None else ttypes.Table(
        tableName=name, dbName=database, owner="hms-catalog", createTime=now, lastAccessTime=now, retention=2**31 - 1,
        partitionKeys=[], parameters={}, tableType=_VIRTUAL_VIEW)
    schema = next(s for s in metadata.schemas if s.schema_id == next(
        v.schema_id for v in metadata.versions if v.version_id == metadata.current_version_id))
    table.sd = ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema(f.name, visit(f.field_type, SchemaToHiveConverter(False)), f.doc) for f in schema.fields],
        location=metadata.location, inputFormat="org.apache.hadoop.mapred.FileInputFormat",
        outputFormat="org.apache.hadoop.mapred.FileOutputFormat",
        serdeInfo=ttypes.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"))
    parameters = dict(table.parameters or {})
    parameters.update(metadata.properties)
    parameters.update({"table_type": ICEBERG_VIEW, "metadata_location": location, "uuid": metadata.view_uuid})
    if previous:
        parameters["previous_metadata_location"] = previous
    table.parameters = parameters
    table.viewOriginalText = table.viewExpandedText = _sql(metadata)
    return table


def view_answer(location: str, metadata: Any) -> Response:
    """A LoadViewResult, with no config (no storage secrets are sent)."""
    from pyiceberg.catalog.rest import ViewResponse

    return json_answer(ViewResponse(**{"metadata-location": location, "metadata": metadata, "config": {}}))


@contextlib.contextmanager
def _metastore_lock(hive: Any, database: str, name: str) -> Iterator[None]:
    """The metastore's exclusive lock on the view, as pyiceberg's commit_table and HiveViewOperations take it."""
    from hive_metastore.ttypes import LockState, UnlockRequest
    from pyiceberg.exceptions import CommitFailedException, WaitingForLockException

    with hive._client as client:
        lock = client.lock(hive._create_lock_request(database, name))
        try:
            if lock.state != LockState.ACQUIRED:
                if lock.state != LockState.WAITING:
                    raise CommitFailedException(f"could not lock view {database}.{name}: {lock.state}")
                try:
                    hive._wait_for_lock(database, name, lock.lockid, client)
                except WaitingForLockException as error:
                    raise CommitFailedException(f"could not lock view {database}.{name}") from error
            yield
        finally:
            client.unlock(UnlockRequest(lockid=lock.lockid))


def router(context: IcebergContext) -> APIRouter:
    routes = APIRouter(prefix="/iceberg/v1/{prefix}", route_class=IcebergRoute, tags=["iceberg"], include_in_schema=False)

    def io_for(catalog: ExternalCatalog, location: str) -> Any:
        from pyiceberg.io import load_file_io

        return load_file_io(context.hive(catalog).properties, location)

    @routes.get("/namespaces/{namespace}/views")
    def list_views(prefix: str, namespace: str, principal: Who,
                   page_token: Annotated[str | None, Query(alias="pageToken")] = None,
                   page_size: Annotated[int | None, Query(alias="pageSize", ge=1)] = None) -> dict[str, Any]:
        catalog = context.catalog(prefix)
        context.read(principal, catalog)
        return context.listed(catalog, namespace_of(namespace),
                              lambda metadata: is_iceberg_view(metadata.table.tableType, metadata.table.parameters),
                              page_token, page_size)

    @routes.post("/namespaces/{namespace}/views")
    def create_view(prefix: str, namespace: str, payload: Payload, request: Request, principal: Who) -> Response:
        from pyiceberg.catalog.rest import CreateViewRequest

        catalog = context.catalog(prefix)
        database = namespace_of(namespace)
        body = CreateViewRequest.model_validate({"location": None, **payload})
        name = body.name.lower()
        with context.changing(request, principal, catalog, "CREATE VIEW", f"create Iceberg view {database}.{name}",
                              [(database, name)], [("CREATE_TABLE", database, name, 1)]) as changes:
            context.database_exists(catalog, database)
            if name in catalog.client.get_all_tables(database):
                raise _taken(database, name)
            hive = context.hive(catalog)
            base = body.location or hive._resolve_table_location(None, database, name)
            metadata = new_view_metadata(body.view_schema, body.view_version, base, body.properties)
            location = metadata_file_for(metadata, None)
            write_view_metadata(io_for(catalog, location), metadata, location)
            try:
                catalog.client.create_table(_hive_view(database, name, metadata, location, None))  # type: ignore[attr-defined]
            except AlreadyExistsError:
                _forget_file(io_for(catalog, location), location)
                raise _taken(database, name) from None
            except BaseException:
                _forget_file(io_for(catalog, location), location)  # no view points at it
                raise
            changes.append((ChangeKind.ADDED, CatalogObject.for_table(database, name)))
        return view_answer(location, metadata)

    @routes.post("/namespaces/{namespace}/register-view")
    def register_view(prefix: str, namespace: str, payload: Payload, request: Request, principal: Who) -> Response:
        """A view made of a metadata file that exists (another catalog's, or one kept after a drop): the file is
        read and checked, and the view points at it; nothing is written."""
        catalog = context.catalog(prefix)
        database = namespace_of(namespace)
        name, location = payload.get("name"), payload.get("metadata-location")
        if not isinstance(name, str) or not name or not isinstance(location, str) or not location:
            raise IcebergError(400, "BadRequestException", "register-view needs 'name' and 'metadata-location' (strings)")
        name = name.lower()
        with context.changing(request, principal, catalog, "REGISTER VIEW", f"register Iceberg view {database}.{name} at "
                              f"{location}", [(database, name)], [("CREATE_TABLE", database, name, 1)]) as changes:
            context.database_exists(catalog, database)
            if name in catalog.client.get_all_tables(database):
                raise _taken(database, name)
            metadata = _registrable(io_for(catalog, location), location)
            try:
                catalog.client.create_table(_hive_view(database, name, metadata, location, None))  # type: ignore[attr-defined]
            except AlreadyExistsError:
                raise _taken(database, name) from None
            changes.append((ChangeKind.ADDED, CatalogObject.for_table(database, name)))
        return view_answer(location, metadata)

    @routes.get("/namespaces/{namespace}/views/{view}")
    def load_view(prefix: str, namespace: str, view: str, principal: Who) -> Response:
        catalog = context.catalog(prefix)
        context.read(principal, catalog)
        location = _view_location(context, catalog, namespace_of(namespace), view.lower())
        return view_answer(location, read_view_metadata(io_for(catalog, location), location))

    @routes.head("/namespaces/{namespace}/views/{view}", status_code=204)
    def view_exists(prefix: str, namespace: str, view: str, principal: Who) -> Response:
        catalog = context.catalog(prefix)
        context.read(principal, catalog)
        _view_location(context, catalog, namespace_of(namespace), view.lower())
        return Response(status_code=204)

    @routes.post("/namespaces/{namespace}/views/{view}")
    def replace_view(prefix: str, namespace: str, view: str, payload: Payload, request: Request, principal: Who) -> Response:
        catalog = context.catalog(prefix)
        database, name = namespace_of(namespace), view.lower()
        requirements, updates = payload.get("requirements") or [], payload.get("updates")
        if not isinstance(updates, list) or not isinstance(requirements, list):
            raise IcebergError(400, "BadRequestException", "a view commit needs 'updates' (a list) and optional 'requirements'")
        actions = sorted({str(u.get("action")) for u in updates if isinstance(u, dict)})
        with context.changing(request, principal, catalog, "REPLACE VIEW", f"replace view {database}.{name}: "
                              f"{len(requirements)} requirement(s), {len(updates)} update(s): {', '.join(actions)}",
                              [(database, name)], [("ALTER_TABLE", database, name, 1)]) as changes:
            _view_location(context, catalog, database, name)
            with _metastore_lock(context.hive(catalog), database, name):
                current = catalog.client.get_table(database, name)  # under the lock: the metastore's own, not the cache's
                if not is_iceberg_view(current.tableType, current.parameters):
                    raise _no_view(catalog, database, name)
                previous = current.parameters["metadata_location"]
                base = read_view_metadata(io_for(catalog, previous), previous)
                check_view_requirements(base, requirements)
                metadata = apply_view_updates(base, updates)
                location = metadata_file_for(metadata, previous)
                write_view_metadata(io_for(catalog, location), metadata, location)
                table = _hive_view(database, name, metadata, location, previous, base=current)
                for key in set(base.properties) - set(metadata.properties):
                    table.parameters.pop(key, None)
                try:
                    catalog.client.alter_table(database, name, table)  # type: ignore[attr-defined]
                except BaseException:
                    _forget_file(io_for(catalog, location), location)  # the view still points at the previous file
                    raise
            changes.append((ChangeKind.CHANGED, CatalogObject.for_table(database, name)))
        return view_answer(location, metadata)

    @routes.delete("/namespaces/{namespace}/views/{view}", status_code=204)
    def drop_view(prefix: str, namespace: str, view: str, principal: Who, request: Request) -> Response:
        catalog = context.catalog(prefix)
        database, name = namespace_of(namespace), view.lower()
        with context.changing(request, principal, catalog, "DROP VIEW", f"drop Iceberg view {database}.{name}",
                              [(database, name)], [("DROP_TABLE", database, name, 1)]) as changes:
            _view_location(context, catalog, database, name)
            catalog.client.drop_table(database, name)  # type: ignore[attr-defined]
            changes.append((ChangeKind.DROPPED, CatalogObject.for_table(database, name)))
        return Response(status_code=204)

    @routes.post("/views/rename", status_code=204)
    def rename_view(prefix: str, body: RenameRequest, principal: Who, request: Request) -> Response:
        catalog = context.catalog(prefix)
        (database, name), (new_database, new_name) = single(body.source), single(body.destination)
        summary = f"rename Iceberg view {database}.{name} to {new_database}.{new_name}"
        with context.changing(request, principal, catalog, "RENAME VIEW", summary, [(database, name), (new_database, new_name)],
                              [("ALTER_TABLE", database, name, 1)]) as changes:
            _view_location(context, catalog, database, name)
            context.database_exists(catalog, new_database)
            if new_name in catalog.client.get_all_tables(new_database):
                raise _taken(new_database, new_name)
            current = catalog.client.get_table(database, name)
            renamed = copy.deepcopy(current)
            renamed.dbName, renamed.tableName = new_database, new_name
            catalog.client.alter_table(database, name, renamed)  # type: ignore[attr-defined]
            changes += [(ChangeKind.DROPPED, CatalogObject.for_table(database, name)),
                        (ChangeKind.ADDED, CatalogObject.for_table(new_database, new_name))]
        return Response(status_code=204)

    return routes


def _taken(database: str, name: str) -> IcebergError:
    """The spec's 409 for a view whose name a table or view has already."""
    return IcebergError(409, "AlreadyExistsException", f"a table or view '{database}.{name}' already exists")


def _registrable(io: Any, location: str) -> Any:
    """The view metadata at ``location``, checked as Iceberg's builder checks it (its current version and that
    version's schema exist). Any failure is one 400 that says nothing of the file: its text, or whether it
    exists, is not told to a client that may name any file the service can read."""
    unusable = IcebergError(400, "BadRequestException", f"{location} is not a view metadata file this catalog can read")
    try:
        metadata = read_view_metadata(io, location)
    except Exception:  # noqa: BLE001 - what went wrong stays in the log, not in the answer
        _log.info("register-view: %s could not be read as view metadata", location, exc_info=True)
        raise unusable from None
    current = next((v for v in metadata.versions if v.version_id == metadata.current_version_id), None)
    if current is None or current.schema_id not in {s.schema_id for s in metadata.schemas}:
        raise unusable
    return metadata


def _forget_file(io: Any, location: str) -> None:
    """Delete a metadata file no view came to point at (a failed create or replace), as Iceberg's own client does."""
    try:
        io.delete(location)
    except Exception as error:  # noqa: BLE001 - the answer is the failure that came first; a stray file is only logged
        _log.warning("could not delete the unused view metadata file %s: %s", location, error)
