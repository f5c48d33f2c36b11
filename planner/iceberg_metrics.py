"""What Iceberg's manifests say of the data files a plan reads: partition fields, row counts, column metrics.

Every data file's manifest entry carries its record count and, per column (by field id), value and null
counts and lower and upper bounds, as the writer's metrics mode kept them. Row counts are exact for a
file no delete file touches. Bounds are exact for numbers, dates and booleans; Iceberg truncates those of
strings and binary (16 bytes by default), which therefore answer no ``min``/``max``.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from planner.aggregates import ColumnFacts, FileFacts, value_text
from planner.plan import PartitionField
from planner.statistics import ColumnStatistics, PlanStatistics, partition_key

__all__ = ["partition_fields", "file_facts", "iceberg_statistics"]

_EPOCH = datetime.date(1970, 1, 1)
_EXACT_BOUNDS = ("boolean", "int", "long", "date", "float", "double", "decimal")


def partition_fields(specs: Mapping[int, Any], schema: Any) -> tuple[PartitionField, ...]:
    """The partition fields of every spec the table has had, by name (a field keeps its name across specs)."""
    found: dict[str, PartitionField] = {}
    for spec in specs.values():
        for field in spec.fields:
            try:
                source = schema.find_column_name(field.source_id)
            except ValueError:
                continue  # its source column was dropped
            if source is not None and "." not in source:
                found.setdefault(field.name, PartitionField(field.name, source, str(field.transform)))
    return tuple(found.values())


def _top_level(schema: Any) -> list[tuple[str, int, Any]]:
    return [(field.name.lower(), field.field_id, field.field_type) for field in schema.fields if field.field_type.is_primitive]


def _bound(kind: Any, raw: bytes | None) -> Any:
    """A bound as a Python value of the column's kind: dates as dates, numbers as numbers."""
    from pyiceberg.conversions import from_bytes

    if raw is None:
        return None
    value = from_bytes(kind, raw)
    if str(kind) == "date":
        return _EPOCH + datetime.timedelta(days=int(value))
    return value


def file_facts(data_file: Any, schema: Any) -> FileFacts:
    """A data file's facts from its manifest entry. Every top-level column counts as present: a column the
    file lacks has no counts, which refuses an answer rather than calling it NULL."""
    columns: dict[str, ColumnFacts] = {}
    values, nulls = data_file.value_counts or {}, data_file.null_value_counts or {}
    lower, upper = data_file.lower_bounds or {}, data_file.upper_bounds or {}
    nans = data_file.nan_value_counts or {}
    for name, field_id, kind in _top_level(schema):
        if field_id not in values or field_id not in nulls:
            continue
        present = int(values[field_id]) - int(nulls[field_id])
        exact = str(kind).split("(")[0] in _EXACT_BOUNDS and not nans.get(field_id)
        known = exact and field_id in lower and field_id in upper
        columns[name] = ColumnFacts(present, _bound(kind, lower.get(field_id)) if known else None,
                                    _bound(kind, upper.get(field_id)) if known else None, known)
    return FileFacts(int(data_file.record_count), columns, frozenset(name for name, _, _ in _top_level(schema)))


def iceberg_statistics(files: Sequence[tuple[tuple[tuple[str, str | None], ...], FileFacts, bool]]) -> PlanStatistics:
    """Statistics of the data files a plan reads, each with its partition values, its facts, and whether a
    delete file touches it (then its count is only an upper bound)."""
    partition_rows: dict[str, int] = {}
    touched: set[str] = set()
    for values, facts, deleted in files:
        key = partition_key(values)
        partition_rows[key] = partition_rows.get(key, 0) + facts.rows
        if deleted:
            touched.add(key)
    exact = {key: rows for key, rows in partition_rows.items() if key not in touched}
    columns: dict[str, ColumnStatistics] = {}
    for name in _columns(facts for _, facts, _ in files):
        per_file = [facts.columns.get(name) for _, facts, _ in files]
        if any(facts is None for facts in per_file):
            continue
        known = [f for f in per_file if f is not None]
        nulls = sum(facts.rows - (f.values or 0) for (_, facts, _), f in zip(files, known))
        lows = [f.min for f in known if f.extremes_known and f.min is not None]
        highs = [f.max for f in known if f.extremes_known and f.max is not None]
        complete = all(f.extremes_known or not f.values for f in known)
        low, high = (min(lows), max(highs)) if complete and lows and highs else (None, None)
        columns[name] = ColumnStatistics(null_count=nulls, min=value_text(low), max=value_text(high))
    return PlanStatistics(sum(partition_rows.values()), partition_rows, exact, columns, ("Iceberg manifests",))


def _columns(facts: Iterable[FileFacts]) -> list[str]:
    names: dict[str, None] = {}
    for item in facts:
        for name in item.columns:
            names.setdefault(name, None)
    return list(names)
