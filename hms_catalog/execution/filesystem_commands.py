"""ALTER TABLE ... REFRESH METADATA | PROMOTE | SET FORMAT: a filesystem catalog's table formats."""

from __future__ import annotations

from hms_catalog.errors import ConfigurationError
from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session, register
from hms_catalog.filesystem.client import FilesystemClient
from hms_catalog.sql import ast

__all__ = ["alter_table_format"]


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
