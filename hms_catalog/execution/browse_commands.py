"""USE, SHOW DATABASES/TABLES, DESCRIBE and REFRESH: statements that read (or forget) metastore objects."""

from __future__ import annotations

import re

from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session, register
from hms_catalog.formats.detect import TableKind
from hms_catalog.model import ExternalTable
from hms_catalog.sql import ast, ast_ddl

__all__ = ["DESCRIBE_COLUMNS", "like_matcher", "pattern_matches", "describe_rows"]

DESCRIBE_COLUMNS = ("Field", "Type", "Nullable", "PartitionKey", "Comment")


def like_matcher(pattern: str) -> re.Pattern[str]:
    """SQL LIKE (``%`` any run, ``_`` one character, ``\\`` escapes), case-insensitive as HMS names are."""
    out = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            out.append(re.escape(next(chars, "\\")))
        elif char == "%":
            out.append(".*")
        elif char == "_":
            out.append(".")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


def pattern_matches(pattern: str, name: str) -> bool:
    """SHOW DATABASES' and SHOW TABLES' patterns as Spark's and Hive's read them: ``*`` any run, ``|`` between
    alternatives, without case; LIKE's ``%`` and ``_`` too, which users of other engines type."""
    return any(like_matcher(part.strip().replace("*", "%")).fullmatch(name) for part in pattern.split("|"))


def describe_rows(table: ExternalTable) -> list[tuple[str, str, bool, bool, str]]:
    """The translated schema: data columns then partition columns, as (Field, Type, Nullable, PartitionKey, Comment).

    A column Spark cannot represent keeps its source type text and says why in its comment.
    """
    rows = []
    for column in table.schema.columns:
        comment = column.comment
        if column.problem:
            comment = f"{comment} [unreadable: {column.problem}]".strip()
        rows.append((column.name, column.spark_type_string(), column.nullable, column.partition, comment))
    return rows


@register(ast.UseDatabase)
def use_database(session: Session, statement: ast.UseDatabase) -> Result:
    database = session.catalog(statement.target.catalog).database(statement.target.database)
    _ = database.definition  # fails here, not later, when the database does not exist
    session.set_position(database.catalog, database.name)
    return Result.done(f"using {database.full_name}")


@register(ast.ShowDatabases)
def show_databases(session: Session, statement: ast.ShowDatabases) -> Result:
    names = session.catalog(statement.catalog).database_names()
    if statement.pattern is not None:
        names = tuple(name for name in names if pattern_matches(statement.pattern, name))
    return Result.table(("Database",), [(name,) for name in names])


@register(ast.ShowTables)
def show_tables(session: Session, statement: ast.ShowTables) -> Result:
    names = session.database(statement.database).table_names()
    if statement.pattern is not None:
        names = tuple(name for name in names if pattern_matches(statement.pattern, name))
    return Result.table(("Table",), [(name,) for name in names])


@register(ast_ddl.ShowViews)
def show_views(session: Session, statement: ast_ddl.ShowViews) -> Result:
    """The views among the database's tables (their definitions loaded in batches, as SHOW TABLE STATUS loads them)."""
    database = session.database(statement.database)
    names = database.table_names()
    if statement.pattern is not None:
        names = tuple(name for name in names if pattern_matches(statement.pattern, name))
    views = [m.table.tableName.lower() for m in database.tables_metadata(names) if m.detection.kind is TableKind.VIEW]
    return Result.table(("View",), [(name,) for name in sorted(views)])


@register(ast_ddl.ShowColumns)
def show_columns(session: Session, statement: ast_ddl.ShowColumns) -> Result:
    """The table's columns by name, partition columns last, as Spark's SHOW COLUMNS lists them."""
    return Result.table(("Column",), [(column.name,) for column in session.table(statement.table).schema.columns])


@register(ast.DescribeTable)
def describe_table(session: Session, statement: ast.DescribeTable) -> Result:
    return Result.table(DESCRIBE_COLUMNS, describe_rows(session.table(statement.table)))


@register(ast.RefreshCatalog)
def refresh_catalog(session: Session, statement: ast.RefreshCatalog) -> Result:
    catalog = session.manager.refresh(session.catalog(statement.name).name)
    return Result.done(f"catalog '{catalog.name}' refreshed")


@register(ast.RefreshDatabase)
def refresh_database(session: Session, statement: ast.RefreshDatabase) -> Result:
    catalog = session.manager.refresh(session.catalog(statement.target.catalog).name, statement.target.database)
    return Result.done(f"database '{catalog.name}.{statement.target.database.lower()}' refreshed")


@register(ast.RefreshTable)
def refresh_table(session: Session, statement: ast.RefreshTable) -> Result:
    table = session.table(statement.table)
    session.manager.refresh(table.catalog, table.database, table.name)
    return Result.done(f"table '{table.full_name}' refreshed")


