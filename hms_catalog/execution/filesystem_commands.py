"""Tables made from folders: ALTER TABLE ... REFRESH METADATA | PROMOTE | SET FORMAT on a filesystem
catalog's tables, and CREATE TABLE ... LIKE PATH registering a folder in a metastore."""

from __future__ import annotations

from hms_catalog.client.metastore import MetastoreClient
from hms_catalog.errors import AlreadyExistsError, ConfigurationError, NotFoundError, UnsupportedTableError
from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session, register
from hms_catalog.filesystem.client import FilesystemClient
from hms_catalog.filesystem.config import SAMPLE_FILES_DEFAULT
from hms_catalog.filesystem.detect import detect_table, list_table, partition_folders
from hms_catalog.filesystem.tables import HIVE_FORMATS, SPARK_PROVIDERS, partition_struct, table_struct
from hms_catalog.sql import ast
from hms_catalog.storage.locations import join_location

__all__ = ["alter_table_format", "create_table_like_path"]

PARTITION_BATCH = 500


@register(ast.AlterTableFormat)
def alter_table_format(session: Session, statement: ast.AlterTableFormat) -> Result:
    table = session.table(statement.table)
    catalog = session.manager.catalog(table.catalog)
    client = catalog.client
    if not isinstance(client, FilesystemClient):
        raise ConfigurationError(
            f"ALTER TABLE ... {statement.action} applies to filesystem catalogs; '{catalog.name}' reads a metastore "
            f"(use REFRESH TABLE {table.full_name})"
        )
    if statement.action == "PROMOTE":
        kept = client.layout(table.database, table.name)
        if kept is not None:
            return Result.done(f"table '{table.full_name}' is already promoted as {kept.format} "
                               "(ALTER TABLE ... REFRESH METADATA detects it again)")
        layout = client.promote(table.database, table.name)
        done = "promoted"
    elif statement.action == "REFRESH METADATA":
        layout = client.promote(table.database, table.name)
        done = "detected again"
    else:
        layout = client.set_format(table.database, table.name, dict(statement.properties))
        done = "format set"
    # Every process drops what it cached of the table; a promotion also changes the database's table list.
    if statement.action == "PROMOTE":
        session.manager.refresh(catalog.name, table.database)
    else:
        session.manager.refresh(catalog.name, table.database, table.name)
    return Result.done(f"table '{table.full_name}' {done}: {layout.format} ({layout.reason})")


@register(ast.CreateTableLikePath)
def create_table_like_path(session: Session, statement: ast.CreateTableLikePath) -> Result:
    """Register the folder at ``path`` in the target metastore as an external table, with its partitions.

    The table is created first, then its partitions in batches; if a batch fails the table is dropped
    again (its files are never touched), so a failure leaves nothing half-registered.
    """
    target = session.table(statement.table)
    catalog = session.manager.catalog(target.catalog)
    client = catalog.client
    if not isinstance(client, MetastoreClient):
        raise ConfigurationError(f"CREATE TABLE ... LIKE PATH registers tables in a metastore; '{catalog.name}' is not an hms catalog")
    try:
        filesystem, path = catalog.storage.resolve(statement.path)  # the target catalog's settings reach it
        listing = list_table(filesystem, path)
    except OSError as error:  # the store refused or is unreachable: name the catalog whose settings were used
        raise catalog.storage.error(statement.path, error, "list") from error
    except ValueError as error:
        raise ConfigurationError(f"cannot open {statement.path}: {error}") from None
    if listing is None:
        raise NotFoundError("path", statement.path)
    if listing.single_file:
        raise ConfigurationError(f"{statement.path} is a file; a metastore table is a folder: give the folder holding it")
    layout = detect_table(filesystem, listing, SAMPLE_FILES_DEFAULT)
    if layout.format not in HIVE_FORMATS and layout.format not in SPARK_PROVIDERS:
        detail = layout.reason if layout.format == "unknown" else f"{layout.format} has no Hive table equivalent to register"
        raise UnsupportedTableError(f"{statement.path} cannot become a metastore table: {detail}")
    table = table_struct(target.database, target.name, join_location(statement.path, listing.root), layout,
                         detected_key="hms_catalog.registered_from")
    try:
        client.create_table(table)
    except AlreadyExistsError:
        if statement.if_not_exists:
            return Result.done(f"table '{target.full_name}' already exists")
        raise
    keys = [name for name, _ in layout.partition_keys]
    folders = partition_folders(listing, keys) if keys else {}
    names = list(folders)
    added = 0
    try:
        for start in range(0, len(names), PARTITION_BATCH):
            batch = names[start : start + PARTITION_BATCH]
            added += client.add_partitions([partition_struct(table, name, folders[name]) for name in batch])
            if session.progress is not None:
                session.progress("partitions registered", added, len(names))
    except BaseException as error:
        try:
            client.drop_table(target.database, target.name)
        except Exception as cleanup:  # noqa: BLE001 - reported with the error that made it necessary
            error.add_note(f"dropping {target.full_name} again failed too ({cleanup}): drop it by hand")
        raise
    session.manager.refresh(catalog.name, target.database)
    partitions = f" and {added} partitions" if keys else ""
    return Result.done(f"table '{target.full_name}' created as {layout.format} with {len(layout.columns)} columns{partitions}")
