"""Spark's pushed filters as our WHERE expressions, for partition pruning only.

Only filters on partition columns are converted (others cannot prune and Spark applies them anyway);
the conjunction of what converts is a superset of the rows, which is all pruning needs.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Set
from typing import Any

from hms_catalog.sql.expressions import And, ColumnRef, Comparison, Expression, InList, IsNull, Literal, Not

__all__ = ["spark_filters_to_expression"]

_OPERATORS = {"EqualTo": "=", "GreaterThan": ">", "GreaterThanOrEqual": ">=", "LessThan": "<", "LessThanOrEqual": "<="}


def _literal(value: Any) -> Literal | None:
    if value is None or isinstance(value, (bool, int, str, datetime.date, datetime.datetime)):
        return Literal(value)
    from decimal import Decimal

    if isinstance(value, Decimal):
        return Literal(value)
    if isinstance(value, float) and value == value:
        return Literal(Decimal(repr(value)))
    return None


def _convert(spark_filter: Any, partitions: Set[str]) -> Expression | None:
    kind = type(spark_filter).__name__
    attribute = getattr(spark_filter, "attribute", None)
    if isinstance(attribute, tuple):
        if len(attribute) != 1:
            return None
        attribute = attribute[0]
    column = str(attribute).lower() if attribute is not None else None
    if kind == "Not":
        inner = _convert(spark_filter.child, partitions)
        return None if inner is None else Not(inner)
    if column is None or column not in partitions:
        return None
    if kind in _OPERATORS:
        literal = _literal(spark_filter.value)
        return None if literal is None or literal.value is None else Comparison(_OPERATORS[kind], ColumnRef(column), literal)
    if kind == "In":
        values = [_literal(v) for v in spark_filter.value]
        if not values or any(v is None or v.value is None for v in values):
            return None
        return InList(ColumnRef(column), tuple(values), False)  # type: ignore[arg-type]
    if kind == "IsNull":
        return IsNull(ColumnRef(column), False)
    if kind == "IsNotNull":
        return IsNull(ColumnRef(column), True)
    return None


def spark_filters_to_expression(filters: Iterable[Any], partition_columns: Set[str]) -> Expression | None:
    converted = [expression for f in filters if (expression := _convert(f, partition_columns)) is not None]
    if not converted:
        return None
    result = converted[0]
    for expression in converted[1:]:
        result = And(result, expression)
    return result
