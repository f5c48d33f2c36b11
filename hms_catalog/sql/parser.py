"""Turn catalog DSL text into statement nodes.

Statements are found through one table keyed by their leading keywords (``("SHOW", "TABLES")``); the
dispatcher walks those keywords one token at a time, so adding a statement is one parse function and one
table entry, and "expected ..." messages list exactly what the table allows at that point.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from types import MappingProxyType

from hms_catalog.errors import SqlSyntaxError
from hms_catalog.sql._source import StatementSource, syntax_error
from hms_catalog.sql._split import StatementBuffer, split_statements
from hms_catalog.sql.ast import (
    AlterCatalogProperties,
    CreateCatalog,
    DatabaseName,
    DescribeTable,
    DropCatalog,
    Properties,
    RefreshCatalog,
    RefreshDatabase,
    RefreshTable,
    RenameCatalog,
    ShowCache,
    ShowCatalogs,
    ShowCreateCatalog,
    ShowDatabases,
    ShowSchemaCache,
    ShowTableStatus,
    ShowTables,
    Statement,
    SwitchCatalog,
    TableName,
    UseDatabase,
)
from hms_catalog.sql.tokens import Token, TokenType, tokenize

__all__ = ["StatementBuffer", "StatementSource", "parse", "parse_statement", "split_statements"]

_NAMES = (TokenType.IDENTIFIER, TokenType.QUOTED_IDENTIFIER)


def _alternatives(options: list[str]) -> str:
    unique = list(dict.fromkeys(options))
    return unique[0] if len(unique) == 1 else f"{', '.join(unique[:-1])} or {unique[-1]}"


class _Cursor:
    """Walks the tokens of one statement and builds errors positioned in the original input.

    Optional clauses that were looked for and not found at the current token are remembered, so the next
    error there can list them too ("expected LIKE or end of statement").
    """

    def __init__(self, tokens: list[Token], source: StatementSource, context: StatementSource) -> None:
        self.tokens = tokens
        self.text = source.text
        self.context = context
        self.index = 0
        self._tried: list[str] = []

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.peek()
        if token.type is not TokenType.EOF:
            self.index += 1
            self._tried.clear()
        return token

    def match_keyword(self, word: str) -> bool:
        if self.peek().is_keyword(word):
            self.advance()
            return True
        self._tried.append(word)
        return False

    def expect_keyword(self, word: str) -> Token:
        if self.peek().is_keyword(word):
            return self.advance()
        raise self.expected(word)

    def match_symbol(self, kind: TokenType) -> bool:
        if self.peek().type is kind:
            self.advance()
            return True
        self._tried.append(kind.value)
        return False

    def expect_symbol(self, kind: TokenType) -> Token:
        if self.peek().type is kind:
            return self.advance()
        raise self.expected(kind.value)

    def expect_string(self, what: str) -> str:
        if self.peek().type is TokenType.STRING:
            return self.advance().value
        raise self.expected(what)

    def expected(self, what: str, *, after: str = "") -> SqlSyntaxError:
        where = f" after {after}" if after else ""
        return self.error(f"expected {_alternatives([*self._tried, what])}{where}", self.peek())

    def error(self, message: str, token: Token, shown: str | None = None) -> SqlSyntaxError:
        return syntax_error(message, self.context, token.line, token.column, token.display if shown is None else shown)


# --- names -----------------------------------------------------------------------------------------


def _dotted_name(cur: _Cursor, what: str, most: int, shape: str) -> list[str]:
    """Read ``a.b.c`` (parts bare or backquoted) and refuse more than ``most`` parts."""
    first = cur.peek()
    if first.type not in _NAMES:
        raise cur.expected(what)
    parts = [cur.advance().value]
    last = first
    while cur.peek().type is TokenType.DOT:
        cur.advance()
        if cur.peek().type not in _NAMES:
            raise cur.expected("identifier", after=f"'.' in {what}")
        last = cur.advance()
        parts.append(last.value)
    if len(parts) > most:
        written = cur.text[first.offset : last.end]
        problem = "must be a single identifier" if most == 1 else f"has too many parts; expected {shape}"
        raise cur.error(f"{what} {problem}", first, written)
    return parts


def _catalog_name(cur: _Cursor, what: str = "catalog name") -> str:
    return _dotted_name(cur, what, 1, "catalog")[0]


def _database_name(cur: _Cursor) -> DatabaseName:
    parts = _dotted_name(cur, "database name", 2, "[catalog.]database")
    return DatabaseName(parts[0] if len(parts) == 2 else None, parts[-1])


def _table_name(cur: _Cursor) -> TableName:
    parts = _dotted_name(cur, "table name", 3, "[[catalog.]database.]table")
    database = parts[-2] if len(parts) >= 2 else None
    catalog = parts[-3] if len(parts) == 3 else None
    return TableName(catalog, database, parts[-1])


def _properties(cur: _Cursor) -> Properties:
    """``('k' = 'v', ...)`` with at least one pair and no key twice."""
    cur.expect_symbol(TokenType.LPAREN)
    pairs: dict[str, str] = {}
    while True:
        key_token = cur.peek()
        key = cur.expect_string("property key (a quoted string)")
        if key in pairs:
            raise cur.error(f"duplicate property key '{key}'", key_token)
        cur.expect_symbol(TokenType.EQ)
        pairs[key] = cur.expect_string("property value (a quoted string)")
        if not cur.match_symbol(TokenType.COMMA):
            cur.expect_symbol(TokenType.RPAREN)
            return tuple(pairs.items())


# --- statements: one function each, called with the leading keywords consumed ---------------------


def _create_catalog(cur: _Cursor) -> Statement:
    if_not_exists = cur.match_keyword("IF")
    if if_not_exists:
        cur.expect_keyword("NOT")
        cur.expect_keyword("EXISTS")
    name = _catalog_name(cur)
    comment = cur.expect_string("comment (a quoted string)") if cur.match_keyword("COMMENT") else None
    cur.expect_keyword("PROPERTIES")
    return CreateCatalog(name, _properties(cur), comment, if_not_exists)


def _drop_catalog(cur: _Cursor) -> Statement:
    if_exists = cur.match_keyword("IF")
    if if_exists:
        cur.expect_keyword("EXISTS")
    return DropCatalog(_catalog_name(cur), if_exists)


def _alter_catalog(cur: _Cursor) -> Statement:
    name = _catalog_name(cur)
    if cur.match_keyword("SET"):
        cur.expect_keyword("PROPERTIES")
        return AlterCatalogProperties(name, _properties(cur))
    cur.expect_keyword("RENAME")
    return RenameCatalog(name, _catalog_name(cur, "new catalog name"))


def _show_catalogs(cur: _Cursor) -> Statement:
    return ShowCatalogs()


def _show_create_catalog(cur: _Cursor) -> Statement:
    return ShowCreateCatalog(_catalog_name(cur))


def _show_databases(cur: _Cursor) -> Statement:
    return ShowDatabases(_catalog_name(cur) if cur.match_keyword("FROM") else None)


def _show_tables(cur: _Cursor) -> Statement:
    database = _database_name(cur) if cur.match_keyword("FROM") else None
    pattern = cur.expect_string("pattern (a quoted string)") if cur.match_keyword("LIKE") else None
    return ShowTables(database, pattern)


def _show_cache(cur: _Cursor) -> Statement:
    return ShowCache(_catalog_name(cur) if cur.match_keyword("FROM") else None)


def _show_schema_cache(cur: _Cursor) -> Statement:
    return ShowSchemaCache(_catalog_name(cur) if cur.match_keyword("FROM") else None)


def _show_table_status(cur: _Cursor) -> Statement:
    database = _database_name(cur) if cur.match_keyword("FROM") else None
    pattern = cur.expect_string("pattern (a quoted string)") if cur.match_keyword("LIKE") else None
    return ShowTableStatus(database, pattern)


def _switch(cur: _Cursor) -> Statement:
    return SwitchCatalog(_catalog_name(cur))


def _use(cur: _Cursor) -> Statement:
    return UseDatabase(_database_name(cur))


def _describe(cur: _Cursor) -> Statement:
    return DescribeTable(_table_name(cur))


def _refresh_catalog(cur: _Cursor) -> Statement:
    return RefreshCatalog(_catalog_name(cur))


def _refresh_database(cur: _Cursor) -> Statement:
    return RefreshDatabase(_database_name(cur))


def _refresh_table(cur: _Cursor) -> Statement:
    return RefreshTable(_table_name(cur))


_Handler = Callable[[_Cursor], Statement]

# Leading keywords -> parse function.  The order of entries sharing a prefix is the order in which the
# "expected ..." message lists their next keyword.
_STATEMENTS: Mapping[tuple[str, ...], _Handler] = MappingProxyType(
    {
        ("CREATE", "CATALOG"): _create_catalog,
        ("DROP", "CATALOG"): _drop_catalog,
        ("ALTER", "CATALOG"): _alter_catalog,
        ("SHOW", "CATALOGS"): _show_catalogs,
        ("SHOW", "DATABASES"): _show_databases,
        ("SHOW", "TABLES"): _show_tables,
        ("SHOW", "CREATE", "CATALOG"): _show_create_catalog,
        ("SHOW", "TABLE", "STATUS"): _show_table_status,
        ("SHOW", "CACHE"): _show_cache,
        ("SHOW", "SCHEMA", "CACHE"): _show_schema_cache,
        ("SWITCH",): _switch,
        ("USE",): _use,
        ("DESC",): _describe,
        ("DESCRIBE",): _describe,
        ("REFRESH", "CATALOG"): _refresh_catalog,
        ("REFRESH", "DATABASE"): _refresh_database,
        ("REFRESH", "TABLE"): _refresh_table,
    }
)


def _dispatch(cur: _Cursor) -> _Handler:
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
        raise cur.error(f"expected {_alternatives(following)} after {' '.join(path)}", token)
    if token.type is TokenType.EOF:
        raise cur.error("empty statement", token)
    raise cur.error(f"unknown statement '{token.display}'; expected one of {', '.join(sorted(following))}", token)


def parse_statement(source: StatementSource | str, *, context: StatementSource | None = None) -> Statement:
    """Parse exactly one statement; one trailing ``;`` is allowed, anything else after it is an error.

    Positions in errors are in the coordinates of the input ``source`` was cut from; ``context`` is that
    input when the caller has it (the excerpt then shows whole original lines), else ``source`` is quoted.
    """
    if isinstance(source, str):
        source = StatementSource(source)
    context = context or source
    tokens = tokenize(source.text, line=source.line, column=source.column, context=context)
    cur = _Cursor(tokens, source, context)
    statement = _dispatch(cur)(cur)
    last = cur.tokens[cur.index - 1]
    if cur.peek().type is TokenType.SEMICOLON and cur.peek(1).type is TokenType.EOF:
        cur.advance()
    if cur.peek().type is not TokenType.EOF:
        raise cur.expected("end of statement")
    return dataclasses.replace(statement, text=source.text[tokens[0].offset : last.end])


def parse(text: str) -> list[Statement]:
    """Split ``text`` into statements and parse each; the first bad statement raises."""
    whole = StatementSource(text)
    return [parse_statement(piece, context=whole) for piece in split_statements(text)]
