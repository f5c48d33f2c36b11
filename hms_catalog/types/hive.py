"""Hive type strings, as the metastore stores them, to and from the type tree.

A hand-written recursive-descent parser: each type is recognised by its leading keyword through a
dispatch table, so an error can always say what was expected at the offset where the input went
wrong. What the parser accepts, beyond what Hive itself writes:

* case and whitespace are free (``ARRAY < INT >``); ``integer``, ``dec``, ``numeric`` and
  ``double precision`` are aliases, ``interval year to month`` / ``interval day to second`` spell
  Hive's ``interval_year_month`` / ``interval_day_time``;
* ``decimal`` alone is ``decimal(10,0)`` and ``decimal(p)`` is ``decimal(p,0)``, Hive's defaults;
* struct field names may be backquoted (a doubled backquote escapes one), and an unquoted name runs
  up to its ``:`` -- Hive writes names such as ``a b`` or ``x.y`` unquoted, since its own type-string
  parser reads them that way;
* struct fields may carry ``COMMENT '...'`` with Hive's backslash escapes.

:func:`to_hive_string` writes the canonical form (lower-case, names backquoted only when needed) that
parses back to an equal tree. Hive strings carry neither nullability nor field ids, so those are
dropped; types Hive has no spelling for (``timestamp_ntz``, ``time``, ``uuid``, ``fixed``) are refused.
"""

from __future__ import annotations

from collections.abc import Callable

from hms_catalog.errors import SchemaError, UnsupportedTypeError
from hms_catalog.types._hive_lexer import Kind, Token, quote_name, quote_string, tokenize
from hms_catalog.types.tree import (
    MAX_DECIMAL_PRECISION,
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntervalDayTimeType,
    IntervalYearMonthType,
    IntType,
    MapType,
    PrimitiveType,
    SmallIntType,
    StringType,
    StructField,
    StructType,
    TimestampNtzType,
    TimestampType,
    TimeType,
    TinyIntType,
    TypeVisitor,
    UnionType,
    UuidType,
    VarcharType,
    VoidType,
    visit,
)

__all__ = ["parse_hive_type", "to_hive_string", "type_name"]

MAX_CHAR_LENGTH = 255
MAX_VARCHAR_LENGTH = 65535
DEFAULT_DECIMAL_PRECISION = 10
DEFAULT_DECIMAL_SCALE = 0
MAX_DEPTH = 100  # far beyond any real schema; keeps hostile input from exhausting the stack

# Types that are a single keyword in Hive, keyed by that keyword (and its aliases).
_PRIMITIVES: dict[str, PrimitiveType] = {
    "boolean": BooleanType(),
    "tinyint": TinyIntType(),
    "smallint": SmallIntType(),
    "int": IntType(),
    "integer": IntType(),
    "bigint": BigIntType(),
    "float": FloatType(),
    "string": StringType(),
    "binary": BinaryType(),
    "date": DateType(),
    "timestamp": TimestampType(),
    "void": VoidType(),
    "interval_year_month": IntervalYearMonthType(),
    "interval_day_time": IntervalDayTimeType(),
}


def parse_hive_type(text: str, *, column: str | None = None) -> DataType:
    """Parse a Hive type string; a malformed one raises :class:`SchemaError` naming ``column``."""
    parser = _Parser(text, column)
    result = parser.parse_type()
    parser.expect_end()
    return result


class _Parser:
    def __init__(self, text: str, column: str | None) -> None:
        self.text = text
        self.column = column
        self.tokens = tokenize(text, column)
        self.index = 0
        self.depth = 0
        self.dispatch: dict[str, Callable[[], DataType]] = {
            "double": self._double,
            "decimal": self._decimal,
            "dec": self._decimal,
            "numeric": self._decimal,
            "char": self._char,
            "varchar": self._varchar,
            "interval": self._interval,
            "array": self._array,
            "map": self._map,
            "struct": self._struct,
            "uniontype": self._union,
        }

    # -- token helpers ---------------------------------------------------------------------------

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        token = self.tokens[self.index]
        if token.kind is not Kind.END:
            self.index += 1
        return token

    def error(self, message: str, token: Token) -> SchemaError:
        return SchemaError(message, column=self.column, position=token.pos)

    def expected(self, what: str, token: Token | None = None) -> SchemaError:
        token = token or self.current
        if token.kind is Kind.END:
            return self.error(f"unexpected end of type string: expected {what}", token)
        return self.error(f"expected {what} but found {token.describe()}", token)

    def accept_punct(self, symbol: str) -> bool:
        if self.current.kind is Kind.PUNCT and self.current.text == symbol:
            self.index += 1
            return True
        return False

    def expect_punct(self, symbol: str, what: str) -> Token:
        token = self.current
        if not self.accept_punct(symbol):
            raise self.expected(f"'{symbol}' {what}")
        return token

    def accept_word(self, word: str) -> bool:
        if self.current.kind is Kind.WORD and self.current.value.lower() == word:
            self.index += 1
            return True
        return False

    def expect_word(self, word: str, what: str) -> None:
        if not self.accept_word(word):
            raise self.expected(f"'{word}' {what}")

    def expect_end(self) -> None:
        token = self.current
        if token.kind is not Kind.END:
            rest = self.text[token.pos :]
            shown = rest if len(rest) <= 30 else rest[:27] + "..."
            raise self.error(f"unexpected trailing input '{shown}' after the end of the type", token)

    def integer(self, what: str) -> tuple[int, Token]:
        token = self.current
        if token.kind is not Kind.WORD or not (token.value.isascii() and token.value.isdigit()):
            raise self.expected(what)
        self.index += 1
        return int(token.value), token

    # -- grammar ---------------------------------------------------------------------------------

    def parse_type(self) -> DataType:
        token = self.current
        if token.kind is not Kind.WORD:
            raise self.expected("a type")
        keyword = token.value.lower()
        primitive = _PRIMITIVES.get(keyword)
        if primitive is not None:
            self.index += 1
            return primitive
        handler = self.dispatch.get(keyword)
        if handler is None:
            raise self.error(f"unknown type '{token.value}'", token)
        self.index += 1
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"type is nested more than {MAX_DEPTH} levels deep", token)
        try:
            return handler()
        finally:
            self.depth -= 1

    def _double(self) -> DataType:
        self.accept_word("precision")
        return DoubleType()

    def _decimal(self) -> DataType:
        precision, scale = DEFAULT_DECIMAL_PRECISION, DEFAULT_DECIMAL_SCALE
        if self.accept_punct("("):
            precision, precision_token = self.integer("the decimal precision (an integer)")
            if not 1 <= precision <= MAX_DECIMAL_PRECISION:
                raise self.error(
                    f"decimal precision must be between 1 and {MAX_DECIMAL_PRECISION} but was {precision}",
                    precision_token,
                )
            scale = 0
            if self.accept_punct(","):
                scale, scale_token = self.integer("the decimal scale (an integer)")
                if scale > precision:
                    raise self.error(
                        f"decimal scale must be between 0 and the precision ({precision}) but was {scale}",
                        scale_token,
                    )
            self.expect_punct(")", "to close decimal(...)")
        return DecimalType(precision, scale)

    def _length(self, name: str, maximum: int) -> int:
        self.expect_punct("(", f"after {name}")
        length, token = self.integer(f"the {name} length (an integer)")
        if not 1 <= length <= maximum:
            raise self.error(f"{name} length must be between 1 and {maximum} but was {length}", token)
        self.expect_punct(")", f"to close {name}(...)")
        return length

    def _char(self) -> DataType:
        return CharType(self._length("char", MAX_CHAR_LENGTH))

    def _varchar(self) -> DataType:
        return VarcharType(self._length("varchar", MAX_VARCHAR_LENGTH))

    def _interval(self) -> DataType:
        if self.accept_word("year"):
            self.expect_word("to", "in 'interval year to month'")
            self.expect_word("month", "in 'interval year to month'")
            return IntervalYearMonthType()
        if self.accept_word("day"):
            self.expect_word("to", "in 'interval day to second'")
            self.expect_word("second", "in 'interval day to second'")
            return IntervalDayTimeType()
        raise self.expected("'year to month' or 'day to second' after interval")

    def _array(self) -> DataType:
        self.expect_punct("<", "after array")
        element = self.parse_type()
        self.expect_punct(">", "to close array<...>")
        return ArrayType(element)

    def _map(self) -> DataType:
        self.expect_punct("<", "after map")
        key = self.parse_type()
        self.expect_punct(",", "between the key and value types of map<...>")
        value = self.parse_type()
        self.expect_punct(">", "to close map<...>")
        return MapType(key, value)

    def _union(self) -> DataType:
        self.expect_punct("<", "after uniontype")
        alternatives = [self.parse_type()]
        while not self.accept_punct(">"):
            if not self.accept_punct(","):
                raise self.expected("',' or '>' to close uniontype<...>")
            alternatives.append(self.parse_type())
        return UnionType(tuple(alternatives))

    def _struct(self) -> DataType:
        self.expect_punct("<", "after struct")
        fields: list[StructField] = []
        if self.accept_punct(">"):
            return StructType(())
        while True:
            fields.append(self._field())
            if self.accept_punct(">"):
                return StructType(tuple(fields))
            if not self.accept_punct(","):
                raise self.expected("',' or '>' to close struct<...>")

    def _field(self) -> StructField:
        name = self._field_name()
        field_type = self.parse_type()
        comment = None
        if self.accept_word("comment"):
            token = self.current
            if token.kind is not Kind.STRING:
                raise self.expected("a quoted comment after COMMENT")
            self.index += 1
            comment = token.value
        return StructField(name, field_type, comment=comment)

    def _field_name(self) -> str:
        first = self.current
        if first.kind is Kind.NAME:
            self.index += 1
            self.expect_punct(":", f"after field name {first.text}")
            return first.value
        if first.kind not in (Kind.WORD, Kind.OTHER):
            raise self.expected("a field name")
        last = first
        while self.current.kind in (Kind.WORD, Kind.OTHER):
            last = self.advance()
        name = self.text[first.pos : last.end]
        self.expect_punct(":", f"after field name '{name}'")
        return name


# -- rendering -------------------------------------------------------------------------------------

_PRIMITIVE_NAMES: dict[type[PrimitiveType], str] = {
    BooleanType: "boolean",
    TinyIntType: "tinyint",
    SmallIntType: "smallint",
    IntType: "int",
    BigIntType: "bigint",
    FloatType: "float",
    DoubleType: "double",
    StringType: "string",
    BinaryType: "binary",
    DateType: "date",
    TimestampType: "timestamp",
    VoidType: "void",
    IntervalYearMonthType: "interval_year_month",
    IntervalDayTimeType: "interval_day_time",
}

# Names used only in messages, for types Hive cannot store.
_NON_HIVE_NAMES: dict[type[PrimitiveType], str] = {
    TimestampNtzType: "timestamp_ntz",
    TimeType: "time",
    UuidType: "uuid",
}


class _HiveRenderer(TypeVisitor[str]):
    def __init__(self, strict: bool) -> None:
        self.strict = strict

    def struct(self, struct: StructType, field_results: list[str]) -> str:
        return f"struct<{','.join(field_results)}>"

    def field(self, field: StructField, type_result: str) -> str:
        text = f"{quote_name(field.name)}:{type_result}"
        if field.comment is not None:
            text = f"{text} COMMENT {quote_string(field.comment)}"
        return text

    def array(self, array: ArrayType, element_result: str) -> str:
        return f"array<{element_result}>"

    def map(self, map_type: MapType, key_result: str, value_result: str) -> str:
        return f"map<{key_result},{value_result}>"

    def union(self, union: UnionType, alternative_results: list[str]) -> str:
        return f"uniontype<{','.join(alternative_results)}>"

    def primitive(self, primitive: PrimitiveType) -> str:
        name = _PRIMITIVE_NAMES.get(type(primitive))
        if name is not None:
            return name
        if isinstance(primitive, DecimalType):
            return f"decimal({primitive.precision},{primitive.scale})"
        if isinstance(primitive, CharType):
            return f"char({primitive.length})"
        if isinstance(primitive, VarcharType):
            return f"varchar({primitive.length})"
        shown = f"fixed({primitive.length})" if isinstance(primitive, FixedType) else _NON_HIVE_NAMES[type(primitive)]
        if self.strict:
            raise UnsupportedTypeError(f"type {shown} has no Hive type string")
        return shown


def to_hive_string(data_type: DataType) -> str:
    """Render the canonical Hive type string; types Hive cannot store raise UnsupportedTypeError."""
    return visit(data_type, _HiveRenderer(strict=True))


def type_name(data_type: DataType) -> str:
    """A Hive-like name of any type, for messages: never fails (``uuid``, ``fixed(16)``, ...)."""
    return visit(data_type, _HiveRenderer(strict=False))
