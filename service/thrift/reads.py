"""Databases and tables answered from the catalogs' warm caches.

A warm ``get_table`` costs the metastore nothing: the answer is the metastore's own Table struct as the
catalog cached it (with its freshness: events, TTLs, REFRESH, the change feed), renamed only for a catalog
under a prefix. Concurrent cold loads of one table are one metastore call (the cache loads a key once).
Database listings of the federation ask every catalog at once and leave out any that does not answer in
time, logging why.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import HmsCatalogError, NotFoundError
from service.thrift.context import Caller, EndpointContext
from service.thrift.errors import translated
from service.thrift.names import Route, hive_pattern

__all__ = ["TableReads"]

_log = logging.getLogger(__name__)


class TableReads:
    endpoint: EndpointContext
    caller: Caller

    # Databases -----------------------------------------------------------------------------------------

    @translated("get_all_databases")
    def get_all_databases(self) -> list[str]:
        return self._database_names()

    @translated("get_databases")
    def get_databases(self, pattern: str | None) -> list[str]:
        return self._matching_databases(pattern)

    @translated("get_database")
    def get_database(self, name: str) -> ttypes.Database:
        return self._database(self.endpoint.names.route(name))

    @translated("get_database_req")
    def get_database_req(self, request: Any) -> ttypes.Database:
        return self._database(self.endpoint.names.route(request.name, request.catalogName))

    # Tables ----------------------------------------------------------------------------------------------

    @translated("get_all_tables")
    def get_all_tables(self, db_name: str) -> list[str]:
        route = self.endpoint.names.route(db_name)
        return list(self.endpoint.catalog(route).database(route.database).table_names())

    @translated("get_tables")
    def get_tables(self, db_name: str, pattern: str | None) -> list[str]:
        matcher = hive_pattern(pattern)
        return [name for name in self.get_all_tables(db_name) if matcher.fullmatch(name)]

    @translated("get_table")
    def get_table(self, dbname: str, tbl_name: str) -> ttypes.Table:
        return self._table(self.endpoint.names.route(dbname), tbl_name)

    @translated("get_table_req")
    def get_table_req(self, req: Any) -> Any:
        return ttypes.GetTableResult(table=self._table(self.endpoint.names.route(req.dbName, req.catName), req.tblName))

    @translated("get_table_objects_by_name")
    def get_table_objects_by_name(self, dbname: str, tbl_names: list[str]) -> list[ttypes.Table]:
        return self._tables(self.endpoint.names.route(dbname), tbl_names or [])

    @translated("get_table_objects_by_name_req")
    def get_table_objects_by_name_req(self, req: Any) -> Any:
        route = self.endpoint.names.route(req.dbName, req.catName)
        # all of them when none are named: listed in the routed catalog (get_all_tables(dbName) would drop catName)
        names = req.tblNames if req.tblNames is not None else list(self.endpoint.catalog(route).database(route.database).table_names())
        return ttypes.GetTablesResult(tables=self._tables(route, names))

    @translated("get_table_meta")
    def get_table_meta(self, db_patterns: str | None, tbl_patterns: str | None, tbl_types: list[str] | None) -> list[Any]:
        tables = hive_pattern(tbl_patterns)
        types = {kind.upper() for kind in tbl_types or ()}
        found = []
        for external in self._matching_databases(db_patterns):
            route = self.endpoint.names.route(external)
            database = self.endpoint.catalog(route).database(route.database)
            wanted = [name for name in database.table_names() if tables.fullmatch(name)]
            for metadata in database.tables_metadata(wanted):
                table = metadata.table
                if types and (table.tableType or "").upper() not in types:
                    continue
                found.append(ttypes.TableMeta(dbName=external, tableName=table.tableName, tableType=table.tableType,
                                              comments=(table.parameters or {}).get("comment")))
        return found

    @translated("get_fields")
    def get_fields(self, db_name: str, table_name: str) -> list[ttypes.FieldSchema]:
        return list(self._table(self.endpoint.names.route(db_name), table_name).sd.cols or [])

    @translated("get_fields_with_environment_context")
    def get_fields_with_environment_context(self, db_name: str, table_name: str, environment_context: Any) -> list[Any]:
        return self.get_fields(db_name, table_name)

    @translated("get_schema")
    def get_schema(self, db_name: str, table_name: str) -> list[ttypes.FieldSchema]:
        table = self._table(self.endpoint.names.route(db_name), table_name)
        return list(table.sd.cols or []) + list(table.partitionKeys or [])

    @translated("get_schema_with_environment_context")
    def get_schema_with_environment_context(self, db_name: str, table_name: str, environment_context: Any) -> list[Any]:
        return self.get_schema(db_name, table_name)

    # What they share -----------------------------------------------------------------------------------

    def _database(self, route: Route) -> ttypes.Database:
        return self.endpoint.outward(route, self.endpoint.catalog(route).database(route.database).definition)

    def _table(self, route: Route, name: str) -> ttypes.Table:
        if not route.database:
            raise NotFoundError("database", "''")
        table = self.endpoint.catalog(route).table(route.database, name).thrift
        return self.endpoint.outward(route, table)

    def _tables(self, route: Route, names: list[str]) -> list[ttypes.Table]:
        database = self.endpoint.catalog(route).database(route.database)
        return [self.endpoint.outward(route, metadata.table) for metadata in database.tables_metadata(names)]

    def _matching_databases(self, pattern: str | None) -> list[str]:
        """The databases a pattern names. Hive 3+ clients name a catalog in it, ``@hive#`` for every database of the
        default catalog (``getAllDatabases``), ``@hive#sales*``: a catalog of the home then narrows the answer to its
        own databases; Hive's default catalog, or the primary, means them all."""
        catalog: str | None = None
        if pattern is not None and pattern.startswith("@") and "#" in pattern:
            catalog, pattern = pattern[1:].split("#", 1)
            pattern = None if pattern in ("", "!") else pattern
        matcher = hive_pattern(pattern)
        names = self.endpoint.names
        narrowed = catalog is not None and catalog.lower() != names.primary and catalog.lower() in names.catalogs()
        return [name for name in self._database_names() if matcher.fullmatch(name)
                and (not narrowed or names.route(name).catalog == (catalog or "").lower())]

    def _database_names(self) -> list[str]:
        """Every catalog's databases in the client's names; a catalog that does not answer in time is left out."""
        endpoint = self.endpoint
        asked = [(name, endpoint.database_listing(name)) for name in endpoint.names.catalogs()]
        names: list[str] = []
        failures = []
        deadline = time.monotonic() + endpoint.listing_wait  # one wait for all: they were asked at once
        for catalog, answer in asked:
            try:
                databases = answer.result(timeout=max(0.0, deadline - time.monotonic()))
            except FutureTimeout:
                failures.append(f"{catalog}: no answer within {endpoint.listing_wait:g} s")
                continue
            except HmsCatalogError as error:
                failures.append(f"{catalog}: {error}")
                continue
            names.extend(endpoint.names.external(catalog, database) for database in databases)
        for failure in failures:
            _log.warning("get_all_databases leaves out catalog %s", failure)
        if failures and not names:
            raise HmsCatalogError("no catalog answered: " + "; ".join(failures))
        return names
