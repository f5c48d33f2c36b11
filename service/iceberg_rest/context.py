"""What every Iceberg route shares: the catalog a prefix names, pyiceberg's HiveCatalog over it, metadata
files read once, and the wrapper that makes a change a catalog event.

A change (:meth:`IcebergContext.changing`) passes the service's change gate (:mod:`service.gate`), as every
front end's changes do: the token's write access checked, the object's DDL lock held, the metastore events
it causes expected (so the follower does not log them a second time), caches dropped in ``finally``, one
version recorded with source ``iceberg-rest``, announced to the home's other processes (long polls and
Spark drivers), and one line in the audit log, refusals included.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from fastapi import Request

from hms_catalog.cache.versions import ChangeSource
from hms_catalog.client.refusals import CatalogErrors
from hms_catalog.client.writes import MetastoreWrites
from hms_catalog.ddl.context import RecordedChanges
from hms_catalog.ddl.iceberg import iceberg_catalog
from hms_catalog.errors import NotFoundError
from hms_catalog.formats.detect import TableFormat, TableKind
from hms_catalog.model import ExternalCatalog
from service.access import Access, Principal
from service.actor import Actor, FrontEnd
from service.iceberg_rest.errors import IcebergError
from service.paging import page
from service.state import ServiceState

__all__ = ["IcebergContext", "NAMESPACE_SEPARATOR", "namespace_of"]

NAMESPACE_SEPARATOR = "\x1f"  # the spec's separator of a multi-level namespace in a path


def namespace_of(path_part: str) -> str:
    """The database a path's namespace names; a multi-level namespace names none (this catalog's are single-level)."""
    if NAMESPACE_SEPARATOR in path_part or not path_part:
        raise IcebergError(404, "NoSuchNamespaceException", f"namespace {path_part.split(NAMESPACE_SEPARATOR)} does not "
                                                            "exist: a metastore's namespaces are single-level (its databases)")
    return path_part.lower()


class IcebergContext:
    def __init__(self, state: ServiceState) -> None:
        self.state = state

    def catalog(self, prefix: str) -> ExternalCatalog:
        """The hms catalog a prefix (the config's ``warehouse``) names."""
        try:
            catalog = self.state.manager.catalog(prefix)
        except NotFoundError:
            raise IcebergError(404, "NotFoundException", f"catalog '{prefix}' does not exist in this service (the "
                                                         "prefix is the catalog the config's warehouse named)") from None
        if not isinstance(catalog.client, MetastoreWrites):
            raise IcebergError(400, "BadRequestException", f"catalog '{prefix}' serves folders, not a metastore: the "
                                                           "Iceberg REST endpoint serves hms catalogs")
        return catalog

    def hive(self, catalog: ExternalCatalog) -> Any:
        """pyiceberg's HiveCatalog over the catalog's metastore: a new one per use (its client is not thread-safe)."""
        return iceberg_catalog(catalog)

    def database_exists(self, catalog: ExternalCatalog, database: str) -> None:
        """NoSuchNamespaceException unless ``database`` exists."""
        if database not in catalog.database_names():
            raise IcebergError(404, "NoSuchNamespaceException", f"namespace '{database}' does not exist in catalog "
                                                                f"'{catalog.name}'")

    def listed(self, catalog: ExternalCatalog, namespace: str, keep: Callable[[Any], bool], page_token: str | None,
               page_size: int | None) -> dict[str, Any]:
        """One page of a namespace's tables whose cached metadata ``keep`` accepts (Iceberg tables, or views), as the
        spec's ListTablesResponse: the same answer for tables and views."""
        self.database_exists(catalog, namespace)
        database = catalog.database(namespace)
        names = [m.table.tableName.lower() for m in database.tables_metadata(database.table_names()) if keep(m)]
        shown, token = page(names, page_token, page_size, token_name="pageToken")
        return {"identifiers": [{"namespace": [namespace], "name": name} for name in shown], "next-page-token": token}

    def metadata_location(self, catalog: ExternalCatalog, database: str, table: str) -> str:
        """The current metadata file of an Iceberg table (from the catalog's cache); 404 for anything else."""
        self.database_exists(catalog, database)
        try:
            detection = catalog.table(database, table).detection
        except NotFoundError:
            raise IcebergError(404, "NoSuchTableException", f"table '{database}.{table}' does not exist in catalog "
                                                            f"'{catalog.name}'") from None
        location = detection.parameters.get("metadata_location")
        if detection.format is not TableFormat.ICEBERG or detection.kind is not TableKind.TABLE or not location:
            raise IcebergError(404, "NoSuchTableException", f"table '{database}.{table}' of catalog '{catalog.name}' is "
                                                            f"not an Iceberg table ({detection.format.value.lower()}), "
                                                            "which this endpoint does not serve")
        return location

    def read_metadata(self, catalog: ExternalCatalog, location: str) -> Any:
        """The parsed metadata file at ``location``, kept in the catalog's ``iceberg_metadata`` cache (metadata
        files are never rewritten), under the process's cache memory budget; read once however many ask."""

        def read() -> Any:
            from pyiceberg.io import load_file_io
            from pyiceberg.serializers import FromInputFile

            io = load_file_io(self.hive(catalog).properties, location)
            return FromInputFile.table_metadata(io.new_input(location))

        return catalog.caches.iceberg_metadata.get(location, read)

    def read(self, principal: Principal, catalog: ExternalCatalog) -> None:
        """Reads need read access to the catalog (a token whose entry lists catalogs reads only those)."""
        principal.check(Access.READ, catalog.name, "the request")

    @contextlib.contextmanager
    def changing(self, request: Request, principal: Principal, catalog: ExternalCatalog, what: str, summary: str,
                 objects: Sequence[tuple[str, str]], events: Sequence[tuple[str, str, str, int]]
                 ) -> Iterator[RecordedChanges]:
        """One change through the gate: ``what`` names it in a refusal (``CREATE TABLE``), ``summary`` in the
        audit log (with the request's method and path). The metastore's exceptions, which pyiceberg's
        HiveCatalog raises as they are, leave it as the catalog's errors (CatalogErrors)."""
        statement = f"{request.method} {request.url.path} ({summary})"
        with (self.state.gate.change(self.actor(request, principal), catalog, statement, what, objects, events=events,
                                     source=ChangeSource.ICEBERG_REST) as changes,
              CatalogErrors(what)):
            yield changes

    def actor(self, request: Request, principal: Principal) -> Actor:
        return Actor(principal, FrontEnd.ICEBERG_REST, request.client.host if request.client else None)

    def audited(self, request: Request, principal: Principal, catalog: ExternalCatalog, what: str, summary: str,
                ) -> contextlib.AbstractContextManager[Any]:
        """The gate's audit line and decision alone, for a change that opens its catalog event itself
        (:meth:`event`): a transaction expects each table's event only once that table's commit is made."""
        statement = f"{request.method} {request.url.path} ({summary})"
        return self.state.gate.admitted(self.actor(request, principal), catalog.name, statement, what)

    def event(self, catalog: ExternalCatalog, objects: Sequence[tuple[str, str]],
              events: Sequence[tuple[str, str, str, int]]) -> contextlib.AbstractContextManager[RecordedChanges]:
        """The catalog event of a change admitted by :meth:`audited`."""
        return self.state.gate.context(catalog).changing(objects, events=events, source=ChangeSource.ICEBERG_REST)
