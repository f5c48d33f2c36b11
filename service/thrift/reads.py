"""Databases and tables answered from the catalogs' warm caches.

A warm ``get_table`` costs the metastore nothing: the answer is the metastore's own Table struct as the
catalog cached it (with its freshness: events, TTLs, REFRESH, the change feed), renamed only for a catalog
under a prefix. Concurrent cold loads of one table are one metastore call (the cache loads a key once).
Database listings of the federation ask every catalog at once; one whose metastore is down answers with the
names it last listed, at once once it is known down (:mod:`.health`), and its tables from its caches alone.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from hms_catalog.client import MetastoreClient
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import MetastoreUnavailableError, NotFoundError
from service.thrift.context import Caller, EndpointContext
from service.thrift.errors import translated
from service.thrift.names import Route, hive_pattern

if TYPE_CHECKING:
    from hms_catalog.model.catalog import ExternalCatalog

__all__ = ["TableReads"]

_log = logging.getLogger(__name__)
# Uncached databases named one by one in a get_table_meta to the metastore (Hive ORs one LIKE each), at most.
_NAMED_DATABASES = 100


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
        return self._database(self._route(name))

    @translated("get_database_req")
    def get_database_req(self, request: Any) -> ttypes.Database:
        return self._database(self._route(request.name, request.catalogName))

    # Tables ----------------------------------------------------------------------------------------------

    @translated("get_all_tables")
    def get_all_tables(self, db_name: str) -> list[str]:
        route = self._route(db_name)
        with self.endpoint.reaching(route) as catalog:
            return list(catalog.database(route.database).table_names())

    @translated("get_tables")
    def get_tables(self, db_name: str, pattern: str | None) -> list[str]:
        matcher = hive_pattern(pattern)
        return [name for name in self.get_all_tables(db_name) if matcher.fullmatch(name)]

    @translated("get_table")
    def get_table(self, dbname: str, tbl_name: str) -> ttypes.Table:
        return self._table(self._route(dbname), tbl_name)

    @translated("get_table_req")
    def get_table_req(self, req: Any) -> Any:
        return ttypes.GetTableResult(table=self._table(self._route(req.dbName, req.catName), req.tblName))

    @translated("get_table_objects_by_name")
    def get_table_objects_by_name(self, dbname: str, tbl_names: list[str]) -> list[ttypes.Table]:
        return self._tables(self._route(dbname), tbl_names or [])

    @translated("get_table_objects_by_name_req")
    def get_table_objects_by_name_req(self, req: Any) -> Any:
        route = self._route(req.dbName, req.catName)
        with self.endpoint.reaching(route) as catalog:
            # all of them when none are named: listed in the routed catalog (get_all_tables(dbName) would drop catName)
            names = req.tblNames if req.tblNames is not None else list(catalog.database(route.database).table_names())
            return ttypes.GetTablesResult(tables=self._tables(route, names))

    @translated("get_table_meta")
    def get_table_meta(self, db_patterns: str | None, tbl_patterns: str | None, tbl_types: list[str] | None) -> list[Any]:
        """Every catalog's matching tables: a database's from the caches when they hold its names and every table
        named, the others' from one get_table_meta of the catalog's metastore (a name, a type and a comment a table,
        where loading the tables would fetch whole table objects: 100,000 tables took minutes, against the
        metastore's own one query). A catalog that is down answers with what its caches hold of them; one whose
        metastore fails in the middle is left out, as get_all_databases leaves it out."""
        tables = hive_pattern(tbl_patterns)
        types = {kind.upper() for kind in tbl_types or ()}
        by_catalog: dict[str, list[tuple[str, Route]]] = {}
        for external in self._matching_databases(db_patterns):
            route = self._route(external)
            by_catalog.setdefault(route.catalog, []).append((external, route))
        found: list[ttypes.TableMeta] = []
        for databases in by_catalog.values():
            live = self.endpoint.catalog(databases[0][1])
            cached = _cached_meta(live, databases, tables)
            missing = [(external, route) for external, route in databases if external not in cached]
            metas = [meta for external, _ in databases for meta in cached.get(external, ())]
            if missing:
                primary = self.endpoint.names.is_primary(databases[0][1].catalog)
                asked = self._metastore_meta(live, missing, _asked_pattern(primary, databases, missing, db_patterns),
                                             tbl_patterns, tbl_types)
                metas.extend(asked if asked is not None else self._loaded_meta(live, missing, tables))
            found.extend(meta for meta in metas if not types or (meta.tableType or "").upper() in types)
        return found

    @translated("get_fields")
    def get_fields(self, db_name: str, table_name: str) -> list[ttypes.FieldSchema]:
        return list(self._table(self._route(db_name), table_name).sd.cols or [])

    @translated("get_fields_with_environment_context")
    def get_fields_with_environment_context(self, db_name: str, table_name: str, environment_context: Any) -> list[Any]:
        return self.get_fields(db_name, table_name)

    @translated("get_schema")
    def get_schema(self, db_name: str, table_name: str) -> list[ttypes.FieldSchema]:
        table = self._table(self._route(db_name), table_name)
        return list(table.sd.cols or []) + list(table.partitionKeys or [])

    @translated("get_schema_with_environment_context")
    def get_schema_with_environment_context(self, db_name: str, table_name: str, environment_context: Any) -> list[Any]:
        return self.get_schema(db_name, table_name)

    # What they share -----------------------------------------------------------------------------------

    def _route(self, database: str | None, catalog: str | None = None) -> Route:
        return self.endpoint.readable_route(self.caller, database, catalog)

    def _database(self, route: Route) -> ttypes.Database:
        with self.endpoint.reaching(route) as catalog:
            return self.endpoint.outward(route, catalog.database(route.database).definition)

    def _table(self, route: Route, name: str) -> ttypes.Table:
        if not route.database:
            raise NotFoundError("database", "''")
        with self.endpoint.reaching(route) as catalog:
            return self.endpoint.outward(route, catalog.table(route.database, name).thrift)

    def _tables(self, route: Route, names: list[str]) -> list[ttypes.Table]:
        with self.endpoint.reaching(route) as catalog:
            database = catalog.database(route.database)
            return [self.endpoint.outward(route, metadata.table) for metadata in database.tables_metadata(names)]

    def _metastore_meta(self, live: ExternalCatalog, databases: list[tuple[str, Route]], pattern: str,
                        tbl_patterns: str | None, tbl_types: list[str] | None) -> list[ttypes.TableMeta] | None:
        """The metastore's own answer for these databases of the catalog, asked with ``pattern`` (in its names), in the
        client's names; None when the catalog has no metastore (folders) or it is down (its caches answer then)."""
        client = live.client
        if not isinstance(client, MetastoreClient):
            return None
        external = {each.database: name for name, each in databases}
        try:
            with self.endpoint.reaching(databases[0][1], merging=True, live=live):
                answer = client.get_table_meta(pattern, tbl_patterns or "*", tbl_types)
        except MetastoreUnavailableError as error:
            _log.debug("get_table_meta answers for catalog %s from its caches: %s", live.name, error)
            return None
        return [ttypes.TableMeta(dbName=external[meta.dbName.lower()], tableName=meta.tableName, tableType=meta.tableType,
                                 comments=meta.comments) for meta in answer if (meta.dbName or "").lower() in external]

    def _loaded_meta(self, live: ExternalCatalog, databases: list[tuple[str, Route]],
                     tables: re.Pattern[str]) -> list[ttypes.TableMeta]:
        """The catalog's tables from its caches, loading what they lack (when its metastore is down: what they hold)."""
        found: list[ttypes.TableMeta] = []
        for external, route in databases:
            try:
                with self.endpoint.reaching(route, merging=True, live=live) as catalog:
                    database = catalog.database(route.database)
                    metadata = database.tables_metadata([name for name in database.table_names() if tables.fullmatch(name)])
            except MetastoreUnavailableError as error:
                _log.debug("get_table_meta leaves out database %s: %s", external, error)
                continue
            found.extend(_meta(external, each.table) for each in metadata)
        return found

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
        """Every catalog's databases in the client's names, catalog by catalog. A catalog known to be down is not
        asked: its cached names, else the names it last listed, answer for it at once. The others are asked at once
        and waited for together (:meth:`CatalogHealth.awaited`); one that fails or does not answer in time is down
        from then on, and is answered for the same way."""
        endpoint, health = self.endpoint, self.endpoint.health
        catalogs = [catalog for catalog in endpoint.names.catalogs() if endpoint.may_read(self.caller, catalog)]
        lost = {catalog: outage for catalog in catalogs if (outage := health.lost(catalog)) is not None}
        listings = {catalog: endpoint.database_listing(catalog) for catalog in catalogs if catalog not in lost}
        answers = health.awaited(listings, endpoint.listing_wait)
        names: list[str] = []
        unanswered = []
        for catalog in catalogs:
            databases = answers.get(catalog)
            if databases is None:
                databases = health.remembered(catalog)
                outage = lost.get(catalog) or health.lost(catalog)
                unanswered.append(f"{catalog}: {outage.reason if outage is not None else 'no answer'}")
                _log.debug("get_all_databases answers for catalog %s with the %d databases it last listed (%s)",
                           catalog, len(databases), unanswered[-1])
            names.extend(endpoint.names.external(catalog, database) for database in databases)
        if unanswered and not names:
            raise MetastoreUnavailableError("no catalog answered: " + "; ".join(unanswered))
        return names


def _meta(database: str, table: ttypes.Table) -> ttypes.TableMeta:
    return ttypes.TableMeta(dbName=database, tableName=table.tableName, tableType=table.tableType,
                            comments=(table.parameters or {}).get("comment"))


def _cached_meta(live: ExternalCatalog, databases: list[tuple[str, Route]],
                 tables: re.Pattern[str]) -> dict[str, list[ttypes.TableMeta]]:
    """The matching tables of each database whose names and matching tables the catalog's caches all hold."""
    caches = live.caches
    found: dict[str, list[ttypes.TableMeta]] = {}
    for external, route in databases:
        names = caches.names.peek((route.database,))
        if names is None:
            continue
        metas = []
        for name in names:
            if not tables.fullmatch(name):
                continue
            metadata = caches.schema.peek((route.database, name), used=True)
            if metadata is None:
                break
            metas.append(_meta(external, metadata.table))
        else:
            found[external] = metas
    return found


def _asked_pattern(primary: bool, databases: list[tuple[str, Route]], missing: list[tuple[str, Route]],
                   db_patterns: str | None) -> str:
    """The database pattern the catalog's metastore is asked: the uncached databases by name when they are a few of
    those the client's pattern named; else that pattern, which the primary's databases match alike on both sides
    (another catalog's are named with its prefix, so they are named one by one, or all as ``*``)."""
    if len(missing) < len(databases) and len(missing) <= _NAMED_DATABASES:
        return "|".join(route.database for _, route in missing)
    pattern = _bare_pattern(db_patterns) or "*"
    if primary or pattern == "*":
        return pattern
    return "|".join(route.database for _, route in missing)


def _bare_pattern(pattern: str | None) -> str | None:
    """The client's database pattern without a Hive 3 catalog (``@hive#sales*``): what the primary's metastore is
    asked, its databases being named alike on both sides."""
    if pattern is not None and pattern.startswith("@") and "#" in pattern:
        pattern = pattern.split("#", 1)[1]
        return None if pattern in ("", "!") else pattern
    return pattern or None
