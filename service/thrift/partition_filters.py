"""Partition filters (``get_partitions_by_filter``'s ``filter``) evaluated on cached partition names.

The thrift endpoint answers these calls from its cached names only where that cannot change the answer, so
this module accepts the part of the filter language on which every metastore we serve agrees and refuses
the rest with :class:`FilterNotEvaluable`; the caller then forwards the call. What we know, and why each
rule is here (sources: Hive 2.3 ``metastore/.../parser/Filter.g``, ``ExpressionTree``,
``MetaStoreDirectSql.PartitionFilterGenerator``; Hive 3/4 ``standalone-metastore``; all checked against the
embedded Hive 2.3.10 metastore in tests/service/thrift/test_partition_filters.py):

- Grammar (2.3, kept by 3 and 4): ``key op literal`` or ``literal op key`` with ``= <> != < <= > >= LIKE``,
  ``key [NOT] BETWEEN lit AND lit`` (``>= AND <=``; ``NOT`` gives ``< OR >``), ``AND`` binding tighter than
  ``OR``, parentheses. Keywords and key names are case-insensitive (the lexer reads upper-cased text and
  keys are matched with ``equalsIgnoreCase``). Hive 3/4 added ``IN``, ``date '..'`` and other literals that
  2.3 rejects: refused here, as is trailing text (2.3's ``filter`` rule has no EOF and may ignore it).
- String literals are only trimmed of their quotes in 2.3, while later parsers unescape them: a literal
  with a backslash is refused. An empty filter, a key that is not a partition key, or a literal of the
  wrong kind for the key (``s = 1``, ``i = '1'``: refused or coerced differently by each version) too.
- ``LIKE`` is a Java regular expression run through JDO in 2.3 (``'a%'`` matches nothing there) and was
  given SQL's meaning later: refused.
- Direct SQL (on by default) compares a string key as the backing database compares ``VARCHAR``: Derby and
  MySQL ignore trailing spaces, PostgreSQL does not; orders follow the database's collation. Equality is
  decided here except between strings differing only by trailing spaces; ``<``/``>`` only where every
  collation agrees (the first difference a pair of digits, or a digit and a letter after a prefix without
  letters; or one string extending the other: numbers and dates written alike). Other comparisons are unknown,
  and an answer that depends on one raises from :meth:`PartitionFilter.matches`. A string key's default
  partition is the string ``__HIVE_DEFAULT_PARTITION__`` (its name cannot tell it from an empty value a
  raw thrift client wrote; Hive and Spark write the default name).
- Integral keys (tinyint, smallint, int, bigint) with an integer literal (a Java long, or the parser
  fails) are compared as ``CAST(value AS DECIMAL(21,0))``, the default partition as NULL (false under any
  operator: the language has no negation). A value the cast may reject makes 2.3 fall back to JDO, which
  refuses integral keys altogether, while MySQL reads it as 0: any such value of a key the filter names
  raises from ``matches``, whatever the rest of the filter says. Other key types (date, varchar, ...) are
  refused: direct SQL and JDO disagree on them across versions.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from hms_catalog.errors import ErrorKind, HmsCatalogError

__all__ = ["FilterNotEvaluable", "PartitionFilter", "parse_partition_filter"]

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"
_INTEGRAL_TYPES = frozenset({"tinyint", "smallint", "int", "bigint"})
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_KEYWORDS = frozenset({"AND", "OR", "NOT", "BETWEEN", "LIKE", "IN", "DATE", "TIMESTAMP", "IS", "NULL"})
_TOKEN = re.compile(
    r"""(?P<space>[ \t\r\n]+)|(?P<string>'[^'\\]*'|"[^"\\]*")|(?P<op><>|!=|<=|>=|=|<|>)|(?P<paren>[()])"""
    r"""|(?P<number>-?[0-9]+(?![A-Za-z0-9_]))|(?P<word>[A-Za-z][A-Za-z0-9_]*)"""
)
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}
_MIRROR = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_STRICT_INTEGER = re.compile(r"-?[0-9]{1,21}")
_DIGITS = frozenset("0123456789")


class FilterNotEvaluable(HmsCatalogError):
    """A filter the metastore may answer (or refuse) otherwise than a local evaluation: forward the call."""

    error_kind = ErrorKind.UNSUPPORTED


@dataclass(frozen=True)
class _Leaf:
    key: str
    op: str
    literal: str | int

    def evaluate(self, values: Mapping[str, str | None]) -> bool | None:
        value = values[self.key]
        if isinstance(self.literal, int):
            if value is None:  # the default partition reads as SQL NULL: false under every operator
                return False
            return _COMPARE[self.op](int(value), self.literal)
        text = DEFAULT_PARTITION_NAME if value is None else value
        if self.op in ("=", "<>"):
            if text != self.literal and text.rstrip(" ") == self.literal.rstrip(" "):
                return None  # equal where the database pads with spaces, different where it does not
        elif not _same_order_everywhere(text, self.literal):
            return None
        return _COMPARE[self.op](text, self.literal)


@dataclass(frozen=True)
class _Node:
    conjunction: bool  # AND when true, OR when false
    children: tuple[_Expression, ...]

    def evaluate(self, values: Mapping[str, str | None]) -> bool | None:
        unknown = False
        for child in self.children:
            result = child.evaluate(values)
            if result is None:
                unknown = True
            elif result is not self.conjunction:
                return result
        return None if unknown else self.conjunction


_Expression = _Leaf | _Node


def _same_order_everywhere(left: str, right: str) -> bool:
    """True where binary, padded, case-insensitive and locale collations all order the two strings alike: digits
    sort alike and before letters everywhere, letters do not (Danish puts ``aa`` after ``z``)."""
    if left == right:
        return True
    if DEFAULT_PARTITION_NAME in (left, right):  # locale collations skip its underscores, binary ones do not
        return (right if left == DEFAULT_PARTITION_NAME else left)[:1] in _DIGITS
    for index, (one, other) in enumerate(zip(left, right)):
        if one != other:
            if one in _DIGITS and other in _DIGITS:
                return True
            pair = one + other
            digit_and_letter = (one in _DIGITS) != (other in _DIGITS) and pair.isascii() and pair.isalnum()
            return digit_and_letter and not any(c.isalpha() for c in left[:index])
    tail = (left if len(left) > len(right) else right)[min(len(left), len(right))]
    return tail.isascii() and (tail.isalnum() or tail in "-:./_")  # the shorter first, even padded with spaces


class PartitionFilter:
    """A parsed filter; :meth:`matches` tells whether a partition, given by its key values, is selected."""

    def __init__(self, text: str, root: _Expression, keys: frozenset[str], integral: frozenset[str]) -> None:
        self.text = text
        self._root = root
        self._keys = keys
        self._integral = integral

    @property
    def keys(self) -> frozenset[str]:
        """The partition keys (lower case) the filter names."""
        return self._keys

    def matches(self, values: Mapping[str, str | None]) -> bool:
        """Whether the partition with these key values (None: the default partition) is selected.

        Raises :class:`FilterNotEvaluable` where the metastore's answer for this partition depends on its
        database or version, or where its database would fail the whole call (see the module docstring);
        the caller then forwards the call rather than answer for any partition.
        """
        lowered = {key.lower(): value for key, value in values.items()}
        missing = self._keys - lowered.keys()
        if missing:
            raise FilterNotEvaluable(f"partition values lack the key(s) {sorted(missing)} of filter {self.text!r}")
        for key in self._integral:
            value = lowered[key]
            if value is not None and not _STRICT_INTEGER.fullmatch(value):
                raise FilterNotEvaluable(f"partition value {value!r} of integral key '{key}' is not a plain "
                                         f"integer: the metastore's answer to filter {self.text!r} depends on it")
        result = self._root.evaluate(lowered)
        if result is None:
            raise FilterNotEvaluable(f"filter {self.text!r} compares strings the metastore's database may order "
                                     "or equate differently")
        return result


def parse_partition_filter(text: str, key_types: Mapping[str, str]) -> PartitionFilter:
    """Parse ``text`` for a table whose partition keys have ``key_types`` (lower-case name -> Hive type).

    Raises :class:`FilterNotEvaluable` for anything outside the part of the language evaluated here.
    """
    parser = _Parser(text, _tokens(text), {name.lower(): kind for name, kind in key_types.items()})
    root = parser.disjunction()
    if parser.position != len(parser.tokens):
        parser.fail("unexpected text after the filter")
    keys = frozenset(parser.keys)
    integral = frozenset(key for key in keys if parser.key_types[key] in _INTEGRAL_TYPES)
    return PartitionFilter(text, root, keys, integral)


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise FilterNotEvaluable(f"partition filter {text!r}: cannot read it at offset {position}")
        kind, value = match.lastgroup or "", match.group()
        if kind == "word" and value.upper() in _KEYWORDS:
            kind, value = "keyword", value.upper()
        if kind != "space":
            tokens.append((kind, value))
        position = match.end()
    if not tokens:
        raise FilterNotEvaluable("the partition filter is empty")
    return tokens


class _Parser:
    """Recursive descent over Hive 2.3's grammar (``orExpression``, ``andExpression``, ``expression``)."""

    def __init__(self, text: str, tokens: Sequence[tuple[str, str]], key_types: Mapping[str, str]) -> None:
        self.text = text
        self.tokens = tokens
        self.key_types = key_types
        self.position = 0
        self.keys: set[str] = set()

    def fail(self, reason: str) -> NoReturn:
        near = self.tokens[self.position][1] if self.position < len(self.tokens) else "the end"
        raise FilterNotEvaluable(f"partition filter {self.text!r}: {reason} (near {near!r})")

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.position] if self.position < len(self.tokens) else ("end", "")

    def take(self, kind: str, value: str | None = None) -> str:
        found_kind, found = self.peek()
        if found_kind != kind or (value is not None and found != value):
            self.fail(f"expected {value or kind}")
        self.position += 1
        return found

    def disjunction(self) -> _Expression:
        children = [self.conjunction()]
        while self.peek() == ("keyword", "OR"):
            self.position += 1
            children.append(self.conjunction())
        return children[0] if len(children) == 1 else _Node(False, tuple(children))

    def conjunction(self) -> _Expression:
        children = [self.primary()]
        while self.peek() == ("keyword", "AND"):
            self.position += 1
            children.append(self.primary())
        return children[0] if len(children) == 1 else _Node(True, tuple(children))

    def primary(self) -> _Expression:
        if self.peek() == ("paren", "("):
            self.position += 1
            inner = self.disjunction()
            self.take("paren", ")")
            return inner
        if self.peek()[0] == "word":
            key = self.key(self.take("word"))
            if self.peek() in (("keyword", "NOT"), ("keyword", "BETWEEN")):
                return self.between(key)
            op = self.operator()
            return _Leaf(key, op, self.literal(key))
        literal_token = self.literal_token()
        op = _MIRROR[self.operator()]
        key = self.key(self.take("word"))
        return _Leaf(key, op, self.convert(key, literal_token))

    def between(self, key: str) -> _Expression:
        negated = self.peek() == ("keyword", "NOT")
        self.position += int(negated)
        self.take("keyword", "BETWEEN")
        low = self.literal(key)
        self.take("keyword", "AND")
        high = self.literal(key)
        if negated:
            return _Node(False, (_Leaf(key, "<", low), _Leaf(key, ">", high)))
        return _Node(True, (_Leaf(key, ">=", low), _Leaf(key, "<=", high)))

    def key(self, name: str) -> str:
        key = name.lower()
        if key not in self.key_types:
            self.fail(f"'{name}' is not a partition key of the table")
        kind = self.key_types[key]
        if kind != "string" and kind not in _INTEGRAL_TYPES:
            self.fail(f"partition key '{name}' is of type {kind}, whose filtering differs between metastores")
        self.keys.add(key)
        return key

    def operator(self) -> str:
        kind, value = self.peek()
        if kind == "keyword" and value == "LIKE":
            self.fail("LIKE means a Java regular expression to some metastores and SQL's LIKE to others")
        op = self.take("op")
        return "<>" if op == "!=" else op

    def literal_token(self) -> tuple[str, str]:
        token = self.peek()
        if token[0] not in ("string", "number"):
            self.fail("expected a string or integer literal (or a partition key, or '(')")
        self.position += 1
        return token

    def literal(self, key: str) -> str | int:
        return self.convert(key, self.literal_token())

    def convert(self, key: str, token: tuple[str, str]) -> str | int:
        kind, value = token
        integral = self.key_types[key] in _INTEGRAL_TYPES
        if kind == "string" and not integral:
            return value[1:-1]
        if kind == "number" and integral:
            number = int(value)
            if not _LONG_MIN <= number <= _LONG_MAX:
                self.fail("the integer does not fit a Java long")
            return number
        self.fail(f"a {kind} literal for key '{key}' of type {self.key_types[key]} is taken differently by each metastore")
