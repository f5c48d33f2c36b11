"""Partition pruning: evaluate a WHERE predicate on partition values, and derive what the metastore can do.

A predicate may mention data columns the partition values cannot decide. Each part evaluates to the
set of outcomes it could have among TRUE, FALSE and NULL (SQL's three values); a data-column comparison
could be any of them. A partition is kept unless TRUE is impossible: WHERE keeps only rows that are TRUE,
so a partition whose predicate is FALSE or NULL for every row holds no row to read.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

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
from hms_catalog.types import DataType
from planner.partition_values import is_string_type, typed_value

__all__ = ["PartitionPredicate", "Outcomes"]

Outcomes = frozenset[bool | None]
TRUE: Outcomes = frozenset({True})
FALSE: Outcomes = frozenset({False})
NULL: Outcomes = frozenset({None})
ANY: Outcomes = frozenset({True, False, None})
_REGEX_CHARS = frozenset(".*+?()[]{}|^$\\")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}


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
        """Partition columns of string type pinned to one value by top-level ``col = 'v'`` conjuncts."""
        pinned: dict[str, str] = {}
        for part in conjuncts(self.expression):
            pair = _column_literal(part)
            if (pair and pair[0] == "=" and is_string_type(self.partition_types.get(pair[1])) and isinstance(pair[2], str)
                    and not _REGEX_CHARS.intersection(pair[2])):
                # the metastore matches partial specs as regular expressions: plain values only
                pinned.setdefault(pair[1], pair[2])
        return pinned

    def metastore_filter(self) -> str | None:
        """A get_partitions_by_filter expression covering what it can (a superset of the answer), or None.

        Only string partition columns are pushed: the metastore compares other types as text unless
        configured otherwise, which could drop matching partitions.
        """
        pieces = []
        for part in conjuncts(self.expression):
            rendered = self._filter_piece(part)
            if rendered:
                pieces.append(rendered)
        return " and ".join(pieces) if pieces else None

    def _filter_piece(self, node: Expression) -> str | None:
        pair = _column_literal(node)
        if pair is not None:
            op, column, value = pair
            # Only equality: ordering comparisons run in the metastore's database, under its collation.
            if op == "=" and is_string_type(self.partition_types.get(column)) and isinstance(value, str) and '"' not in value:
                return f'{column} {op} "{value}"'
            return None
        if isinstance(node, InList) and not node.negated and isinstance(node.operand, ColumnRef):
            column = node.operand.name.lower()
            values = [v.value for v in node.values if isinstance(v, Literal)]
            if (is_string_type(self.partition_types.get(column)) and len(values) == len(node.values)
                    and all(isinstance(v, str) and '"' not in v for v in values)):
                return "(" + " or ".join(f'{column} = "{v}"' for v in values) + ")"
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
