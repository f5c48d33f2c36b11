"""Turn catalog DSL text into statement nodes.

Statements are found through one table keyed by their leading keywords (``("SHOW", "TABLES")``); the
dispatcher walks those keywords one token at a time, so adding a statement is one parse function and one
table entry, and "expected ..." messages list exactly what the table allows at that point.  The catalog's
own statements are parsed here; the DDL's (databases, tables, partitions, SET) in ``_ddl_parser`` and
``_alter_parser``, with the names and clauses both share in ``_clauses``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType

from hms_catalog.errors import SqlSyntaxError
from hms_catalog.sql import _alter_parser, _ddl_parser
from hms_catalog.sql._clauses import catalog_name, database_name, if_exists, if_not_exists, properties, table_name
from hms_catalog.sql._cursor import NAMES, Cursor, alternatives
from hms_catalog.sql._expression_parser import expression, whole_number
from hms_catalog.sql._query import is_query, parse_query, parse_spark_statement
from hms_catalog.sql._source import StatementSource, position, syntax_error
from hms_catalog.sql._split import StatementBuffer, split_statements
from hms_catalog.sql.ast import (
    AlterCatalogProperties,
    CreateCatalog,
    DescribeTable,
    DropCatalog,
    ExplainSplits,
    Query,
    RefreshCatalog,
    RefreshDatabase,
    RefreshTable,
    RenameCatalog,
    ShowCache,
    ShowCatalogs,
    ShowChanges,
    ShowCreateCatalog,
    ShowDatabases,
    ShowSchemaCache,
    ShowSplits,
    ShowTables,
    ShowTableStatus,
    Statement,
    SwitchCatalog,
    UseDatabase,
)
from hms_catalog.sql.expressions import Expression
from hms_catalog.sql.tokens import TokenType, tokenize

__all__ = [
    "StatementBuffer",
    "StatementSource",
    "parse",
    "parse_expression",
    "parse_query",
    "parse_spark_statement",
    "parse_statement",
    "split_statements",
]

# --- statements: one function each, called with the leading keywords consumed ---------------------


def _create_catalog(cur: Cursor) -> Statement:
    exists_ok = if_not_exists(cur)
    name = catalog_name(cur)
    comment = cur.expect_string("comment (a quoted string)") if cur.match_keyword("COMMENT") else None
    cur.expect_keyword("PROPERTIES")
    return CreateCatalog(name, properties(cur), comment, exists_ok)


def _drop_catalog(cur: Cursor) -> Statement:
    missing_ok = if_exists(cur)
    return DropCatalog(catalog_name(cur), missing_ok)


def _alter_catalog(cur: Cursor) -> Statement:
    name = catalog_name(cur)
    if cur.match_keyword("SET"):
        cur.expect_keyword("PROPERTIES")
        return AlterCatalogProperties(name, properties(cur))
    cur.expect_keyword("RENAME")
    return RenameCatalog(name, catalog_name(cur, "new catalog name"))


def _show_catalogs(cur: Cursor) -> Statement:
    return ShowCatalogs()


def _show_create_catalog(cur: Cursor) -> Statement:
    return ShowCreateCatalog(catalog_name(cur))


def _show_databases(cur: Cursor) -> Statement:
    """Spark's ``[FROM|IN catalog] [[LIKE] 'pattern']``."""
    catalog = catalog_name(cur) if cur.match_keyword("FROM") or cur.match_keyword("IN") else None
    liked = cur.match_keyword("LIKE")
    if liked or cur.peek().type is TokenType.STRING:
        return ShowDatabases(catalog, cur.expect_string("pattern (a quoted string)"))
    return ShowDatabases(catalog)


def _show_tables(cur: Cursor) -> Statement:
    """Spark's ``[FROM|IN [cat.]db] [[LIKE] 'pattern']``."""
    database = database_name(cur) if cur.match_keyword("FROM") or cur.match_keyword("IN") else None
    liked = cur.match_keyword("LIKE")
    if liked or cur.peek().type is TokenType.STRING:
        return ShowTables(database, cur.expect_string("pattern (a quoted string)"))
    return ShowTables(database)


def _show_cache(cur: Cursor) -> Statement:
    return ShowCache(catalog_name(cur) if cur.match_keyword("FROM") else None)


def _show_changes(cur: Cursor) -> Statement:
    catalog = catalog_name(cur) if cur.match_keyword("FROM") else None
    since = None
    if cur.match_keyword("SINCE"):
        token = cur.peek()
        if token.type is not TokenType.NUMBER or not token.value.isdigit():
            raise cur.expected("a version number (a whole number, as SHOW CHANGES reports them)", after="SINCE")
        since = whole_number(cur, cur.advance())
    return ShowChanges(catalog, since)


def _show_schema_cache(cur: Cursor) -> Statement:
    return ShowSchemaCache(catalog_name(cur) if cur.match_keyword("FROM") else None)


def _show_table_status(cur: Cursor) -> Statement:
    database = database_name(cur) if cur.match_keyword("FROM") else None
    pattern = cur.expect_string("pattern (a quoted string)") if cur.match_keyword("LIKE") else None
    return ShowTableStatus(database, pattern)


def _where(cur: Cursor) -> Expression | None:
    return expression(cur) if cur.match_keyword("WHERE") else None


def _show_splits(cur: Cursor) -> Statement:
    cur.expect_keyword("FROM")
    table = table_name(cur)
    return ShowSplits(table, _where(cur))


def _explain_splits(cur: Cursor) -> Statement:
    cur.expect_keyword("FROM")
    table = table_name(cur)
    return ExplainSplits(table, _where(cur))


def _switch(cur: Cursor) -> Statement:
    return SwitchCatalog(catalog_name(cur))


def _use(cur: Cursor) -> Statement:
    return UseDatabase(database_name(cur))


def _describe(cur: Cursor) -> Statement:
    """``DESC[RIBE] [TABLE] t``, as Spark writes it; ``TABLE`` is the keyword only when a name follows it."""
    if cur.peek().is_keyword("TABLE") and cur.peek(1).type in NAMES:
        cur.advance()
    return DescribeTable(table_name(cur))


def _refresh_catalog(cur: Cursor) -> Statement:
    return RefreshCatalog(catalog_name(cur))


def _refresh_database(cur: Cursor) -> Statement:
    return RefreshDatabase(database_name(cur))


def _refresh_table(cur: Cursor) -> Statement:
    return RefreshTable(table_name(cur))


_Handler = Callable[[Cursor], Statement]

# Leading keywords -> parse function.  The order of entries sharing a prefix is the order in which the
# "expected ..." message lists their next keyword.
_STATEMENTS: Mapping[tuple[str, ...], _Handler] = MappingProxyType(
    {
        ("CREATE", "CATALOG"): _create_catalog,
        ("CREATE", "DATABASE"): _ddl_parser.create_database,
        ("CREATE", "SCHEMA"): _ddl_parser.create_database,
        ("CREATE", "NAMESPACE"): _ddl_parser.create_database,
        ("CREATE", "TABLE"): _ddl_parser.create_table,
        ("CREATE", "EXTERNAL", "TABLE"): _ddl_parser.create_external_table,
        ("DROP", "CATALOG"): _drop_catalog,
        ("DROP", "DATABASE"): _ddl_parser.drop_database,
        ("DROP", "SCHEMA"): _ddl_parser.drop_database,
        ("DROP", "NAMESPACE"): _ddl_parser.drop_database,
        ("DROP", "TABLE"): _ddl_parser.drop_table,
        ("ALTER", "CATALOG"): _alter_catalog,
        ("ALTER", "DATABASE"): _ddl_parser.alter_database,
        ("ALTER", "SCHEMA"): _ddl_parser.alter_database,
        ("ALTER", "NAMESPACE"): _ddl_parser.alter_database,
        ("ALTER", "TABLE"): _alter_parser.alter_table,
        ("MSCK", "REPAIR", "TABLE"): _alter_parser.msck_repair_table,
        ("SHOW", "CATALOGS"): _show_catalogs,
        ("SHOW", "DATABASES"): _show_databases,
        ("SHOW", "SCHEMAS"): _show_databases,
        ("SHOW", "NAMESPACES"): _show_databases,
        ("SHOW", "TABLES"): _show_tables,
        ("SHOW", "CREATE", "CATALOG"): _show_create_catalog,
        ("SHOW", "CREATE", "TABLE"): _ddl_parser.show_create_table,
        ("SHOW", "TABLE", "STATUS"): _show_table_status,
        ("SHOW", "CACHE"): _show_cache,
        ("SHOW", "CHANGES"): _show_changes,
        ("SHOW", "SCHEMA", "CACHE"): _show_schema_cache,
        ("SHOW", "SPLITS"): _show_splits,
        ("SHOW", "PARTITIONS"): _ddl_parser.show_partitions,
        ("SHOW", "TBLPROPERTIES"): _ddl_parser.show_tblproperties,
        ("SHOW", "COLUMNS"): _ddl_parser.show_columns,
        ("SHOW", "VIEWS"): _ddl_parser.show_views,
        ("SET",): _ddl_parser.set_option,
        ("EXPLAIN", "SPLITS"): _explain_splits,
        ("SWITCH",): _switch,
        ("USE",): _use,
        ("DESC",): _describe,
        ("DESCRIBE",): _describe,
        ("REFRESH", "CATALOG"): _refresh_catalog,
        ("REFRESH", "DATABASE"): _refresh_database,
        ("REFRESH", "TABLE"): _refresh_table,
    }
)


def _dispatch(cur: Cursor) -> _Handler:
    """Consume the longest run of leading keywords that leads somewhere in the table."""
    path: tuple[str, ...] = ()
    while True:
        depth = len(path)
        following = list(dict.fromkeys(key[depth] for key in _STATEMENTS if len(key) > depth and key[:depth] == path))
        token = cur.peek()
        word = token.value.upper() if token.type is TokenType.IDENTIFIER else None
        if word is None or word not in following:
            break
        cur.advance()
        path = (*path, word)
    handler = _STATEMENTS.get(path)
    if handler is not None:
        return handler
    if path:
        raise cur.error(f"expected {alternatives(following)} after {' '.join(path)}", token)
    if token.type is TokenType.EOF:
        raise cur.error("empty statement", token)
    raise cur.error(f"unknown statement '{token.display}'; expected one of {', '.join(sorted(following))}", token)


def parse_statement(source: StatementSource | str, *, context: StatementSource | None = None) -> Statement:
    """Parse exactly one statement; one trailing ``;`` is allowed, anything else after it is an error.

    Positions in errors are in the coordinates of the input ``source`` was cut from; ``context`` is that
    input when the caller has it (the excerpt then shows whole original lines), else ``source`` is quoted.
    A query (``SELECT``, ``WITH``) is Spark SQL, not this language: it is checked here, so its syntax errors
    are reported like any other, and kept as text for Spark to run.
    """
    if isinstance(source, str):
        source = StatementSource(source)
    context = context or source
    if is_query(source.text):
        parse_query(source, context=context)
        text = source.text.strip().rstrip(";").rstrip()
        return Query(text, text=text)
    tokens = tokenize(source.text, line=source.line, column=source.column, context=context)
    cur = Cursor(tokens, source, context)
    statement = _dispatch(cur)(cur)
    last = cur.tokens[cur.index - 1]
    if cur.peek().type is TokenType.SEMICOLON and cur.peek(1).type is TokenType.EOF:
        cur.advance()
    if cur.peek().type is not TokenType.EOF:
        raise cur.expected("end of statement")
    return dataclasses.replace(statement, text=source.text[tokens[0].offset : last.end])


# Words that start a statement (never an expression, whatever follows them), for parse_expression's errors.
_LEADING_WORDS = "|".join(sorted({key[0] for key in _STATEMENTS} | {"SELECT", "WITH"}))
# ...unless what follows makes them a column in an expression: ``show = 1``, ``use IS NULL``.
_STATEMENT_START = re.compile(
    rf"(?is)(?:\s|--[^\n]*|/\*.*?\*/|\()*+(?P<word>{_LEADING_WORDS})\b"
    r"(?!\s*(?:[=<>!)]|$|(?:and|or|is|in|not|between)\b))"
)


def parse_expression(source: StatementSource | str, *, context: StatementSource | None = None) -> Expression:
    """Parse one whole expression, as written after ``WHERE`` (for callers building predicates in Python).

    Positions in errors follow the same rules as :func:`parse_statement`.  Text that is a statement
    (``SELECT 1``, ``DROP CATALOG c``) is an error at its first word, never a statement node.
    """
    if isinstance(source, str):
        source = StatementSource(source)
    context = context or source
    try:
        cur = Cursor(tokenize(source.text, line=source.line, column=source.column, context=context), source, context)
        expr = expression(cur)
        if cur.peek().type is not TokenType.EOF:
            raise cur.expected("end of expression")
    except SqlSyntaxError as e:
        statement = _STATEMENT_START.match(source.text)
        if statement is None:
            raise
        word = statement.group("word")
        line, column = position(source, statement.start("word"))
        raise syntax_error(f"expected an expression, not a statement ({word.upper()} ...)", context, line, column, word) from e
    return expr


def parse(text: str) -> list[Statement]:
    """Split ``text`` into statements and parse each; the first bad statement raises."""
    whole = StatementSource(text)
    return [parse_statement(piece, context=whole) for piece in split_statements(text)]
