"""``count(*)``, ``count(col)``, ``min(col)`` and ``max(col)`` answered from metadata, per partition, or not at all.

An answer is given only where the metadata holds the exact figure: a Parquet footer (row counts, and per
row group the null count and the extremes of each column chunk), an ORC footer (row counts only: pyarrow
exposes no ORC column statistics), an Iceberg manifest entry of a file no delete file touches, or Hive's
row count marked accurate and matching the files listed. Anything else (a text file, a missing
statistic, a delete file, a nested column, a type whose stored extremes may be truncated or unordered)
makes the whole answer "no", with the reason, and the engine scans as it would have. A wrong answer is
never cheaper than a scan.

Extremes are answered only for booleans, integers and dates, as Spark's own aggregate pushdown does:
Parquet may truncate binary extremes (strings, decimals stored as binary), INT96 timestamps have no order,
and a NaN is not among a float column's stored extremes.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from hms_catalog.errors import ConfigurationError
from hms_catalog.formats.partition_values import typed_value
from hms_catalog.formats.schema import TableSchema
from hms_catalog.types import DataType
from hms_catalog.types.tree import BigIntType, BooleanType, DateType, IntType, SmallIntType, TinyIntType

__all__ = [
    "AggregateAnswer", "AggregateFunction", "AggregateRequest", "ColumnFacts", "FileFacts", "PartitionAnswer",
    "answer", "refused", "value_text", "FUNCTIONS",
]

FUNCTIONS = ("count_star", "count", "min", "max")
_EXTREME_TYPES = (BooleanType, TinyIntType, SmallIntType, IntType, BigIntType, DateType)


class _Refused(Exception):
    """Metadata cannot answer exactly; the message says why."""


@dataclass(frozen=True)
class AggregateFunction:
    function: str
    column: str | None = None

    def __post_init__(self) -> None:
        if self.function not in FUNCTIONS:
            raise ConfigurationError(f"aggregate function must be one of {', '.join(FUNCTIONS)}, got {self.function!r}")
        if (self.function == "count_star") != (self.column is None):
            raise ConfigurationError(f"aggregate {self.function} {'takes no' if self.function == 'count_star' else 'needs a'} column")


@dataclass(frozen=True)
class AggregateRequest:
    functions: tuple[AggregateFunction, ...]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AggregateRequest:
        functions = data.get("functions")
        if not isinstance(functions, list) or not functions:
            raise ConfigurationError("an aggregate request needs a non-empty list of 'functions'")
        return cls(tuple(AggregateFunction(str(item.get("function")), item.get("column")) for item in functions))

    @property
    def count_only(self) -> bool:
        return all(f.function == "count_star" for f in self.functions)


class ColumnFacts(NamedTuple):
    """What a file's metadata says of one column: its non-null values (None: unknown), and its extremes
    (None when the column is all NULL; ``extremes_known`` False when some non-null part has none stored)."""

    values: int | None
    min: Any
    max: Any
    extremes_known: bool


class FileFacts(NamedTuple):
    """What a data file's own metadata says: its rows; per column (lower-case name) the facts it keeps; and
    which columns the file holds at all (a column it does not hold is NULL in each of its rows)."""

    rows: int
    columns: Mapping[str, ColumnFacts]
    present: frozenset[str]


@dataclass(frozen=True)
class PartitionAnswer:
    """One partition's partial results, and its row count: a partition of no rows makes no group of a GROUP
    BY (Spark's own scan finds no row to group), though it still counts 0 for an aggregate of no groups."""

    values: tuple[tuple[str, str | None], ...]
    results: tuple[int | str | None, ...]
    rows: int = -1  # -1: not known

    def to_json(self) -> dict[str, Any]:
        return {"partition_values": [list(pair) for pair in self.values], "values": list(self.results), "rows": self.rows}


@dataclass(frozen=True)
class AggregateAnswer:
    answered: bool
    reason: str | None = None
    source: str = ""
    partitions: tuple[PartitionAnswer, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {"answered": self.answered, "reason": self.reason, "source": self.source,
                "partitions": [p.to_json() for p in self.partitions]}


def refused(reason: str) -> AggregateAnswer:
    return AggregateAnswer(False, reason)


def value_text(value: Any) -> str | None:
    """A value in the text Spark casts back to its type: ISO dates, ``true``/``false``, numbers (floats exactly)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.date):
        return value.isoformat()
    return repr(value) if isinstance(value, float) else str(value)


def _check(request: AggregateRequest, schema: TableSchema) -> None:
    for function in request.functions:
        if function.column is None:
            continue
        try:
            column = schema.column(function.column)
        except Exception as error:  # noqa: BLE001 - the schema's own not-found error names the column
            raise _Refused(str(error)) from None
        if function.function in ("min", "max") and not isinstance(column.type, _EXTREME_TYPES):
            raise _Refused(f"{function.function}({column.name}) of type {column.source_type}: its stored extremes are not exact")


def answer(request: AggregateRequest, schema: TableSchema,
           partitions: Iterable[tuple[tuple[tuple[str, str | None], ...], Callable[[], Sequence[FileFacts]] | int]],
           source: str) -> AggregateAnswer:
    """The per-partition answers. Each partition gives its exact row count (an int, for ``count(*)`` alone)
    or a function returning the facts of its files; a ``_Refused`` from one refuses the whole answer."""
    try:
        _check(request, schema)
        answers = [_partition(request, schema, values, facts) for values, facts in partitions]
    except _Refused as why:
        return refused(str(why))
    return AggregateAnswer(True, None, source, tuple(answers))


def _partition(request: AggregateRequest, schema: TableSchema, values: tuple[tuple[str, str | None], ...],
               facts: Callable[[], Sequence[FileFacts]] | int) -> PartitionAnswer:
    partition_values = {name.lower(): value for name, value in values}
    if isinstance(facts, int):
        if not request.count_only:
            raise _Refused("only count(*) is known for a partition without file statistics")
        return PartitionAnswer(values, tuple(facts for _ in request.functions), facts)
    files = facts()
    rows = sum(f.rows for f in files)
    results: list[int | str | None] = []
    for function in request.functions:
        if function.function == "count_star":
            results.append(rows)
            continue
        name = (function.column or "").lower()
        column = schema.column(name)
        if column.partition:
            results.append(_partition_column(function.function, rows, partition_values.get(name), column.type))
        else:
            results.append(_data_column(function.function, name, column.type, files))
    return PartitionAnswer(values, tuple(results), rows)


def _partition_column(function: str, rows: int, raw: str | None, kind: DataType | None) -> int | str | None:
    """A partition column is its partition's value in every row of it."""
    if function == "count":
        return rows if raw is not None else 0
    if raw is None or rows == 0:
        return None
    return value_text(typed_value(raw, kind))


def _data_column(function: str, name: str, kind: DataType | None, files: Sequence[FileFacts]) -> int | str | None:
    count = 0
    best: Any = None
    for file in files:
        if name not in file.present:
            continue  # the file has no such column: NULL in each of its rows
        facts = file.columns.get(name)
        if facts is None or facts.values is None:
            raise _Refused(f"a data file keeps no statistics for column {name}")
        count += facts.values
        if function in ("min", "max") and facts.values:
            if not facts.extremes_known:
                raise _Refused(f"a data file keeps no {function} for column {name}")
            candidate = facts.min if function == "min" else facts.max
            if not _same_kind(candidate, kind):
                raise _Refused(f"a data file stores column {name} as another type ({type(candidate).__name__})")
            if best is None or (candidate < best if function == "min" else candidate > best):
                best = candidate
    return count if function == "count" else value_text(best)


def _same_kind(value: Any, kind: DataType | None) -> bool:
    """Whether a stored extreme is of the column's type (a file may disagree with its table)."""
    if isinstance(kind, BooleanType):
        return isinstance(value, bool)
    if isinstance(kind, DateType):
        return isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)
    return isinstance(value, int) and not isinstance(value, bool)
