"""Column types as Spark's SQL grammar writes them (its ``dataType`` rule, read as Spark 4's DataTypeAstBuilder
reads it), as values of the type tree.

A DDL statement's types are Spark's spellings, not the metastore's: ``REAL``, ``LONG``, ``SHORT``, ``BYTE``,
``NUMERIC(10)``, ``TIMESTAMP_LTZ``, ``CHARACTER(3)``, ``STRING COLLATE UTF8_BINARY``, struct fields without a
colon (``STRUCT<a INT>``). So they are read here, over the statement's own tokens, and not by the parser of the
type strings a metastore stores (:mod:`hms_catalog.types.hive`), which knows Hive's spellings only. HiveQL's
``DOUBLE PRECISION`` is read too, as Hive reads it.

What Spark's grammar reads but a Hive table cannot hold is refused at its token, saying why, as Spark's own
Hive DDL refuses it (``VOID``, intervals) or keeps it only in a layout no Hive reader reads (``TIMESTAMP_NTZ``,
``VARIANT``, ``TIME``, geospatial types, collations other than the default ``UTF8_BINARY``); so is what Spark
itself refuses (a ``CHAR`` without a length, ``TIMESTAMP(3)``, Hive's ``UNIONTYPE``).
"""

from __future__ import annotations

from collections.abc import Callable

from hms_catalog.errors import SqlSyntaxError
from hms_catalog.sql._cursor import NAMES, Cursor
from hms_catalog.sql.tokens import Token, TokenType
from hms_catalog.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    MapType,
    PrimitiveType,
    SmallIntType,
    StringType,
    StructField,
    StructType,
    TimestampType,
    TinyIntType,
    VarcharType,
)
from hms_catalog.types.hive import MAX_CHAR_LENGTH, MAX_VARCHAR_LENGTH
from hms_catalog.types.tree import MAX_DECIMAL_PRECISION

__all__ = ["data_type", "DEFAULT_COLLATION"]

DEFAULT_COLLATION = "UTF8_BINARY"
"""Spark 4's default collation: a string of it is a plain string, the only string a Hive table holds."""

_TIMESTAMP_PRECISION = 6  # Spark's and Hive's timestamps keep microseconds

# Spark's trivialPrimitiveType, by keyword: one word, no parameters.
_PLAIN: dict[str, PrimitiveType] = {
    "BOOLEAN": BooleanType(), "TINYINT": TinyIntType(), "BYTE": TinyIntType(), "SMALLINT": SmallIntType(),
    "SHORT": SmallIntType(), "INT": IntType(), "INTEGER": IntType(), "BIGINT": BigIntType(), "LONG": BigIntType(),
    "FLOAT": FloatType(), "REAL": FloatType(), "DATE": DateType(), "BINARY": BinaryType(),
}

_NO_HIVE_TYPE = ("has no Hive type: a Hive table cannot hold it (Spark refuses it in Hive tables, and keeps a data source "
                 "table with it in a layout of its own that Hive and this catalog's readers cannot read)")
# Types Spark's grammar reads and a Hive table cannot hold, and why.
_REFUSED: dict[str, str] = {
    "TIMESTAMP_NTZ": f"TIMESTAMP_NTZ {_NO_HIVE_TYPE}; use TIMESTAMP",
    "VARIANT": f"VARIANT {_NO_HIVE_TYPE}; use STRING holding JSON",
    "TIME": f"TIME {_NO_HIVE_TYPE}",
    "INTERVAL": f"INTERVAL {_NO_HIVE_TYPE}",
    "GEOMETRY": f"GEOMETRY {_NO_HIVE_TYPE}; use BINARY holding WKB",
    "GEOGRAPHY": f"GEOGRAPHY {_NO_HIVE_TYPE}; use BINARY holding WKB",
    "VOID": "VOID (a column that holds only NULL) is refused by Spark in Hive tables: no Hive serde stores it",
    "UNIONTYPE": "UNIONTYPE is Hive's, and Spark cannot read a union column",
}


def data_type(cur: Cursor, column: str) -> DataType:
    """Read one type of ``column`` at the cursor; a SqlSyntaxError at the token where it goes wrong, naming the column."""
    return _Reader(cur, column).read()


class _Reader:
    def __init__(self, cur: Cursor, column: str) -> None:
        self.cur = cur
        self.column = column
        self.parameterised: dict[str, Callable[[Token], DataType]] = {
            "ARRAY": self._array, "MAP": self._map, "STRUCT": self._struct, "STRING": self._string,
            "CHAR": self._char, "CHARACTER": self._char, "VARCHAR": self._varchar, "DECIMAL": self._decimal,
            "DEC": self._decimal, "NUMERIC": self._decimal, "TIMESTAMP": self._timestamp, "TIMESTAMP_LTZ": self._timestamp,
            "DOUBLE": self._double,
        }

    def error(self, reason: str, token: Token | None = None) -> SqlSyntaxError:
        return self.cur.error(f"invalid type for column '{self.column}': {reason}", token or self.cur.peek())

    def read(self) -> DataType:
        token = self.cur.peek()
        if token.type is not TokenType.IDENTIFIER:
            raise self.error(f"expected a type but found {token.display}")
        word = token.value.upper()
        if word in _PLAIN:
            self.cur.advance()
            return _PLAIN[word]
        if word in _REFUSED:
            raise self.error(_REFUSED[word], token)
        reader = self.parameterised.get(word)
        if reader is None:
            raise self.error(f"unknown type '{token.value}'", token)
        return reader(self.cur.advance())

    # -- nested types: ARRAY<t>, MAP<k, v>, STRUCT<name [:] t [NOT NULL] [COMMENT '..'], ..> -------------

    def _open(self, name: str) -> None:
        if not self.cur.match_symbol(TokenType.LT):
            raise self.error(f"expected '<' after {name}")

    def _close(self, name: str) -> None:
        if not self.cur.match_symbol(TokenType.GT):
            raise self.error(f"expected '>' to close {name}<..> but found {self.cur.peek().display}")

    def _array(self, _: Token) -> DataType:
        self._open("ARRAY")
        element = self.read()
        self._close("ARRAY")
        return ArrayType(element)

    def _map(self, _: Token) -> DataType:
        self._open("MAP")
        key = self.read()
        if not self.cur.match_symbol(TokenType.COMMA):
            raise self.error(f"expected ',' between the key and value types of MAP<..> but found {self.cur.peek().display}")
        value = self.read()
        self._close("MAP")
        return MapType(key, value)

    def _struct(self, _: Token) -> DataType:
        if self.cur.match_symbol(TokenType.NE):  # STRUCT<>: the tokenizer reads '<>' as one symbol
            return StructType(())
        self._open("STRUCT")
        if self.cur.match_symbol(TokenType.GT):
            return StructType(())
        fields: list[StructField] = []
        seen: set[str] = set()
        while True:
            name_token = self.cur.peek()
            field = self._field()
            if field.name.lower() in seen:  # Spark compares field names as it compares columns: without case
                raise self.error(f"duplicate field name '{field.name}' in STRUCT<..>", name_token)
            seen.add(field.name.lower())
            fields.append(field)
            if self.cur.match_symbol(TokenType.GT):
                return StructType(tuple(fields))
            if not self.cur.match_symbol(TokenType.COMMA):
                raise self.error(f"expected ',' or '>' to close STRUCT<..> but found {self.cur.peek().display}")

    def _field(self) -> StructField:
        token = self.cur.peek()
        if token.type not in NAMES:
            raise self.error(f"expected a field name but found {token.display}")
        name = self.cur.advance().value
        self.cur.match_symbol(TokenType.COLON)
        kind = self.read()
        if self.cur.peek().is_keyword("NOT"):
            raise self.error(f"NOT NULL on struct field '{name}' is not supported: a Hive type does not say whether a field "
                             "may be null, so it would not be kept", self.cur.peek())
        comment = None
        if self.cur.match_keyword("COMMENT"):
            comment = self.cur.expect_string("comment (a quoted string)")
        return StructField(name, kind, comment=comment)

    # -- primitive types with parameters -------------------------------------------------------------

    def _whole_number(self, what: str) -> tuple[int, Token]:
        token = self.cur.peek()
        if token.type is not TokenType.NUMBER or not token.value.isdigit():
            raise self.error(f"expected {what} (a whole number) but found {token.display}")
        return int(self.cur.advance().value), token

    def _collation(self, written: str) -> None:
        """``COLLATE name``: the default collation (plain or as Spark qualifies it) reads as a plain string."""
        if not self.cur.peek().is_keyword("COLLATE"):
            return  # not offered in "expected ..." messages: a collation is seldom what a statement lacks
        self.cur.advance()
        first = self.cur.peek()
        parts = []
        while True:
            token = self.cur.peek()
            if token.type not in NAMES:
                raise self.error(f"expected a collation name after COLLATE but found {token.display}")
            parts.append(self.cur.advance().value.upper())
            if not self.cur.match_symbol(TokenType.DOT):
                break
        if parts[-1] == DEFAULT_COLLATION and parts[:-1] not in ([], ["SYSTEM", "BUILTIN"]):
            raise self.error(f"collation {'.'.join(parts)}: Spark names the default collation {DEFAULT_COLLATION} or "
                             f"SYSTEM.BUILTIN.{DEFAULT_COLLATION}", first)
        if parts[-1] != DEFAULT_COLLATION:
            raise self.error(f"{written} COLLATE {'.'.join(parts)}: only the default collation {DEFAULT_COLLATION} is supported; "
                             "another lives only in Spark's own schema record, and Hive, Trino and this catalog's readers "
                             "would compare and sort the column's values as plain strings", first)

    def _string(self, _: Token) -> DataType:
        self._collation("STRING")
        return StringType()

    def _length(self, name: Token, maximum: int) -> int:
        written = name.value.upper()
        if not self.cur.match_symbol(TokenType.LPAREN):
            raise self.error(f"{written} needs a length, e.g. {written}(10)", name)
        length, token = self._whole_number(f"the {written} length")
        if not 1 <= length <= maximum:
            raise self.error(f"{written} length must be between 1 and {maximum} (Hive's limit) but was {length}", token)
        self.cur.expect_symbol(TokenType.RPAREN)
        self._collation(f"{written}({length})")
        return length

    def _char(self, name: Token) -> DataType:
        return CharType(self._length(name, MAX_CHAR_LENGTH))

    def _varchar(self, name: Token) -> DataType:
        return VarcharType(self._length(name, MAX_VARCHAR_LENGTH))

    def _decimal(self, _: Token) -> DataType:
        """``DECIMAL`` is decimal(10,0) and ``DECIMAL(p)`` decimal(p,0), as Spark and Hive read them."""
        if not self.cur.match_symbol(TokenType.LPAREN):
            return DecimalType(10, 0)
        precision, token = self._whole_number("the decimal precision")
        if not 1 <= precision <= MAX_DECIMAL_PRECISION:
            raise self.error(f"decimal precision must be between 1 and {MAX_DECIMAL_PRECISION} but was {precision}", token)
        scale = 0
        if self.cur.match_symbol(TokenType.COMMA):
            scale, token = self._whole_number("the decimal scale")
            if scale > precision:
                raise self.error(f"decimal scale must be between 0 and the precision ({precision}) but was {scale}", token)
        self.cur.expect_symbol(TokenType.RPAREN)
        return DecimalType(precision, scale)

    def _timestamp(self, name: Token) -> DataType:
        """``TIMESTAMP[(6)] [WITH LOCAL TIME ZONE]`` and ``TIMESTAMP_LTZ[(6)]`` are Hive's timestamp; ``TIMESTAMP ..
        WITHOUT TIME ZONE`` is TIMESTAMP_NTZ."""
        if self.cur.match_symbol(TokenType.LPAREN):
            precision, token = self._whole_number("the timestamp precision")
            if precision != _TIMESTAMP_PRECISION:
                raise self.error(f"{name.value.upper()}({precision}): Spark's and Hive's timestamps have precision "
                                 f"{_TIMESTAMP_PRECISION} (microseconds) only", token)
            self.cur.expect_symbol(TokenType.RPAREN)
        if name.value.upper() == "TIMESTAMP":
            if self.cur.peek().is_keyword("WITHOUT"):
                raise self.error(f"TIMESTAMP WITHOUT TIME ZONE (TIMESTAMP_NTZ) {_NO_HIVE_TYPE}; use TIMESTAMP", self.cur.peek())
            if self.cur.match_keyword("WITH"):
                for word in ("LOCAL", "TIME", "ZONE"):
                    self.cur.expect_keyword(word)
        return TimestampType()

    def _double(self, _: Token) -> DataType:
        self.cur.match_keyword("PRECISION")  # HiveQL's DOUBLE PRECISION
        return DoubleType()
