"""The DDL statements: names resolved against the session, then the operations of :mod:`hms_catalog.ddl`.

Each handler is thin: it resolves ``[[catalog.]database.]table`` as every statement does, fills the
spec's names, runs the operation in a :class:`DdlContext` whose announcements reach the other processes
of this home, and answers one row: what was done and the catalog's version after it. With ``SET
sync_ddl = true`` and a service that tracks the followers of its change feed, the answer waits until
every live follower has seen that version.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from hms_catalog.ddl.alter import alter_columns_or_properties
from hms_catalog.ddl.context import DdlContext, DdlOutcome
from hms_catalog.ddl.databases import alter_database, create_database, drop_database
from hms_catalog.ddl.partitions import add_partitions, drop_partitions, recover_partitions
from hms_catalog.ddl.show import missing_property, show_create_table, spark_properties
from hms_catalog.ddl.specs import AddPartitions, DropPartitions, RecoverPartitions
from hms_catalog.ddl.tables import create_table, create_table_like, drop_table, rename_table
from hms_catalog.errors import ConfigurationError
from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session, register
from hms_catalog.model import ExternalCatalog
from hms_catalog.sql import ast, ast_ddl

__all__ = ["DDL_COLUMNS", "SYNC_DDL", "SYNC_DDL_WAITER", "ddl_context"]

DDL_COLUMNS = ("Result", "Version")
SYNC_DDL = "sync_ddl"
SYNC_DDL_WAITER = "sync_ddl_waiter"  # a session extra: (catalog, version) -> None, waits for the feed's followers

SyncWaiter = Callable[[str, int], None]


def ddl_context(session: Session, catalog: ExternalCatalog) -> DdlContext:
    return DdlContext(catalog, session.manager.announcer(catalog))


def _answer(session: Session, catalog: ExternalCatalog, outcome: DdlOutcome) -> Result:
    message = outcome.message
    if session.options.get(SYNC_DDL, "false").lower() == "true" and outcome.changes:
        waiter: SyncWaiter | None = session.extras.get(SYNC_DDL_WAITER)
        if waiter is None:
            message += " (sync_ddl: no change feed to wait for here; it applies through a catalog service)"
        else:
            waiter(catalog.name, outcome.version)
            message += " (seen by every follower of the change feed)"
    return Result.table(DDL_COLUMNS, [(message, outcome.version)], message=message)


def _database(session: Session, target: ast.DatabaseName) -> tuple[ExternalCatalog, str]:
    catalog = session.catalog(target.catalog)
    return catalog, target.database.lower()


def _table(session: Session, name: ast.TableName) -> tuple[ExternalCatalog, str, str]:
    handle = session.table(name)
    return session.catalog(handle.catalog), handle.database, handle.name


@register(ast_ddl.CreateDatabase)
def run_create_database(session: Session, statement: ast_ddl.CreateDatabase) -> Result:
    catalog, name = _database(session, statement.target)
    outcome = create_database(ddl_context(session, catalog), dataclasses.replace(statement.spec, name=name))
    return _answer(session, catalog, outcome)


@register(ast_ddl.DropDatabase)
def run_drop_database(session: Session, statement: ast_ddl.DropDatabase) -> Result:
    catalog, name = _database(session, statement.target)
    if session.current_catalog == catalog.name and session.current_database == name:
        session.set_position(catalog.name, None)
    outcome = drop_database(ddl_context(session, catalog), name, if_exists=statement.if_exists, cascade=statement.cascade)
    return _answer(session, catalog, outcome)


@register(ast_ddl.AlterDatabase)
def run_alter_database(session: Session, statement: ast_ddl.AlterDatabase) -> Result:
    catalog, name = _database(session, statement.target)
    outcome = alter_database(ddl_context(session, catalog), name, statement.properties, location=statement.location)
    return _answer(session, catalog, outcome)


@register(ast_ddl.CreateTable)
def run_create_table(session: Session, statement: ast_ddl.CreateTable) -> Result:
    catalog, database, name = _table(session, statement.table)
    spec = dataclasses.replace(statement.spec, database=database, name=name)
    return _answer(session, catalog, create_table(ddl_context(session, catalog), spec))


@register(ast_ddl.CreateTableLike)
def run_create_table_like(session: Session, statement: ast_ddl.CreateTableLike) -> Result:
    catalog, database, name = _table(session, statement.table)
    source = session.table(statement.source)
    if source.catalog != catalog.name:
        raise ConfigurationError(f"CREATE TABLE ... LIKE copies a table of the same catalog; {source.full_name} is in another")
    outcome = create_table_like(ddl_context(session, catalog), database, name, source.metadata.table,
                                if_not_exists=statement.if_not_exists, location=statement.location, external=statement.external,
                                storage=statement.storage)
    return _answer(session, catalog, outcome)


@register(ast_ddl.DropTable)
def run_drop_table(session: Session, statement: ast_ddl.DropTable) -> Result:
    catalog, database, name = _table(session, statement.table)
    outcome = drop_table(ddl_context(session, catalog), database, name, if_exists=statement.if_exists, purge=statement.purge)
    return _answer(session, catalog, outcome)


@register(ast_ddl.AlterTable)
def run_alter_table(session: Session, statement: ast_ddl.AlterTable) -> Result:
    catalog, database, name = _table(session, statement.table)
    ctx = ddl_context(session, catalog)
    change = statement.change
    if isinstance(change, AddPartitions):
        outcome = add_partitions(ctx, database, name, change)
    elif isinstance(change, DropPartitions):
        outcome = drop_partitions(ctx, database, name, change)
    elif isinstance(change, RecoverPartitions):
        outcome = recover_partitions(ctx, database, name, change)
    else:
        outcome = alter_columns_or_properties(ctx, database, name, change)
    return _answer(session, catalog, outcome)


@register(ast_ddl.AlterTableRename)
def run_rename_table(session: Session, statement: ast_ddl.AlterTableRename) -> Result:
    catalog, database, name = _table(session, statement.table)
    new = statement.new
    if new.catalog is not None and new.catalog.lower() != catalog.name:
        raise ConfigurationError(f"RENAME TO stays within catalog '{catalog.name}'; '{new.catalog}' is another catalog")
    outcome = rename_table(ddl_context(session, catalog), database, name, (new.database or database), new.table)
    return _answer(session, catalog, outcome)


@register(ast_ddl.ShowCreateTable)
def run_show_create_table(session: Session, statement: ast_ddl.ShowCreateTable) -> Result:
    table = session.table(statement.table)
    text = show_create_table(f"{table.catalog}.{table.database}.{table.name}", table.metadata)
    return Result.table(("createtab_stmt",), [(text,)])


@register(ast_ddl.ShowTblProperties)
def run_show_tblproperties(session: Session, statement: ast_ddl.ShowTblProperties) -> Result:
    """What Spark's own SHOW TBLPROPERTIES answers for the table (:func:`hms_catalog.ddl.show.spark_properties`); a key
    the table lacks answers Spark's sentence in place of its value."""
    table = session.table(statement.table)
    shown = spark_properties(table.metadata.table)
    if statement.key is not None:
        return Result.table(("key", "value"), [(statement.key, shown.get(statement.key, missing_property(table.full_name, statement.key)))])
    return Result.table(("key", "value"), list(shown.items()))


@register(ast_ddl.SetOption)
def run_set(session: Session, statement: ast_ddl.SetOption) -> Result:
    key = statement.key.lower()
    if statement.value is None:
        return Result.table(("key", "value"), [(key, session.options.get(key, "<undefined>"))])
    session.options[key] = statement.value
    return Result.done(f"{key} = {statement.value}")
