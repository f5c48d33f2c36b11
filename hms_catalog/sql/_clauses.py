"""Pieces many statements share: names, property lists, partition specs, and optional clauses in any order.

They live apart from ``parser`` (the dispatch table) and from the DDL parse functions so that both can use
them without importing each other.  Two property-list readers exist on purpose: catalog statements keep
their strict ``('k' = 'v')`` form, while DDL reads Spark's property lists (``(header true, 'k' = 'v')``),
because that is what PySpark users paste.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hms_catalog.sql._cursor import NAMES, Cursor, dotted_name
from hms_catalog.sql.ast import DatabaseName, Properties, TableName
from hms_catalog.sql.tokens import Token, TokenType

__all__ = [
    "Clause", "PartitionSpec", "catalog_name", "database_name", "table_name", "if_exists", "if_not_exists",
    "properties", "property_list", "property_keys", "partition_spec", "read_clauses", "keyword",
]

PartitionSpec = tuple[tuple[str, str | None], ...]  # (column, value as text or None for NULL), as written

# More parts than any option name has; the bound only keeps ``dotted_name``'s contract.
_MAX_KEY_PARTS = 64


def keyword(token: Token) -> str | None:
    """The upper-cased word of a bare identifier (which may be read as a keyword), else None."""
    return token.value.upper() if token.type is TokenType.IDENTIFIER else None


def catalog_name(cur: Cursor, what: str = "catalog name") -> str:
    return dotted_name(cur, what, 1, "catalog")[0]


def database_name(cur: Cursor, what: str = "database name") -> DatabaseName:
    parts = dotted_name(cur, what, 2, "[catalog.]database")
    return DatabaseName(parts[0] if len(parts) == 2 else None, parts[-1])


def table_name(cur: Cursor, what: str = "table name") -> TableName:
    parts = dotted_name(cur, what, 3, "[[catalog.]database.]table")
    database = parts[-2] if len(parts) >= 2 else None
    catalog = parts[-3] if len(parts) == 3 else None
    return TableName(catalog, database, parts[-1])


def if_not_exists(cur: Cursor) -> bool:
    if not cur.match_keyword("IF"):
        return False
    cur.expect_keyword("NOT")
    cur.expect_keyword("EXISTS")
    return True


def if_exists(cur: Cursor) -> bool:
    if not cur.match_keyword("IF"):
        return False
    cur.expect_keyword("EXISTS")
    return True


def properties(cur: Cursor) -> Properties:
    """``('k' = 'v', ...)`` with at least one pair and no key twice (catalog statements)."""
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


def property_list(cur: Cursor) -> Properties:
    """Spark's ``(key [=] value, ...)``: keys quoted or dotted names, values quoted, numbers or booleans."""
    cur.expect_symbol(TokenType.LPAREN)
    pairs: dict[str, str] = {}
    while True:
        key_token = cur.peek()
        key = _property_key(cur)
        if key in pairs:
            raise cur.error(f"duplicate property key '{key}'", key_token)
        cur.match_symbol(TokenType.EQ)
        pairs[key] = _property_value(cur)
        if not cur.match_symbol(TokenType.COMMA):
            cur.expect_symbol(TokenType.RPAREN)
            return tuple(pairs.items())


def property_keys(cur: Cursor) -> tuple[str, ...]:
    """``('k', k2.x, ...)``: the keys of a property list without values (UNSET TBLPROPERTIES)."""
    cur.expect_symbol(TokenType.LPAREN)
    keys: list[str] = []
    while True:
        key_token = cur.peek()
        key = _property_key(cur)
        if key in keys:
            raise cur.error(f"duplicate property key '{key}'", key_token)
        keys.append(key)
        if not cur.match_symbol(TokenType.COMMA):
            cur.expect_symbol(TokenType.RPAREN)
            return tuple(keys)


def _property_key(cur: Cursor) -> str:
    token = cur.peek()
    if token.type is TokenType.STRING:
        return cur.advance().value
    if token.type in NAMES:
        return ".".join(dotted_name(cur, "property key", _MAX_KEY_PARTS, "key"))
    raise cur.expected("property key (a quoted string or a name)")


def _property_value(cur: Cursor) -> str:
    value = _plain_literal(cur)
    if value is None:
        raise cur.expected("property value (a quoted string, a number, true or false)")
    return value


def _plain_literal(cur: Cursor) -> str | None:
    """A quoted string, a number as written (``-`` included, ``02`` stays ``02``) or true/false, as text;
    None (nothing consumed) for anything else. Property and partition values are both read this way."""
    token = cur.peek()
    if token.type is TokenType.STRING:
        return cur.advance().value
    if token.type is TokenType.NUMBER:
        return cur.advance().raw
    if token.type is TokenType.MINUS and cur.peek(1).type is TokenType.NUMBER:
        cur.advance()
        return "-" + cur.advance().raw
    if keyword(token) in ("TRUE", "FALSE"):
        return cur.advance().value.lower()
    return None


def partition_spec(cur: Cursor) -> PartitionSpec:
    """``(k = 'v', k2 = 5, k3 = NULL)``: values as text (whole numbers as Spark reads them, ``02`` is ``2``), NULL as None.

    Whether the keys are the table's, complete and of the right type is the operation's to check: it knows
    the table.
    """
    cur.expect_symbol(TokenType.LPAREN)
    values: list[tuple[str, str | None]] = []
    seen: set[str] = set()
    while True:
        key_token = cur.peek()
        key = dotted_name(cur, "partition column name", 1, "column")[0]
        if key.lower() in seen:
            raise cur.error(f"duplicate partition column '{key}'", key_token)
        seen.add(key.lower())
        cur.expect_symbol(TokenType.EQ)
        values.append((key, _partition_value(cur)))
        if not cur.match_symbol(TokenType.COMMA):
            cur.expect_symbol(TokenType.RPAREN)
            return tuple(values)


def _partition_value(cur: Cursor) -> str | None:
    """As Spark reads a partition value: a whole number is a number (``08`` is ``8``, whatever the key's type), a
    quoted string is text as written."""
    number = cur.peek(1 if cur.peek().type is TokenType.MINUS else 0)
    value = _plain_literal(cur)
    if value is not None and number.type is TokenType.NUMBER and number.value.isdigit():
        return str(int(value))
    if value is not None:
        return value
    word = keyword(cur.peek())
    if word == "NULL":
        cur.advance()
        return None
    if word in ("DATE", "TIMESTAMP") and cur.peek(1).type is TokenType.STRING:  # Spark's dt = DATE '2024-01-01'
        cur.advance()
        return cur.advance().value
    raise cur.expected("partition value (a quoted string, a number or NULL)")


@dataclass(frozen=True)
class Clause:
    """An optional clause: how messages name it (``PARTITIONED BY``) and what reads it once its first word
    has been consumed."""

    name: str
    read: Callable[[Cursor], None]


def read_clauses(cur: Cursor, clauses: Mapping[str, Clause]) -> None:
    """Read clauses keyed by their first word, in any order, each at most once (as Spark reads CREATE TABLE).

    Stops at the first word that starts none of them; the clauses not yet given are remembered as the
    alternatives an "expected ..." error there lists.
    """
    seen: set[str] = set()
    while True:
        token = cur.peek()
        word = keyword(token)
        clause = clauses.get(word) if word is not None else None
        if clause is None or word is None:
            cur.tried(*(c.name for key, c in clauses.items() if key not in seen))
            return
        if word in seen:
            raise cur.error(f"duplicate {clause.name} clause", token)
        seen.add(word)
        cur.advance()
        clause.read(cur)
