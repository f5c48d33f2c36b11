"""CREATE TABLE (Hive, Spark data source and Iceberg tables), CREATE TABLE LIKE, DROP TABLE and RENAME as
catalog events.

A table's files go to ``<database location>/<table>`` unless LOCATION says otherwise, where Spark and
Hive put a managed table's. What cannot be changed safely is refused before the metastore is asked:
views and tables whose format the catalog cannot tell (UNKNOWN) or transactional tables are not dropped,
renamed or altered by a statement here whose effect on their files is not the one their engine expects.
"""

from __future__ import annotations

import dataclasses

from hms_catalog.cache.versions import CatalogObject, ChangeKind
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.commits.rename_completion import rename_intent
from hms_catalog.ddl.context import DdlContext, DdlOutcome, table_locked
from hms_catalog.ddl.iceberg import create_iceberg_table, iceberg_catalog
from hms_catalog.ddl.locations import check_location, delete_remaining, is_relative, resolved_location
from hms_catalog.ddl.reserved import check_table_keys
from hms_catalog.ddl.specs import TableSpec
from hms_catalog.ddl.structs import like_struct, provider_of, table_struct
from hms_catalog.errors import AlreadyExistsError, ConfigurationError, NotFoundError, UnsupportedTableError
from hms_catalog.formats.detect import TableFormat, TableKind, detect
from hms_catalog.formats.storage import STORAGE_FORMATS

__all__ = ["create_table", "create_table_like", "drop_table", "rename_table", "default_location", "changeable_table"]


def default_location(ctx: DdlContext, database: str, table: str) -> str:
    """Where a table of ``database`` goes when no LOCATION is given: under the database's location."""
    try:
        found = ctx.catalog.client.get_database(database)
    except NotFoundError as error:
        raise NotFoundError("database", f"{ctx.catalog.name}.{database}", "create it first with CREATE DATABASE") from error
    root = (found.locationUri or "").rstrip("/")
    if not root:
        raise ConfigurationError(f"database '{database}' has no location; give the table a LOCATION")
    return f"{root}/{table.lower()}"


def _path_option_as_location(spec: TableSpec, full: str) -> TableSpec:
    """A data source table's ``OPTIONS (path '..')`` is its LOCATION, as Spark reads it (and makes the table external)."""
    options = dict(spec.options)
    path = next((options.pop(key) for key in list(options) if key.lower() == "path"), None)
    if path is None:
        return spec
    if spec.location is not None:
        raise ConfigurationError(f"table '{full}': LOCATION and OPTIONS (path ..) both say where the table is; give one")
    return dataclasses.replace(spec, location=path, options=tuple(options.items()))


def _given_location(ctx: DdlContext, database: str, full: str, location: str | None) -> str | None:
    """A table's LOCATION, a relative one resolved under its database's as Spark resolves it, and checked."""
    if location is None:
        return None
    if is_relative(location):
        location = resolved_location(location, default_location(ctx, database, "").rstrip("/"), f"table '{full}'",
                                     f"database '{database}'")
    check_location(location, f"table '{full}'", ctx.catalog.storage)
    return location


def changeable_table(ctx: DdlContext, database: str, table: str, action: str) -> ttypes.Table:
    """The metastore's table, or an error saying why ``action`` must not touch it."""
    struct = ctx.catalog.client.get_table(database, table)
    detection = detect(struct)
    name = f"{ctx.catalog.name}.{database}.{table}"
    if detection.kind is not TableKind.TABLE:
        raise UnsupportedTableError(f"{name} is a {detection.kind.value}, not a table: {action} would not do what its engine expects")
    if detection.transactional:
        raise UnsupportedTableError(f"{name} is a transactional ({detection.transactional}) table: {action} must go through Hive, "
                                    "which keeps its delta files consistent")
    if detection.format is TableFormat.UNKNOWN and action != "DROP TABLE" and not _hive_storage(struct):
        raise UnsupportedTableError(f"{name} cannot be changed here: {detection.reason}")
    return struct


def _hive_storage(struct: ttypes.Table) -> bool:
    """A Hive table in one of Hive's own storage formats that the catalog makes but does not read (SEQUENCEFILE, RCFILE):
    its definition lives in the metastore alone, which Hive's and Spark's DDL change as the catalog's does, so
    it is changed here too; other unknown tables (another engine's storage handler) are not."""
    input_format = struct.sd.inputFormat if struct.sd is not None else None
    return not (struct.parameters or {}).get("spark.sql.sources.provider") and \
        any(input_format == stored.input_format for stored in STORAGE_FORMATS.values())


def create_table(ctx: DdlContext, spec: TableSpec) -> DdlOutcome:
    database, name = spec.database.lower(), spec.name.lower()
    full = f"{ctx.catalog.name}.{database}.{name}"
    if not spec.columns:
        raise ConfigurationError(f"table '{full}' needs at least one column")
    check_table_keys((key for key, _ in (*spec.properties, *spec.options)), f"table '{full}' TBLPROPERTIES/OPTIONS")
    spec = _path_option_as_location(spec, full)
    location = _given_location(ctx, database, full, spec.location)
    iceberg = (spec.provider or "").lower() == "iceberg"
    if not spec.external and location is None:
        location = default_location(ctx, database, name)
    with ctx.changing([(database, name)], events=[("CREATE_TABLE", database, name, 1)]) as changes:
        try:
            if iceberg:
                create_iceberg_table(ctx.catalog, dataclasses.replace(spec, database=database, name=name), location)
            else:
                ctx.client.create_table(table_struct(dataclasses.replace(spec, location=location if spec.location else None), location))
        except AlreadyExistsError:
            if not spec.if_not_exists:
                raise
            return ctx.outcome(f"table '{full}' already exists; nothing changed")
        changes.append((ChangeKind.ADDED, CatalogObject.for_table(database, name)))
    provider = provider_of(spec)
    kind = "Iceberg table" if iceberg else f"{provider} table" if provider else f"{(spec.stored_as or 'TEXTFILE').upper()} table"
    partitioned = spec.partition_columns or spec.partition_transforms
    return ctx.outcome(f"{'external ' if spec.external else ''}{kind} '{full}' created with {len(spec.columns)} column(s)"
                       f"{', partitioned' if partitioned else ''}", changes)


def create_table_like(ctx: DdlContext, database: str, name: str, source: ttypes.Table, *, if_not_exists: bool = False,
                      location: str | None = None, external: bool = False, storage: TableSpec | None = None) -> DdlOutcome:
    """A new, empty table with ``source``'s columns and partitioning, at its own location, as Spark's CREATE TABLE
    LIKE makes it: the storage is the source's unless ``storage`` names one (USING, STORED AS, ROW FORMAT), the
    table properties are only those ``storage`` gives (the source's are not copied), and a LOCATION makes it
    external."""
    database, name = database.lower(), name.lower()
    full = f"{ctx.catalog.name}.{database}.{name}"
    if storage is not None:
        check_table_keys((key for key, _ in (*storage.properties, *storage.options)), f"table '{full}' TBLPROPERTIES/OPTIONS")
    if detect(source).format is TableFormat.ICEBERG:
        raise UnsupportedTableError(f"CREATE TABLE ... LIKE an Iceberg table is not supported yet: create {full} with its columns "
                                    "and USING iceberg")
    given = location = _given_location(ctx, database, full, location)
    if location is None and not external:
        location = default_location(ctx, database, name)
    spec = dataclasses.replace(storage or TableSpec("", "", ()), database=database, name=name, location=given, external=external)
    table = like_struct(source, spec, location)
    with ctx.changing([(database, name)], events=[("CREATE_TABLE", database, name, 1)]) as changes:
        try:
            ctx.client.create_table(table)
        except AlreadyExistsError:
            if not if_not_exists:
                raise
            return ctx.outcome(f"table '{full}' already exists; nothing changed")
        changes.append((ChangeKind.ADDED, CatalogObject.for_table(database, name)))
    return ctx.outcome(f"table '{full}' created like {source.dbName}.{source.tableName}", changes)


@table_locked
def drop_table(ctx: DdlContext, database: str, name: str, *, if_exists: bool = False, purge: bool = False) -> DdlOutcome:
    """An external table keeps its files; a managed one loses them (what remains is named). ``purge`` also
    deletes an Iceberg table's files."""
    database, name = database.lower(), name.lower()
    full = f"{ctx.catalog.name}.{database}.{name}"
    try:
        struct = changeable_table(ctx, database, name, "DROP TABLE")
    except NotFoundError:
        if if_exists:
            return ctx.outcome(f"table '{full}' does not exist; nothing changed")
        raise
    managed = struct.tableType == "MANAGED_TABLE" and (struct.parameters or {}).get("EXTERNAL", "").upper() != "TRUE"
    location = struct.sd.location if struct.sd else None
    iceberg = detect(struct).format is TableFormat.ICEBERG
    with ctx.changing([(database, name)], events=[("DROP_TABLE", database, name, 1)]) as changes:
        if iceberg:
            iceberg_catalog(ctx.catalog).drop_table((database, name))  # pyiceberg's purge_table does not delete yet
        else:
            ctx.client.drop_table(database, name, delete_data=True)
        changes.append((ChangeKind.DROPPED, CatalogObject.for_table(database, name)))
    if iceberg and (purge or managed):  # every file under the table's location: data, deletes and metadata
        left = delete_remaining(location, ctx.catalog.storage)
        if left:
            return ctx.outcome(f"table '{full}' dropped, but files of it remain under {location} (e.g. "
                               f"{', '.join(left)}): delete them by hand", changes)
        return ctx.outcome(f"table '{full}' dropped, its files deleted", changes)
    if managed and not iceberg:
        left = delete_remaining(location, ctx.catalog.storage)
        if left:
            return ctx.outcome(f"table '{full}' dropped, but files of it remain under {location} (e.g. {', '.join(left)}): "
                               "delete them by hand", changes)
        return ctx.outcome(f"table '{full}' dropped with its files", changes)
    return ctx.outcome(f"table '{full}' dropped, its files kept", changes)


def rename_table(ctx: DdlContext, database: str, name: str, new_database: str, new_name: str) -> DdlOutcome:
    """Rename within the catalog; a managed table's folder moves with it, as Hive moves it."""
    database, name, new_database, new_name = database.lower(), name.lower(), new_database.lower(), new_name.lower()
    full, new_full = f"{ctx.catalog.name}.{database}.{name}", f"{ctx.catalog.name}.{new_database}.{new_name}"
    names = [(database, name), (new_database, new_name)]
    with ctx.locks.hold(*names):
        struct = changeable_table(ctx, database, name, "RENAME")  # read under both names' locks
        if (database, name) == (new_database, new_name):
            raise ConfigurationError(f"table '{full}' already has that name")
        serde = struct.sd.serdeInfo if struct.sd is not None else None
        managed = struct.tableType == "MANAGED_TABLE" and (struct.parameters or {}).get("EXTERNAL", "").upper() != "TRUE"
        follow = managed and serde is not None and "path" in (serde.parameters or {})
        events = [("ALTER_TABLE", database, name, 1)] + ([("ALTER_TABLE", new_database, new_name, 1)] if follow else [])
        with ctx.changing(names, events=events) as changes, ctx.undoable(changes, database, name) as log:
            renamed = ttypes.Table(**{**struct.__dict__, "dbName": new_database, "tableName": new_name})
            # Written down whole first: a restart after a kill completes it rather than undoing it (the metastore may
            # still be renaming it; see hms_catalog.commits.rename_completion).
            log.will_complete("rename_table", **rename_intent(struct, new_database, new_name, follow=follow))
            log.will("renamed_table", database=database, table=name, new_database=new_database, new_table=new_name)
            ctx.client.alter_table(database, name, renamed)
            if follow:  # a second call: a kill between the two renames the table back (and its folder)
                _follow_path(ctx, new_database, new_name)
            changes += [(ChangeKind.DROPPED, CatalogObject.for_table(database, name)),
                        (ChangeKind.ADDED, CatalogObject.for_table(new_database, new_name))]
    return ctx.outcome(f"table '{full}' renamed to '{new_full}'", changes)


def _follow_path(ctx: DdlContext, database: str, name: str) -> None:
    """A Spark data source table's ``path`` follows the folder the metastore moved it to, as Spark's rename keeps it."""
    moved = ctx.catalog.client.get_table(database, name)
    serde = moved.sd.serdeInfo if moved.sd is not None else None
    if serde is None or "path" not in (serde.parameters or {}) or serde.parameters["path"] == moved.sd.location:
        return
    serde.parameters = {**serde.parameters, "path": moved.sd.location}
    ctx.client.alter_table(database, name, moved)
