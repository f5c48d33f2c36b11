"""USE, SHOW DATABASES/TABLES, DESCRIBE and REFRESH: statements that read (or forget) metastore objects."""

from __future__ import annotations

import re

from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session, register
from hms_catalog.model import ExternalTable
from hms_catalog.sql import ast

__all__ = ["DESCRIBE_COLUMNS", "like_matcher", "describe_rows"]

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
        # Spark's and Hive's patterns: ``*`` any run, ``|`` between alternatives (and LIKE's ``%`` and ``_``).
        matchers = [like_matcher(part.strip().replace("*", "%")) for part in statement.pattern.split("|")]
        names = tuple(name for name in names if any(m.fullmatch(name) for m in matchers))
    return Result.table(("Database",), [(name,) for name in names])


@register(ast.ShowTables)
def show_tables(session: Session, statement: ast.ShowTables) -> Result:
    names = session.database(statement.database).table_names()
    if statement.pattern is not None:
        matcher = like_matcher(statement.pattern)
        names = tuple(name for name in names if matcher.fullmatch(name))
    return Result.table(("Table",), [(name,) for name in names])


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


