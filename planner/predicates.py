"""Partition pruning: evaluate a WHERE predicate on partition values, and derive what the metastore can do.

A predicate may mention data columns the partition values cannot decide. Each part evaluates to the
set of outcomes it could have among TRUE, FALSE and NULL (SQL's three values); a data-column comparison
could be any of them. A partition is kept unless TRUE is impossible: WHERE keeps only rows that are TRUE,
so a partition whose predicate is FALSE or NULL for every row holds no row to read.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import cast

from hms_catalog.formats.partition_values import is_string_type, typed_value
from hms_catalog.sql.expressions import (
    And,
    ColumnRef,
    Comparison,
    Expression,
    InList,
    IsNull,
    Literal,
    Not,
    Or,
    conjuncts,
)
from hms_catalog.types import BigIntType, DataType, DateType, IntType, SmallIntType, StringType, TinyIntType

__all__ = ["PartitionPredicate", "Outcomes", "MetastoreFilter", "filter_kind", "STRING", "INTEGRAL", "DATE"]

Outcomes = frozenset[bool | None]
TRUE: Outcomes = frozenset({True})
FALSE: Outcomes = frozenset({False})
NULL: Outcomes = frozenset({None})
ANY: Outcomes = frozenset({True, False, None})
_REGEX_CHARS = frozenset(".*+?()[]{}|^$\\")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}
# Kinds of metastore filter, by the type of the key compared: a metastore refuses them separately.
STRING, INTEGRAL, DATE = "string", "integral", "date"
_FILTER_OPERATORS = frozenset({"=", "<>", "<", "<=", ">", ">="})
_FILTER_IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*")  # an identifier of Hive's filter grammar
# Longer IN lists are asked as the range of their values (as Spark's metastorePartitionPruningInSetThreshold
# does): a filter of thousands of ORs is slow to parse and to run in the metastore's database.
IN_LIST_AS_RANGE = 100


def _and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _or(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


class _Incomparable(Exception):
    """The two values are of different type families (a string against a number, a date against a time)."""


def _family(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float, Decimal)):
        return "number"
    if isinstance(value, datetime.datetime):
        return "timestamp"
    if isinstance(value, datetime.date):
        return "date"
    return type(value).__name__


def _compare(op: str, left: object, right: object) -> bool | None:
    if left is None or right is None:
        return None
    if _family(left) != _family(right):
        raise _Incomparable
    try:
        if op == "=":
            return bool(left == right)
        if op == "<>":
            return bool(left != right)
        if op == "<":
            return bool(left < right)  # type: ignore[operator]
        if op == "<=":
            return bool(left <= right)  # type: ignore[operator]
        if op == ">":
            return bool(left > right)  # type: ignore[operator]
        return bool(left >= right)  # type: ignore[operator]
    except TypeError:
        raise _Incomparable from None


@dataclass(frozen=True)
class PartitionPredicate:
    """A WHERE predicate bound to a table's partition columns (name -> type)."""

    expression: Expression
    partition_types: Mapping[str, DataType | None]

    @property
    def touches_partitions(self) -> bool:
        from hms_catalog.sql.expressions import columns

        return bool(columns(self.expression) & set(self.partition_types))

    def may_match(self, values: Mapping[str, str | None]) -> bool:
        """Whether rows of the partition with these raw values could satisfy the predicate."""
        typed = {name: typed_value(values.get(name), kind) for name, kind in self.partition_types.items()}
        return True in self._outcomes(self.expression, typed)

    def _outcomes(self, node: Expression, values: Mapping[str, object]) -> Outcomes:
        if isinstance(node, And):
            left, right = self._outcomes(node.left, values), self._outcomes(node.right, values)
            return frozenset(_and(a, b) for a in left for b in right)
        if isinstance(node, Or):
            left, right = self._outcomes(node.left, values), self._outcomes(node.right, values)
            return frozenset(_or(a, b) for a in left for b in right)
        if isinstance(node, Not):
            return frozenset(None if v is None else not v for v in self._outcomes(node.operand, values))
        if isinstance(node, Literal):
            return frozenset({node.value if isinstance(node.value, bool) or node.value is None else True})
        operands = self._operands(node, values)
        if operands is None:
            return ANY
        if isinstance(node, IsNull):
            value = operands[0]
            return frozenset({(value is not None) if node.negated else (value is None)})
        try:
            if isinstance(node, Comparison):
                return frozenset({_compare(node.op, operands[0], operands[1])})
            if isinstance(node, InList):
                value, *candidates = operands
                found: bool | None = False
                for candidate in candidates:
                    found = _or(found, _compare("=", value, candidate))
                return frozenset({None if found is None else (not found if node.negated else found)})
        except _Incomparable:
            return ANY  # Spark would cast one side; we do not guess how, so this part cannot prune
        return ANY

    def _operands(self, node: Expression, values: Mapping[str, object]) -> list[object] | None:
        """Typed values of a node's operands, or None when one is not a partition column or a literal."""
        parts: list[Expression]
        if isinstance(node, IsNull):
            parts = [node.operand]
        elif isinstance(node, Comparison):
            parts = [node.left, node.right]
        elif isinstance(node, InList):
            parts = [node.operand, *node.values]
        else:
            return None
        column_type = next((self.partition_types[p.name.lower()] for p in parts
                            if isinstance(p, ColumnRef) and p.name.lower() in self.partition_types), None)
        resolved: list[object] = []
        for part in parts:
            if isinstance(part, ColumnRef):
                if part.name.lower() not in self.partition_types:
                    return None
                resolved.append(values[part.name.lower()])
            elif isinstance(part, Literal):
                resolved.append(_coerce(part.value, column_type))
            else:
                return None
        return resolved

    # What the metastore can be asked ------------------------------------------------------------

    def equalities(self) -> dict[str, str]:
        """Partition columns of string type pinned to one value by top-level ``col = 'v'`` conjuncts, with values a
        partial spec can hold (see :meth:`_pinned`)."""
        pinned: dict[str, str] = {}
        for part in conjuncts(self.expression):
            pair = _column_literal(part)
            found = self._pinned(part) if pair is not None and pair[0] == "=" else None
            if found is not None:
                column, (value,) = found
                pinned.setdefault(column, value)
        return pinned

    def partial_specs(self, keys: Sequence[str], limit: int) -> list[list[str]] | None:
        """Partial partition specs for get_partition_names_ps ('' for any value) naming, together, every partition
        the predicate may match: when each top-level conjunct on partition columns pins a string key to plain
        values (``col = 'v'``, ``col IN ('v', 'w')``), one spec per combination of the pinned values. None when a
        conjunct on partition columns is anything else (a filter expresses it in one call) or when more than
        ``limit`` specs would be needed; an empty list when the conjuncts contradict each other."""
        pinned: dict[str, set[str]] = {}
        for part in conjuncts(self.expression):
            values = self._pinned(part)
            if values is None:
                if PartitionPredicate(part, self.partition_types).touches_partitions:
                    return None
                continue
            column, found = values
            pinned[column] = pinned[column] & found if column in pinned else found
        if not pinned:
            return None
        choices = [sorted(pinned[key.lower()]) if key.lower() in pinned else [""] for key in keys]
        count = 1
        for choice in choices:
            count *= len(choice)
        if count > limit:
            return None
        specs: list[list[str]] = [[]]
        for choice in choices:
            specs = [[*spec, value] for spec in specs for value in choice]
        for spec in specs:
            while spec and spec[-1] == "":
                spec.pop()
        return specs

    def _pinned(self, node: Expression) -> tuple[str, set[str]] | None:
        """(column, values) of ``col = 'v'`` or ``col IN ('v', ...)`` on a string partition key, with values the
        metastore can match as they are (not empty, which a spec reads as any, and no regular expression
        characters)."""
        column: str | None = None
        values: list[object] = []
        pair = _column_literal(node)
        if pair is not None and pair[0] == "=":
            column, values = pair[1], [pair[2]]
        elif (isinstance(node, InList) and not node.negated and isinstance(node.operand, ColumnRef)
              and all(isinstance(value, Literal) for value in node.values)):
            column, values = node.operand.name.lower(), [cast(Literal, value).value for value in node.values]
        if column is None or not is_string_type(self.partition_types.get(column)):
            return None
        if not all(isinstance(value, str) and value and not _REGEX_CHARS.intersection(value) for value in values):
            return None
        return column, {cast(str, value) for value in values}

    def metastore_filter(self, refused: frozenset[str] = frozenset()) -> MetastoreFilter | None:
        """A get_partitions_by_filter expression covering what it can (a superset of the answer), leaving
        out comparisons on keys of a ``refused`` kind; None when nothing can be expressed.

        Pushed: ``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=`` (so BETWEEN, which the parser spells as two
        comparisons) and ``IN`` between a key and literals, on ``string``, integral and ``date`` keys,
        AND and OR of those. The literal must already be of the key's type as Spark casts it (``n = '10'``
        on an int key is ``n = 10``); a comparison Spark would make in another type stays local.

        Comparisons run in the metastore's database, under its collation. Derby (the embedded metastore)
        and Oracle compare strings by character code, as Spark does; MySQL's default collations ignore case and
        PostgreSQL's follow the database's locale, so there ``'B' < 'a'`` or ``'A' <> 'a'`` may be false
        where Spark finds it true, and the metastore leaves out a partition Spark would read. Spark pushes
        the same comparisons (ranges, ``<>`` and ``IN`` on string keys, through its Hive client's filter
        conversion), so on such a metastore Spark's own Hive tables lose the same partitions; we answer as
        Spark does there, and as Spark's order says everywhere else. The local evaluation that follows can
        only narrow what the metastore returned, never bring back what it left out.
        """
        pieces = [piece for part in conjuncts(self.expression) if (piece := self._filter_piece(part, refused))]
        if not pieces:
            return None
        return MetastoreFilter(" and ".join(text for text, _ in pieces), frozenset().union(*(kinds for _, kinds in pieces)))

    def _filter_piece(self, node: Expression, refused: frozenset[str]) -> tuple[str, frozenset[str]] | None:
        """``node`` as a filter (a superset of its rows) and the kinds of key it compares; None if it cannot be."""
        if isinstance(node, And):
            left, right = self._filter_piece(node.left, refused), self._filter_piece(node.right, refused)
            if left and right:
                return f"({left[0]} and {right[0]})", left[1] | right[1]
            return left or right  # one side alone still covers the conjunction
        if isinstance(node, Or):
            left, right = self._filter_piece(node.left, refused), self._filter_piece(node.right, refused)
            if left and right:
                return f"({left[0]} or {right[0]})", left[1] | right[1]
            return None
        pair = _column_literal(node)
        if pair is not None:
            op, column, value = pair
            kind = self._pushable_kind(column, refused)
            if kind is None or op not in _FILTER_OPERATORS:
                return None
            literal = _filter_literal(_coerce(value, self.partition_types[column]), kind)
            return None if literal is None else (f"{column} {op} {literal}", frozenset({kind}))
        if isinstance(node, InList) and not node.negated and isinstance(node.operand, ColumnRef):
            return self._in_piece(node.operand.name.lower(), node.values, refused)
        return None

    def _in_piece(self, column: str, items: Sequence[Expression], refused: frozenset[str]) -> tuple[str, frozenset[str]] | None:
        kind = self._pushable_kind(column, refused)
        if kind is None or not all(isinstance(item, Literal) for item in items):
            return None
        typed = [_coerce(item.value, self.partition_types[column]) for item in items if isinstance(item, Literal)]
        typed = [value for value in typed if value is not None]  # NULL equals nothing: it selects no partition
        literals = [_filter_literal(value, kind) for value in typed]
        if not literals or any(literal is None for literal in literals):
            return None
        if len(literals) > IN_LIST_AS_RANGE:
            low, high = min(typed), max(typed)  # type: ignore[type-var]
            return f"({column} >= {_filter_literal(low, kind)} and {column} <= {_filter_literal(high, kind)})", frozenset({kind})
        return "(" + " or ".join(f"{column} = {literal}" for literal in literals) + ")", frozenset({kind})

    def _pushable_kind(self, column: str, refused: frozenset[str]) -> str | None:
        if column not in self.partition_types or not _FILTER_IDENTIFIER.fullmatch(column):
            return None
        kind = filter_kind(self.partition_types[column])
        return None if kind is None or kind in refused else kind


@dataclass(frozen=True)
class MetastoreFilter:
    """A filter in Hive's get_partitions_by_filter grammar, and the kinds of key it compares: what a
    metastore that refuses it is remembered to refuse."""

    expression: str
    kinds: frozenset[str]


def filter_kind(kind: DataType | None) -> str | None:
    """The kind of filter a key of type ``kind`` takes (``string``, ``integral``, ``date``), or None when
    Hive's filter cannot compare it (char and varchar keys are refused by Hive's filter pushdown)."""
    if isinstance(kind, StringType):
        return STRING
    if isinstance(kind, (TinyIntType, SmallIntType, IntType, BigIntType)):
        return INTEGRAL
    if isinstance(kind, DateType):
        return DATE
    return None


def _filter_literal(value: object, kind: str) -> str | None:
    """``value`` as a literal of the filter grammar for a key of ``kind``; None when it cannot be written
    (the grammar has no escapes: a string holding both quote characters cannot be)."""
    if kind == STRING and isinstance(value, str):
        if '"' not in value:
            return f'"{value}"'
        return f"'{value}'" if "'" not in value else None
    if kind == INTEGRAL and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if kind == DATE and isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return f'"{value.isoformat()}"'  # a quoted date: Hive parses it as a date for a date key
    return None


def _coerce(value: object, kind: DataType | None) -> object:
    """The literal in the column's type, as Spark casts a literal to its column: but a number, date or
    boolean against a string column is left as it is (Spark compares those as numbers, not text), so
    the comparison is incomparable and cannot prune."""
    if value is None or isinstance(value, bool) or kind is None:
        return value
    if is_string_type(kind) and not isinstance(value, str):
        return value
    converted = typed_value(str(value), kind)
    return value if converted is None else converted


def _column_literal(node: Expression) -> tuple[str, str, object] | None:
    """``col op literal`` (or ``literal op col``, flipped) as (op, column, value)."""
    if not isinstance(node, Comparison):
        return None
    if isinstance(node.left, ColumnRef) and isinstance(node.right, Literal):
        return node.op, node.left.name.lower(), node.right.value
    if isinstance(node.right, ColumnRef) and isinstance(node.left, Literal):
        return _FLIP[node.op], node.right.name.lower(), node.left.value
    return None


def bind(expression: Expression | None, partition_types: Mapping[str, DataType | None]) -> PartitionPredicate | None:
    return None if expression is None else PartitionPredicate(expression, {k.lower(): v for k, v in partition_types.items()})


def keys_in_order(keys: Sequence[str], pinned: Mapping[str, str]) -> list[str]:
    """A partial partition spec for get_partition_names_ps: pinned values, '' (any) for the others, trailing
    wildcards dropped."""
    values = [pinned.get(key.lower(), "") for key in keys]
    while values and values[-1] == "":
        values.pop()
    return values
