"""Our WHERE expressions as pyiceberg row filters, for Iceberg's own pruning (partitions and metrics).

What cannot be expressed exactly (column against column, unknown columns) becomes "no filter" for that
part, never a narrower one: under AND it is dropped, under OR or NOT the whole branch is dropped. The
filter is a superset of the answer; Spark applies the full predicate to the rows. A TIMESTAMP literal
without a zone compared with a ``timestamptz`` column is read as UTC (the session time zone here).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping

from hms_catalog.sql.expressions import And, ColumnRef, Comparison, Expression, InList, IsNull, Literal, Not, Or

__all__ = ["to_iceberg_filter"]

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}


def _value(value: object, zoned: bool) -> object:
    if isinstance(value, datetime.datetime):
        if zoned and value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return value.isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def _convert(node: Expression, names: Mapping[str, bool]):  # type: ignore[no-untyped-def]
    from pyiceberg import expressions as ice

    if isinstance(node, And):
        left, right = _convert(node.left, names), _convert(node.right, names)
        if left is None or right is None:
            return left if right is None else right
        return ice.And(left, right)
    if isinstance(node, Or):
        left, right = _convert(node.left, names), _convert(node.right, names)
        return None if left is None or right is None else ice.Or(left, right)
    if isinstance(node, Not):
        inner = _convert(node.operand, names)
        return None if inner is None else ice.Not(inner)
    if isinstance(node, IsNull) and isinstance(node.operand, ColumnRef) and node.operand.name.lower() in names:
        column = node.operand.name.lower()
        return ice.NotNull(column) if node.negated else ice.IsNull(column)
    if isinstance(node, InList) and isinstance(node.operand, ColumnRef) and node.operand.name.lower() in names:
        if all(isinstance(v, Literal) and v.value is not None for v in node.values):
            column = node.operand.name.lower()
            values = [_value(v.value, names[column]) for v in node.values]  # type: ignore[union-attr]
            return ice.NotIn(column, values) if node.negated else ice.In(column, values)
        return None
    if isinstance(node, Comparison):
        op, column, value = node.op, None, None
        if isinstance(node.left, ColumnRef) and isinstance(node.right, Literal):
            column, value = node.left.name.lower(), node.right.value
        elif isinstance(node.right, ColumnRef) and isinstance(node.left, Literal):
            column, value, op = node.right.name.lower(), node.left.value, _FLIP[node.op]
        if column is None or column not in names or value is None or isinstance(value, bool) and op not in ("=", "<>"):
            return None
        makers = {"=": ice.EqualTo, "<>": ice.NotEqualTo, "<": ice.LessThan, "<=": ice.LessThanOrEqual,
                  ">": ice.GreaterThan, ">=": ice.GreaterThanOrEqual}
        return makers[op](column, _value(value, names[column]))
    return None


def to_iceberg_filter(where: Expression | None, schema):  # type: ignore[no-untyped-def]
    """A pyiceberg BooleanExpression selecting a superset of the rows ``where`` selects, for ``schema``
    (a pyiceberg Schema: its top-level columns can be filtered)."""
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.types import TimestamptzType

    if where is None:
        return AlwaysTrue()
    zoned = {f.name.lower(): isinstance(f.field_type, TimestamptzType) for f in schema.fields}
    converted = _convert(where, zoned)
    return AlwaysTrue() if converted is None else converted
