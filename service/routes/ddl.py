"""DDL on databases and tables: each route builds the statement node its body mirrors and runs it through
the request's session, so it is the statement's own handler and operation, permission check and audit
line (:mod:`service.routes._common`). Answers ``{"result", "version"}``: what was done, the catalog's
version after it. ``If-Match`` on a table makes the change conditional on the version its GET reported.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Request

from hms_catalog.errors import ConfigurationError, VersionMismatchError
from hms_catalog.sql import ast, ast_ddl
from service.ddl_bodies import DatabaseChange, DdlAnswer, NewDatabase, NewTable, NewTableLike, RenameBody, TableChanges
from service.routes._common import Acting, Sync, expected_version, rest_statement, run_ddl
from service.routes._route import ServiceRoute
from service.state import ServiceState

__all__ = ["DATABASE", "TABLE", "router"]

DATABASE = "/v1/catalogs/{catalog}/databases/{database}"
TABLE = DATABASE + "/tables/{table}"
_IF_MATCH = "a table version as GET .../tables/{table} reports it"
IfMatch = Annotated[str | None, Header(description="the table's version as its GET reported it: 412 if it changed since")]


def router(state: ServiceState) -> APIRouter:
    routes = APIRouter(route_class=ServiceRoute)

    def expect_table(catalog: str, database: str, table: str, expected: int) -> None:
        """The table is still at ``expected`` (called under the table's DDL lock), else VersionMismatchError."""
        live = state.manager.catalog(catalog)
        _ = live.table(database, table).metadata  # the cached load, or a new one (with a new version) if it changed
        current = live.database(database).table_version(table)
        if current != expected:
            at = "changed while it was read" if current is None else f"is at version {current}, not {expected}"
            raise VersionMismatchError(f"table '{live.name}.{database.lower()}.{table.lower()}' {at}: it changed since it was "
                                       "read (GET it again for its version)")

    # Databases ---------------------------------------------------------------------------------------

    @routes.post("/v1/catalogs/{catalog}/databases")
    def create_database(catalog: str, body: NewDatabase, request: Request, who: Acting, sync: Sync) -> DdlAnswer:
        node = ast_ddl.CreateDatabase(ast.DatabaseName(catalog, body.name), body.spec(), text=rest_statement(request, body))
        return run_ddl(state, who, catalog, [node], sync)

    @routes.patch(DATABASE)
    def alter_database(catalog: str, database: str, body: DatabaseChange, request: Request, who: Acting, sync: Sync) -> DdlAnswer:
        node = ast_ddl.AlterDatabase(ast.DatabaseName(catalog, database), tuple(body.properties.items()),
                                     text=rest_statement(request, body))
        return run_ddl(state, who, catalog, [node], sync)

    @routes.delete(DATABASE)
    def drop_database(catalog: str, database: str, request: Request, who: Acting, sync: Sync,
                      cascade: Annotated[bool, Query(description="drop its tables too (else a database with tables is refused)")] = False,
                      if_exists: bool = False) -> DdlAnswer:
        node = ast_ddl.DropDatabase(ast.DatabaseName(catalog, database), if_exists, cascade, text=rest_statement(request))
        return run_ddl(state, who, catalog, [node], sync)

    # Tables ------------------------------------------------------------------------------------------

    @routes.post(DATABASE + "/tables")
    def create_table(catalog: str, database: str, body: NewTable | NewTableLike, request: Request, who: Acting,
                     sync: Sync) -> DdlAnswer:
        target = ast.TableName(catalog, database, body.name)
        text = rest_statement(request, body)
        node: ast.Statement
        if isinstance(body, NewTableLike):
            node = ast_ddl.CreateTableLike(target, _source(catalog, database, body.like), body.if_not_exists, body.location,
                                           body.external, text=text)
        else:
            node = ast_ddl.CreateTable(target, body.spec(database), text=text)
        return run_ddl(state, who, catalog, [node], sync)

    @routes.patch(TABLE)
    def alter_table(catalog: str, database: str, table: str, body: TableChanges, request: Request, who: Acting, sync: Sync,
                    if_match: IfMatch = None) -> DdlAnswer:
        expected = expected_version(if_match, _IF_MATCH)
        name = ast.TableName(catalog, database, table)
        hold = [(database, table)]  # every name the changes touch, locked for all of them
        nodes: list[ast.Statement] = []
        for change in body.changes:
            text = rest_statement(request, change)
            if isinstance(change, RenameBody):
                nodes.append(ast_ddl.AlterTableRename(name, ast.TableName(None, change.database, change.name), text=text))
                name = ast.TableName(catalog, change.database or name.database, change.name)
                hold.append((name.database or database, name.table))
            else:
                nodes.append(ast_ddl.AlterTable(name, change.change(), text=text))
        return run_ddl(state, who, catalog, nodes, sync, hold=hold,
                       precondition=None if expected is None else lambda: expect_table(catalog, database, table, expected))

    @routes.delete(TABLE)
    def drop_table(catalog: str, database: str, table: str, request: Request, who: Acting, sync: Sync,
                   purge: bool = False, if_exists: bool = False, if_match: IfMatch = None) -> DdlAnswer:
        expected = expected_version(if_match, _IF_MATCH)
        node = ast_ddl.DropTable(ast.TableName(catalog, database, table), if_exists, purge, text=rest_statement(request))
        return run_ddl(state, who, catalog, [node], sync, hold=[(database, table)],
                       precondition=None if expected is None else lambda: expect_table(catalog, database, table, expected))

    return routes


def _source(catalog: str, database: str, like: str) -> ast.TableName:
    """``other``, ``db.other`` or ``catalog.db.other`` (the handler refuses another catalog, saying so)."""
    parts = like.split(".")
    if not 1 <= len(parts) <= 3 or not all(parts):
        raise ConfigurationError(f"'like' must name a table as 'table', 'database.table' or 'catalog.database.table', got {like!r}")
    return ast.TableName(parts[-3] if len(parts) == 3 else catalog, parts[-2] if len(parts) >= 2 else database, parts[-1])
