"""CREATE, ALTER and DROP DATABASE as catalog events.

Property lists are read as Spark reads them: the keys it reserves (``location``, ``owner``, ``collation``) are refused
(:mod:`hms_catalog.ddl.reserved`), and ``comment`` is the database's description, not a property: CREATE takes it as
the description when no COMMENT gives one, ALTER leaves the description as it was (as Spark's own ALTER NAMESPACE on a
Hive metastore does, which has no call to change it).
"""

from __future__ import annotations

import copy
from dataclasses import replace

from hms_catalog.cache.versions import CatalogObject, ChangeKind
from hms_catalog.ddl.context import DdlContext, DdlOutcome
from hms_catalog.ddl.locations import check_location, is_relative, resolved_location
from hms_catalog.ddl.reserved import check_namespace_keys
from hms_catalog.ddl.specs import DatabaseSpec, Pairs
from hms_catalog.ddl.structs import database_struct
from hms_catalog.errors import AlreadyExistsError, ConfigurationError, NotFoundError

__all__ = ["create_database", "alter_database", "drop_database"]


def create_database(ctx: DdlContext, spec: DatabaseSpec) -> DdlOutcome:
    name = spec.name.lower()
    check_namespace_keys((key for key, _ in spec.properties), f"database '{name}' DBPROPERTIES")
    if spec.location is not None:
        location = spec.location
        if is_relative(location):  # under the warehouse, as Spark resolves it: where the default database lives
            warehouse = ctx.catalog.client.get_database("default").locationUri
            location = resolved_location(location, warehouse, f"database '{name}'", "database 'default'")
        check_location(location, f"database '{name}'", ctx.catalog.storage)
        spec = replace(spec, location=location)
    with ctx.changing([(name, "")], events=[("CREATE_DATABASE", name, "", 1)]) as changes:
        try:
            ctx.client.create_database(database_struct(spec))
        except AlreadyExistsError:
            if not spec.if_not_exists:
                raise
            return ctx.outcome(f"database '{ctx.catalog.name}.{name}' already exists; nothing changed")
        changes.append((ChangeKind.ADDED, CatalogObject.for_database(name)))
    return ctx.outcome(f"database '{ctx.catalog.name}.{name}' created", changes)


def alter_database(ctx: DdlContext, name: str, properties: Pairs, *, location: str | None = None) -> DdlOutcome:
    """Properties merged with the existing ones, or (``location``) a new location for the tables created from now
    on: existing tables stay where they are, as in Spark and Hive."""
    name = name.lower()
    check_namespace_keys((key for key, _ in properties), f"database '{name}' DBPROPERTIES")
    if location is not None:
        check_location(location, f"database '{name}'", ctx.catalog.storage)
    with ctx.changing([(name, "")], events=[("ALTER_DATABASE", name, "", 1)]) as changes:
        before = ctx.catalog.client.get_database(name)
        current = copy.copy(before)  # its fields are replaced below, never changed in place
        current.parameters = {**(current.parameters or {}), **{k: v for k, v in properties if k != "comment"}}
        if location is not None:
            current.locationUri = location
        ctx.client.alter_database(name, current, before=before)  # refused, and undone, where the metastore keeps the location
        changes.append((ChangeKind.CHANGED, CatalogObject.for_database(name)))
    if location is not None:
        return ctx.outcome(f"database '{ctx.catalog.name}.{name}' location set to {location}", changes)
    keys = ", ".join(key for key, _ in properties if key != "comment")
    kept = " (its comment is no property: kept as it was)" if any(key == "comment" for key, _ in properties) else ""
    return ctx.outcome(f"database '{ctx.catalog.name}.{name}' properties set: {keys}{kept}", changes)


def drop_database(ctx: DdlContext, name: str, *, if_exists: bool = False, cascade: bool = False) -> DdlOutcome:
    """RESTRICT (the default) refuses a database that has tables, naming them; CASCADE drops them too, and
    the files of managed ones, as Hive does."""
    name = name.lower()
    try:
        ctx.catalog.client.get_database(name)
    except NotFoundError:
        if if_exists:
            return ctx.outcome(f"database '{ctx.catalog.name}.{name}' does not exist; nothing changed")
        raise
    tables = sorted(ctx.catalog.client.get_all_tables(name))
    if tables and not cascade:
        shown = ", ".join(tables[:10]) + (f" and {len(tables) - 10} more" if len(tables) > 10 else "")
        raise ConfigurationError(f"database '{ctx.catalog.name}.{name}' is not empty: it has {len(tables)} table(s) "
                                 f"({shown}); drop them first or use DROP DATABASE ... CASCADE")
    events = [("DROP_TABLE", name, table, 1) for table in tables] + [("DROP_DATABASE", name, "", 1)]
    with ctx.changing([(name, "")], events=events) as changes:
        ctx.client.drop_database(name, delete_data=True, cascade=cascade)
        changes.append((ChangeKind.DROPPED, CatalogObject.for_database(name)))
    if tables:
        return ctx.outcome(f"database '{ctx.catalog.name}.{name}' dropped with its {len(tables)} table(s)", changes)
    return ctx.outcome(f"database '{ctx.catalog.name}.{name}' dropped", changes)
