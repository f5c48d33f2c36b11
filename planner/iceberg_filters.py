"""Our WHERE expressions as pyiceberg row filters, for Iceberg's own pruning (partitions and metrics).

What cannot be expressed exactly (column against column, unknown columns) becomes "no filter" for that
part, never a narrower one: under AND it is dropped, under OR or NOT the whole branch is dropped. The
filter is a superset of the answer; Spark applies the full predicate to the rows. A TIMESTAMP literal
without a zone compared with a ``timestamptz`` column is read as UTC (the session time zone here).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from hms_catalog.sql.expressions import And, ColumnRef, Comparison, Expression, InList, IsNull, Literal, Not, Or

if TYPE_CHECKING:
    from pyiceberg.expressions import BooleanExpression
    from pyiceberg.expressions.literals import Literal as IcebergLiteral
    from pyiceberg.schema import Schema

__all__ = ["to_iceberg_filter"]

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}


def _literal(value: object, field: Any) -> IcebergLiteral[Any]:
    """``value`` (one of our literal values, never None) as the pyiceberg literal compared with ``field``."""
    from pyiceberg.expressions.literals import literal
    from pyiceberg.types import IntegerType, LongType, TimestamptzType

    if isinstance(value, Decimal) and isinstance(field.field_type, (IntegerType, LongType)):
        return literal(int(value))
    zoned = isinstance(field.field_type, TimestamptzType)
    if isinstance(value, datetime.datetime):
        if zoned and value.tzinfo is None:
            value = value.replace(tzinfo=datetime.UTC)
        return literal(value.isoformat())
    if isinstance(value, datetime.date):
        return literal(value.isoformat())
    # One call per type: literal() takes a constrained type variable, which a union does not satisfy.
    if isinstance(value, str):
        return literal(value)
    if isinstance(value, int):  # bool too: literal() tells them apart at run time
        return literal(value)
    if isinstance(value, Decimal):
        return literal(value)
    raise TypeError(f"Invalid literal value: {value!r}")  # what literal() itself raises


def _convert(node: Expression, columns: Mapping[str, Any]) -> tuple[BooleanExpression | None, bool]:
    """(pyiceberg expression or None, exact): None keeps every row; an inexact part is a superset and
    must never be negated, since NOT of a superset would drop rows."""
    from pyiceberg import expressions as ice

    if isinstance(node, And):
        (left, left_exact), (right, right_exact) = _convert(node.left, columns), _convert(node.right, columns)
        if left is None or right is None:
            return (left if right is None else right), False
        return ice.And(left, right), left_exact and right_exact
    if isinstance(node, Or):
        (left, left_exact), (right, right_exact) = _convert(node.left, columns), _convert(node.right, columns)
        if left is None or right is None:
            return None, False
        return ice.Or(left, right), left_exact and right_exact
    if isinstance(node, Not):
        inner, exact = _convert(node.operand, columns)
        return (ice.Not(inner), True) if inner is not None and exact else (None, False)
    if isinstance(node, IsNull) and isinstance(node.operand, ColumnRef) and node.operand.name.lower() in columns:
        name = columns[node.operand.name.lower()].name
        term = ice.Reference(name)
        return (ice.NotNull(term=term) if node.negated else ice.IsNull(term=term)), True
    if isinstance(node, InList) and isinstance(node.operand, ColumnRef) and node.operand.name.lower() in columns:
        field = columns[node.operand.name.lower()]
        literals = [v for v in node.values if isinstance(v, Literal) and _usable(v.value, field)]
        if len(literals) == len(node.values):
            term, values = ice.Reference(field.name), {_literal(v.value, field) for v in literals}
            return (ice.NotIn(term=term, values=values) if node.negated else ice.In(term=term, values=values)), True
        return None, False
    if isinstance(node, Comparison):
        op, column, value = node.op, None, None
        if isinstance(node.left, ColumnRef) and isinstance(node.right, Literal):
            column, value = node.left.name.lower(), node.right.value
        elif isinstance(node.right, ColumnRef) and isinstance(node.left, Literal):
            column, value, op = node.right.name.lower(), node.left.value, _FLIP[node.op]
        if column is None or column not in columns or not _usable(value, columns[column]):
            return None, False
        if isinstance(value, bool) and op not in ("=", "<>"):
            return None, False
        field = columns[column]
        makers = {"=": ice.EqualTo, "<>": ice.NotEqualTo, "<": ice.LessThan, "<=": ice.LessThanOrEqual,
                  ">": ice.GreaterThan, ">=": ice.GreaterThanOrEqual}
        return makers[op](field.name, _literal(value, field)), True
    return None, False


def _usable(value: object, field: Any) -> bool:
    """Whether pyiceberg would bind ``value`` to the field's type without changing it (it rounds a
    decimal literal against an integer column, which would drop rows)."""
    from pyiceberg.types import DecimalType, DoubleType, FloatType, IntegerType, LongType

    if value is None:
        return False
    kind = field.field_type
    if isinstance(value, Decimal) and isinstance(kind, (IntegerType, LongType)):
        return value == value.to_integral_value()
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return isinstance(kind, (IntegerType, LongType, DecimalType, FloatType, DoubleType))
    return True


def to_iceberg_filter(where: Expression | None, schema: Schema) -> BooleanExpression:
    """A pyiceberg BooleanExpression selecting a superset of the rows ``where`` selects, for ``schema``
    (a pyiceberg Schema: its top-level columns can be filtered)."""
    from pyiceberg.expressions import AlwaysTrue

    if where is None:
        return AlwaysTrue()
    converted, _ = _convert(where, {f.name.lower(): f for f in schema.fields})
    return AlwaysTrue() if converted is None else converted
