"""Column definitions and their types, as CREATE TABLE, ALTER TABLE and PARTITIONED BY write them.

A column type is read by Spark's type grammar (:mod:`hms_catalog.sql._types`: ``REAL``, ``LONG``,
``STRUCT<a INT>``, ``STRING COLLATE UTF8_BINARY``, ...), and its canonical Hive rendering is what the spec keeps,
so every later reader sees one spelling.  A type refused there is a syntax error at its token, naming the column.
"""

from __future__ import annotations

from hms_catalog.ddl.specs import ColumnSpec
from hms_catalog.sql._clauses import Clause, read_clauses
from hms_catalog.sql._cursor import NAMES, Cursor, alternatives, dotted_name
from hms_catalog.sql._types import data_type
from hms_catalog.sql.tokens import Token, TokenType
from hms_catalog.types import to_hive_string

__all__ = ["column_definition", "column_list", "column_name", "column_type", "partitioned_by", "column_sequence"]

# Iceberg's partition transforms as Spark writes them: those of one column, and those with a width too.
_TRANSFORMS_OF_COLUMN = ("identity", "years", "months", "days", "hours", "year", "month", "day", "hour")
_TRANSFORMS_WITH_WIDTH = ("bucket", "truncate")


def column_name(cur: Cursor, what: str = "column name") -> str:
    return dotted_name(cur, what, 1, "column")[0]


def column_type(cur: Cursor, column: str) -> str:
    """Read the type of ``column`` as Spark's grammar writes it and return its canonical Hive spelling."""
    if cur.peek().type is not TokenType.IDENTIFIER:
        raise cur.expected(f"type of column '{column}'")
    return to_hive_string(data_type(cur, column))


class _ColumnOptions:
    """``NOT NULL`` and ``COMMENT '..'`` after a column's type, in either order (as Spark reads them)."""

    def __init__(self) -> None:
        self.comment: str | None = None
        self.nullable = True

    def clauses(self) -> dict[str, Clause]:
        return {"NOT": Clause("NOT NULL", self._not_null), "COMMENT": Clause("COMMENT", self._comment)}

    def _not_null(self, cur: Cursor) -> None:
        cur.expect_keyword("NULL")
        self.nullable = False

    def _comment(self, cur: Cursor) -> None:
        self.comment = cur.expect_string("comment (a quoted string)")


def column_definition(cur: Cursor) -> ColumnSpec:
    """``name type [NOT NULL] [COMMENT 'c']``."""
    name = column_name(cur)
    kind = column_type(cur, name)
    options = _ColumnOptions()
    read_clauses(cur, options.clauses())
    return ColumnSpec(name, kind, options.comment, options.nullable)


def column_sequence(cur: Cursor, taken: frozenset[str] = frozenset()) -> tuple[ColumnSpec, ...]:
    """Column definitions separated by commas; a name (compared as Hive does, ignoring case) at most once,
    and none of ``taken`` (the data columns, when these are a Hive table's partition columns)."""
    columns: list[ColumnSpec] = []
    seen: set[str] = set()
    while True:
        name_token = cur.peek()
        column = column_definition(cur)
        folded = column.name.lower()
        if folded in seen:
            raise cur.error(f"duplicate column name '{column.name}'", name_token)
        if folded in taken:
            raise cur.error(f"partition column '{column.name}' is also a data column; a Hive table lists it once, "
                            "in PARTITIONED BY", name_token)
        seen.add(folded)
        columns.append(column)
        if not cur.match_symbol(TokenType.COMMA):
            return tuple(columns)


def column_list(cur: Cursor, taken: frozenset[str] = frozenset()) -> tuple[ColumnSpec, ...]:
    """``(name type ..., ...)`` with at least one column."""
    cur.expect_symbol(TokenType.LPAREN)
    if cur.peek().type is TokenType.RPAREN:
        raise cur.error("empty column list; expected a column name", cur.peek())
    columns = column_sequence(cur, taken)
    cur.expect_symbol(TokenType.RPAREN)
    return columns


def partitioned_by(cur: Cursor, data_columns: tuple[ColumnSpec, ...]) -> tuple[tuple[ColumnSpec, ...], tuple[str, ...]]:
    """``BY (dt STRING, hr INT)`` (a Hive table's partition columns) or ``BY (dt, days(ts), bucket(16, id))``
    (a data source or Iceberg table's columns and transforms, as normalised text); never both in one list."""
    cur.expect_keyword("BY")
    cur.expect_symbol(TokenType.LPAREN)
    first = cur.peek()
    if first.type is TokenType.RPAREN:
        raise cur.error("empty PARTITIONED BY list; expected a column name", first)
    if first.type in NAMES and cur.peek(1).type not in (TokenType.COMMA, TokenType.RPAREN, TokenType.LPAREN):
        columns = column_sequence(cur, frozenset(c.name.lower() for c in data_columns))
        cur.expect_symbol(TokenType.RPAREN)
        return columns, ()
    transforms: list[str] = []
    while True:
        start = cur.peek()
        if start.type in NAMES and cur.peek(1).type not in (TokenType.COMMA, TokenType.RPAREN, TokenType.LPAREN, TokenType.DOT):
            raise cur.error("PARTITIONED BY lists either typed columns (dt STRING) or column names and transforms "
                            "(dt, days(ts)), not both", start)
        transform = _transform(cur)
        if transform in transforms:
            raise cur.error(f"duplicate partitioning '{transform}'", start)
        transforms.append(transform)
        if not cur.match_symbol(TokenType.COMMA):
            cur.expect_symbol(TokenType.RPAREN)
            return (), tuple(transforms)


def _transform(cur: Cursor) -> str:
    """``col`` or ``days(col)``, ``bucket(16, col)``, ``truncate(4, col)`` (the width may come second)."""
    name_token = cur.peek()
    name = column_name(cur, "column name or partition transform")
    if not cur.match_symbol(TokenType.LPAREN):
        return name
    function = name.lower()
    if name_token.type is not TokenType.IDENTIFIER or function not in _TRANSFORMS_OF_COLUMN + _TRANSFORMS_WITH_WIDTH:
        known = alternatives([*_TRANSFORMS_OF_COLUMN[:5], *_TRANSFORMS_WITH_WIDTH])
        raise cur.error(f"unknown partition transform '{name}'; expected {known}", name_token)
    arguments: list[Token] = []
    while True:
        token = cur.peek()
        if token.type not in (*NAMES, TokenType.NUMBER):
            raise cur.expected("column name" if function in _TRANSFORMS_OF_COLUMN else "column name or width (a whole number)")
        arguments.append(cur.advance())
        if not cur.match_symbol(TokenType.COMMA):
            cur.expect_symbol(TokenType.RPAREN)
            break
    widths = [a for a in arguments if a.type is TokenType.NUMBER]
    columns = [a for a in arguments if a.type is not TokenType.NUMBER]
    if function in _TRANSFORMS_OF_COLUMN and (widths or len(columns) != 1):
        raise cur.error(f"{function}() takes one column, e.g. {function}(ts)", name_token)
    if function in _TRANSFORMS_WITH_WIDTH:
        width = widths[0].value if len(widths) == 1 else ""
        if len(columns) != 1 or not width.isdigit() or len(width) > 9 or int(width) == 0:
            raise cur.error(f"{function}() takes a width and a column, e.g. {function}(16, id)", name_token)
        return f"{function}({int(width)}, {columns[0].value})"
    return f"{function}({columns[0].value})"
