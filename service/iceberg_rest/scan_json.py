"""Scan planning's answers as the spec writes them: content files, single values, and residual filters.

pyiceberg reads this JSON (its ``RESTContentFile`` models) but writes none of it, and its bound expressions do
not serialize at all, so the renderings are here, each following the spec's single-value serialization
(``PrimitiveTypeValue``): dates, times and timestamps as ISO-8601 text, decimals as text keeping the scale,
UUIDs as lower-case text, fixed and binary as upper-case hex. Values arrive in pyiceberg's internal form
(days, microseconds) from manifests and bound literals, or as Python values from unbound ones.
"""

from __future__ import annotations

import datetime
import math
import uuid
from collections.abc import Collection, Mapping
from decimal import Decimal
from typing import Any

__all__ = ["content_file", "expression_json", "value_json"]

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_DAY = datetime.date(1970, 1, 1)

_CONTENT = {0: "data", 1: "position-deletes", 2: "equality-deletes"}
_PREDICATE_TYPES = {
    "EqualTo": "eq", "NotEqualTo": "not-eq", "LessThan": "lt", "LessThanOrEqual": "lt-eq", "GreaterThan": "gt",
    "GreaterThanOrEqual": "gt-eq", "StartsWith": "starts-with", "NotStartsWith": "not-starts-with", "In": "in",
    "NotIn": "not-in", "IsNull": "is-null", "NotNull": "not-null", "IsNaN": "is-nan", "NotNaN": "not-nan",
}


def _micros(value: Any) -> datetime.datetime:
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None) if value.tzinfo is None else value.astimezone(datetime.UTC).replace(tzinfo=None)
    return _EPOCH + datetime.timedelta(microseconds=int(value))


def value_json(kind: Any, value: Any) -> Any:
    """``value`` of the Iceberg primitive type ``kind`` (None: unknown, kept as JSON allows) as the spec writes it."""
    name = str(kind).split("(")[0].split("[")[0] if kind is not None else ""
    if value is None:
        return None
    if name == "date":
        day = value if isinstance(value, datetime.date) else _EPOCH_DAY + datetime.timedelta(days=int(value))
        return day.isoformat()
    if name == "time":
        moment = value if isinstance(value, datetime.time) else (_EPOCH + datetime.timedelta(microseconds=int(value))).time()
        return moment.isoformat(timespec="microseconds")
    if name in ("timestamp", "timestamptz"):
        text = _micros(value).isoformat(timespec="microseconds")
        return text + "+00:00" if name == "timestamptz" else text
    if name == "decimal":
        number = Decimal(value) if not isinstance(value, Decimal) else value
        return format(number, "f") if number.as_tuple().exponent <= 0 else str(number)  # type: ignore[operator]
    if name == "uuid":
        return str(value if isinstance(value, uuid.UUID) else uuid.UUID(bytes=bytes(value))).lower()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex().upper()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return value


def _finite(value: Any) -> bool:
    return not (isinstance(value, float) and not math.isfinite(value))  # JSON has no NaN or infinity


def _count_map(counts: Mapping[int, int] | None, ids: Collection[int]) -> dict[str, list[int]] | None:
    if not counts:
        return None
    keys = [key for key in sorted(counts) if key in ids]
    return {"keys": keys, "values": [int(counts[key]) for key in keys]} if keys else None


def _value_map(bounds: Mapping[int, bytes] | None, ids: Collection[int], schema: Any) -> dict[str, list[Any]] | None:
    from pyiceberg.conversions import from_bytes

    if not bounds:
        return None
    keys: list[int] = []
    values: list[Any] = []
    for key in sorted(bounds):
        if key not in ids:
            continue
        kind = schema.find_type(key)
        value = from_bytes(kind, bounds[key])
        if _finite(value):
            keys.append(key)
            values.append(value_json(kind, value))
    return {"keys": keys, "values": values} if keys else None


def _partition(data_file: Any, partition_types: Mapping[int, Any]) -> list[Any]:
    kinds = partition_types.get(data_file.spec_id)
    record = data_file.partition
    values = [record[index] for index in range(len(record))] if record is not None else []
    return [value_json(kinds[index] if kinds is not None and index < len(kinds) else None, value)
            for index, value in enumerate(values)]


def content_file(data_file: Any, partition_types: Mapping[int, Any], schema: Any, stats: Collection[int] = ()) -> dict[str, Any]:
    """A manifest's data or delete file as the spec's ContentFile; the column statistics of the field ids
    ``stats`` only (the request's ``stats-fields``), and only for a data file. ``partition_types``: each spec id's
    partition field result types, in order."""
    answer: dict[str, Any] = {
        "content": _CONTENT[int(data_file.content)], "file-path": data_file.file_path,
        "file-format": data_file.file_format.name.lower(), "spec-id": data_file.spec_id,
        "partition": _partition(data_file, partition_types), "file-size-in-bytes": int(data_file.file_size_in_bytes),
        "record-count": int(data_file.record_count),
    }
    if data_file.split_offsets:
        answer["split-offsets"] = [int(offset) for offset in data_file.split_offsets]
    if data_file.sort_order_id is not None:
        answer["sort-order-id"] = data_file.sort_order_id
    if data_file.key_metadata:
        answer["key-metadata"] = bytes(data_file.key_metadata).hex().upper()
    if answer["content"] == "equality-deletes":
        answer["equality-ids"] = list(data_file.equality_ids or [])
    if answer["content"] == "data" and stats:
        for key, found in (("column-sizes", _count_map(data_file.column_sizes, stats)),
                           ("value-counts", _count_map(data_file.value_counts, stats)),
                           ("null-value-counts", _count_map(data_file.null_value_counts, stats)),
                           ("nan-value-counts", _count_map(data_file.nan_value_counts, stats)),
                           ("lower-bounds", _value_map(data_file.lower_bounds, stats, schema)),
                           ("upper-bounds", _value_map(data_file.upper_bounds, stats, schema))):
            if found is not None:
                answer[key] = found
    return answer


def _term(predicate: Any, schema: Any) -> tuple[str, Any]:
    """The field name a predicate tests (its full name for a nested field) and the field's type (None: unbound)."""
    term = predicate.term
    if hasattr(term, "ref"):
        field = term.ref().field
        return schema.find_column_name(field.field_id) or field.name, field.field_type
    return term.name, None


def expression_json(expression: Any, schema: Any) -> Any:
    """A pyiceberg expression, bound to ``schema`` or not, as the spec's expression JSON (``true``/``false`` bare)."""
    from pyiceberg import expressions as ice

    if isinstance(expression, ice.AlwaysTrue):
        return True
    if isinstance(expression, ice.AlwaysFalse):
        return False
    if isinstance(expression, (ice.And, ice.Or)):
        return {"type": "and" if isinstance(expression, ice.And) else "or",
                "left": expression_json(expression.left, schema), "right": expression_json(expression.right, schema)}
    if isinstance(expression, ice.Not):
        return {"type": "not", "child": expression_json(expression.child, schema)}
    kind = next((name for cls in type(expression).__mro__
                 for name in [_PREDICATE_TYPES.get(cls.__name__.removeprefix("Bound"))] if name), None)
    if kind is None:
        raise ValueError(f"expression {expression!r} has no form in the Iceberg REST spec")
    name, field_type = _term(expression, schema)
    if isinstance(expression, (ice.SetPredicate, ice.BoundSetPredicate)):
        values = sorted((value_json(field_type, item.value) for item in expression.literals), key=repr)
        return {"type": kind, "term": name, "values": values}
    if isinstance(expression, (ice.LiteralPredicate, ice.BoundLiteralPredicate)):
        return {"type": kind, "term": name, "value": value_json(field_type, expression.literal.value)}
    return {"type": kind, "term": name}
