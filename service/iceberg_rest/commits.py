"""Commits: a table's requirements and updates applied by pyiceberg's own HiveCatalog.commit_table.

It takes the metastore's lock on the table, reads the current metadata, validates the requirements
(a failed one is pyiceberg's CommitFailedException, answered 409), applies the updates with
``update_table_metadata``, writes the new metadata file under the table's location and swaps
``metadata_location`` with ``alter_table`` under that lock, as Iceberg's ``HiveTableOperations`` does: a
commit through this endpoint, through the Spark connector and through another engine's HiveCatalog on the
same metastore can never both win. A commit with ``assert-create`` creates the table (a staged create).

A multi-table transaction (``/transactions/commit``) holds every table's DDL lock in this service, checks
every table's requirements against its current metadata first, and only then commits the tables one by one.
The metastore has no multi-table swap: if a commit fails half-way (another engine committed to a later table
between the check and its commit), the tables before it stay committed, and the answer (a 409) names which.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from hms_catalog.cache.versions import CatalogObject, ChangeKind
from hms_catalog.ddl.context import RecordedChanges
from hms_catalog.ddl.iceberg_v3 import refuse_unreadable
from hms_catalog.model import ExternalCatalog
from service.iceberg_rest.context import IcebergContext, namespace_of
from service.iceberg_rest.errors import IcebergError, IcebergRoute
from service.iceberg_rest.tables import Payload, json_answer
from service.routes._common import Who

__all__ = ["router"]


class _Named:
    """The one thing HiveCatalog.commit_table asks of its table argument: the identifier."""

    def __init__(self, identifier: tuple[str, str]) -> None:
        self.identifier = identifier

    def name(self) -> tuple[str, str]:
        return self.identifier


def _creates(requirements: Any) -> bool:
    from pyiceberg.table.update import AssertCreate

    return any(isinstance(requirement, AssertCreate) for requirement in requirements)


def _check_exists(context: IcebergContext, catalog: ExternalCatalog, database: str, name: str, creates: bool) -> None:
    if creates:
        context.database_exists(catalog, database)
    else:
        context.metadata_location(catalog, database, name)  # 404 for a missing table or one that is not Iceberg


def _commit(context: IcebergContext, catalog: ExternalCatalog, database: str, name: str, request: Any,
            changes: RecordedChanges) -> Any:
    creates = _creates(request.requirements)
    answer = context.hive(catalog).commit_table(_Named((database, name)), request.requirements, request.updates)
    changes.append((ChangeKind.ADDED if creates else ChangeKind.CHANGED, CatalogObject.for_table(database, name)))
    return answer


def _refuse_unreadable(payload: dict[str, Any], table: str) -> None:
    """A schema added by a commit (a staged create's, or a change's) is held to what a create is
    (:func:`~hms_catalog.ddl.iceberg_v3.refuse_unreadable`), before pyiceberg parses it."""
    for update in payload.get("updates") or []:
        if isinstance(update, dict) and update.get("action") == "add-schema":
            refuse_unreadable(update.get("schema"), f"table {table}")


def _summary(request: Any) -> str:
    kinds = sorted({getattr(update, "action", type(update).__name__) for update in request.updates})
    return f"{len(request.requirements)} requirement(s), {len(request.updates)} update(s): {', '.join(kinds)}"


def router(context: IcebergContext) -> APIRouter:
    routes = APIRouter(prefix="/iceberg/v1/{prefix}", route_class=IcebergRoute, tags=["iceberg"], include_in_schema=False)

    @routes.post("/namespaces/{namespace}/tables/{table}")
    def commit_table(prefix: str, namespace: str, table: str, payload: Payload, request: Request, principal: Who) -> Response:
        from pyiceberg.table import CommitTableRequest

        catalog = context.catalog(prefix)
        database, name = namespace_of(namespace), table.lower()
        _refuse_unreadable(payload, f"{database}.{name}")
        body = CommitTableRequest.model_validate({**payload, "identifier": {"namespace": [database], "name": name}})
        creates = _creates(body.requirements)
        event = ("CREATE_TABLE" if creates else "ALTER_TABLE", database, name, 1)
        with context.changing(request, principal, catalog, "COMMIT", f"commit to {database}.{name}: {_summary(body)}",
                              [(database, name)], [event]) as changes:
            _check_exists(context, catalog, database, name, creates)
            answer = _commit(context, catalog, database, name, body, changes)
        return json_answer(answer)

    @routes.post("/transactions/commit", status_code=204)
    def commit_transaction(prefix: str, payload: Payload, request: Request, principal: Who) -> Response:
        from pyiceberg.table import CommitTableRequest

        catalog = context.catalog(prefix)
        for change in payload.get("table-changes") or []:
            _refuse_unreadable(change, str((change.get("identifier") or {}).get("name")))
        bodies = [CommitTableRequest.model_validate(change) for change in payload.get("table-changes") or []]
        if not bodies:
            raise IcebergError(400, "BadRequestException", "table-changes must list at least one table's changes")
        names = []
        for body in bodies:
            if len(body.identifier.namespace.root) != 1:
                raise IcebergError(404, "NoSuchNamespaceException", f"namespace {body.identifier.namespace.root} does not "
                                                                    "exist: a metastore's namespaces are single-level")
            names.append((body.identifier.namespace.root[0].lower(), body.identifier.name.lower()))
        if len(set(names)) != len(names):
            raise IcebergError(400, "BadRequestException", "a transaction names a table twice: merge its changes into one")
        events = [("CREATE_TABLE" if _creates(b.requirements) else "ALTER_TABLE", db, t, 1) for b, (db, t) in zip(bodies, names)]
        summary = "transaction on " + ", ".join(f"{db}.{t}" for db, t in names)
        failure: Exception | None = None
        with context.audited(request, principal, catalog, "COMMIT TRANSACTION", summary):
            # Each table's event is expected once its commit is made: one expected up front for a table whose commit
            # then failed (or never ran) would make the follower skip another writer's change of it.
            with context.event(catalog, names, []) as changes:
                hive = context.hive(catalog)
                for body, (database, name) in zip(bodies, names):  # every requirement checked before any commit
                    creates = _creates(body.requirements)
                    _check_exists(context, catalog, database, name, creates)
                    current = None if creates else hive.load_table((database, name)).metadata
                    for requirement in body.requirements:
                        requirement.validate(current)
                for index, (body, (database, name)) in enumerate(zip(bodies, names)):
                    try:
                        _commit(context, catalog, database, name, body, changes)
                    except Exception as error:  # noqa: BLE001 - those before it stay committed, and are recorded
                        failure = _halfway(error, names[:index], (database, name))
                        break
                    changes.expect(*events[index])
            if failure is not None:
                raise failure
        return Response(status_code=204)

    return routes


def _halfway(error: Exception, committed: list[tuple[str, str]], failed: tuple[str, str]) -> Exception:
    if not committed:
        return error
    done = ", ".join(f"{db}.{t}" for db, t in committed)
    return IcebergError(409, "CommitFailedException", f"the transaction failed half-way: {failed[0]}.{failed[1]} could not "
                                                      f"be committed ({error}); {done} stayed committed (the metastore "
                                                      "has no multi-table swap)")
