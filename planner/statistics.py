"""What a plan knows of the rows it covers, for engines' optimizers and for answering aggregates.

Row counts and column statistics come from wherever the table keeps them, most trusted first: Spark's
own ``ANALYZE`` results (``spark.sql.statistics.*`` table and partition parameters, which Spark itself
reads), Hive's basic statistics (``numRows``, trusted when ``COLUMN_STATS_ACCURATE`` says so or when
positive, as Spark trusts them) and Hive's column statistics, fetched in batches and only for columns
Hive marks accurate; Iceberg's manifests for Iceberg tables. Nothing is guessed: a table no engine has
analysed has no row count, as in Spark.

Beside the estimates, ``exact_rows`` holds the partitions whose row count is certain: Hive's count
marked accurate *and* matching the files listed (their number and bytes), which is what may answer
``count(*)`` without reading a file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hms_catalog.client.batches import in_batches
from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import HmsCatalogError
from hms_catalog.formats.partition_values import make_partition_name

__all__ = [
    "ColumnStatistics", "PartitionFacts", "PlanStatistics", "hive_statistics", "partition_key", "merge_columns",
]

_SPARK_PREFIX = "spark.sql.statistics."
_COLUMN_STATS_BATCH = 100  # partitions per get_partitions_statistics_req


def partition_key(values: Iterable[tuple[str, str | None]]) -> str:
    """A partition's key in ``partition_rows``: its raw values joined by NUL, NULL as U+0001 (the connector
    builds the same key from a split's partition values)."""
    return "\x00".join("\x01" if value is None else value for _, value in values)


@dataclass(frozen=True)
class ColumnStatistics:
    """One column's statistics; min and max as text in the form Spark casts from (``2024-01-31``, ``42``)."""

    distinct_count: int | None = None
    null_count: int | None = None
    min: str | None = None
    max: str | None = None
    avg_len: int | None = None
    max_len: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if value is not None}


@dataclass(frozen=True)
class PlanStatistics:
    row_count: int | None = None
    partition_rows: Mapping[str, int] = field(default_factory=dict)
    exact_rows: Mapping[str, int] = field(default_factory=dict)
    columns: Mapping[str, ColumnStatistics] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    table_bytes: int | None = None  # the table's own size statistic (Spark's, else Hive's totalSize), when positive

    def to_json(self) -> dict[str, Any]:
        return {
            "row_count": self.row_count, "partition_rows": dict(self.partition_rows), "exact_rows": dict(self.exact_rows),
            "columns": {name: stats.to_json() for name, stats in self.columns.items()}, "sources": list(self.sources),
            "table_bytes": self.table_bytes,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlanStatistics:
        return cls(
            row_count=data.get("row_count"), partition_rows=dict(data.get("partition_rows", {})),
            exact_rows=dict(data.get("exact_rows", {})),
            columns={name: ColumnStatistics(**stats) for name, stats in data.get("columns", {}).items()},
            sources=tuple(data.get("sources", ())), table_bytes=data.get("table_bytes"),
        )


@dataclass(frozen=True)
class PartitionFacts:
    """One partition (or an unpartitioned table) as planned: its values, parameters, and what was listed."""

    values: tuple[tuple[str, str | None], ...]
    parameters: Mapping[str, str]
    files: int
    bytes: int


def _basic_accurate(parameters: Mapping[str, str]) -> tuple[bool, set[str]]:
    """Whether Hive marks the basic statistics accurate, and the columns whose statistics it marks so."""
    text = parameters.get("COLUMN_STATS_ACCURATE")
    if not text:
        return False, set()
    try:
        state = json.loads(text)
    except ValueError:
        return text.strip().lower() == "true", set()  # Hive 1's plain 'true'
    if not isinstance(state, dict):
        return False, set()
    columns = state.get("COLUMN_STATS") or {}
    accurate = {name.lower() for name, flag in columns.items() if str(flag).lower() == "true"} if isinstance(columns, dict) else set()
    return str(state.get("BASIC_STATS", "")).lower() == "true", accurate


def _int(parameters: Mapping[str, str], key: str) -> int | None:
    try:
        return int(parameters[key])
    except (KeyError, ValueError):
        return None


def _rows(parameters: Mapping[str, str]) -> tuple[int | None, bool]:
    """A partition's row count and whether Hive marks it accurate (Spark's own count first)."""
    spark_rows = _int(parameters, _SPARK_PREFIX + "numRows")
    if spark_rows is not None and spark_rows >= 0:
        return spark_rows, False
    accurate, _ = _basic_accurate(parameters)
    rows = _int(parameters, "numRows")
    if rows is None or rows < 0 or (rows == 0 and not accurate):
        return None, False  # Hive writes 0 or -1 when it did not count
    return rows, accurate


def _exact(facts: PartitionFacts, rows: int | None, accurate: bool) -> bool:
    """Hive's accurate count is certain only while the files are those it counted."""
    if rows is None or not accurate:
        return False
    return _int(facts.parameters, "numFiles") == facts.files and _int(facts.parameters, "totalSize") == facts.bytes


def _spark_columns(parameters: Mapping[str, str]) -> dict[str, ColumnStatistics]:
    """Spark's ``ANALYZE ... FOR COLUMNS`` results, kept in the table's parameters."""
    prefix = _SPARK_PREFIX + "colStats."
    found: dict[str, dict[str, str]] = {}
    for key, value in parameters.items():
        if key.startswith(prefix):
            column, _, stat = key[len(prefix):].rpartition(".")
            if column:
                found.setdefault(column.lower(), {})[stat] = value

    def number(values: Mapping[str, str], key: str) -> int | None:
        try:
            return int(values[key])
        except (KeyError, ValueError):
            return None

    return {
        column: ColumnStatistics(
            distinct_count=number(values, "distinctCount"), null_count=number(values, "nullCount"),
            min=values.get("min"), max=values.get("max"), avg_len=number(values, "avgLen"), max_len=number(values, "maxLen"),
        )
        for column, values in found.items()
    }


def _hive_column(obj: ttypes.ColumnStatisticsObj) -> ColumnStatistics:
    """Hive's statistics of one column, in the form the plan gives them."""
    data = obj.statsData
    if data is None:
        return ColumnStatistics()
    if data.longStats is not None:
        s = data.longStats
        return ColumnStatistics(s.numDVs, s.numNulls, _text(s.lowValue), _text(s.highValue))
    if data.dateStats is not None:
        import datetime

        s = data.dateStats

        def day(value: Any) -> str | None:
            return None if value is None else (datetime.date(1970, 1, 1) + datetime.timedelta(days=value.daysSinceEpoch)).isoformat()

        return ColumnStatistics(s.numDVs, s.numNulls, day(s.lowValue), day(s.highValue))
    if data.doubleStats is not None:
        s = data.doubleStats
        return ColumnStatistics(s.numDVs, s.numNulls, _text(s.lowValue), _text(s.highValue))
    if data.stringStats is not None:
        s = data.stringStats
        return ColumnStatistics(s.numDVs, s.numNulls, None, None, _round(s.avgColLen), s.maxColLen)
    if data.binaryStats is not None:
        s = data.binaryStats
        return ColumnStatistics(None, s.numNulls, None, None, _round(s.avgColLen), s.maxColLen)
    if data.booleanStats is not None:
        s = data.booleanStats
        return ColumnStatistics(None if s.numTrues is None else int(bool(s.numTrues)) + int(bool(s.numFalses)), s.numNulls)
    if data.decimalStats is not None:
        s = data.decimalStats
        return ColumnStatistics(s.numDVs, s.numNulls, _decimal(s.lowValue), _decimal(s.highValue))
    return ColumnStatistics()


def _text(value: Any) -> str | None:
    return None if value is None else repr(value) if isinstance(value, float) else str(value)


def _round(value: float | None) -> int | None:
    return None if value is None else int(round(value))


def _decimal(value: Any) -> str | None:
    if value is None or value.unscaled is None:
        return None
    from decimal import Decimal

    return str(Decimal(int.from_bytes(value.unscaled, "big", signed=True)).scaleb(-int(value.scale or 0)))


def merge_columns(parts: Sequence[ColumnStatistics]) -> ColumnStatistics:
    """Statistics of several partitions of one column: nulls add up, the extremes are the extremes, the
    distinct count is at least the largest one (the partitions' sets may overlap)."""

    def total(values: list[int | None]) -> int | None:
        return None if not values or any(v is None for v in values) else sum(v for v in values if v is not None)

    def largest(values: list[int | None]) -> int | None:
        known = [v for v in values if v is not None]
        return max(known) if known and len(known) == len(values) else None

    def extreme(values: list[str | None], pick: Any) -> str | None:
        if not values or any(v is None for v in values):
            return None
        try:
            return str(pick(values, key=lambda v: (float(v), v)))  # numbers as numbers
        except ValueError:
            return str(pick(values))  # ISO dates order as text

    return ColumnStatistics(
        distinct_count=largest([p.distinct_count for p in parts]), null_count=total([p.null_count for p in parts]),
        min=extreme([p.min for p in parts], min), max=extreme([p.max for p in parts], max),
        avg_len=largest([p.avg_len for p in parts]), max_len=largest([p.max_len for p in parts]),
    )


def _hive_columns(client: MetastoreCalls, table: ttypes.Table, partitions: Sequence[PartitionFacts],
                  columns: set[str], parallelism: int) -> dict[str, ColumnStatistics]:
    database, name = table.dbName, table.tableName
    keys = [k.name.lower() for k in table.partitionKeys or []]
    wanted = sorted(columns)
    if not keys:
        return {obj.colName.lower(): _hive_column(obj) for obj in client.get_table_column_statistics(database, name, wanted)}
    names = [make_partition_name(keys, [v for _, v in p.values]) for p in partitions]
    per_column: dict[str, list[ColumnStatistics]] = {}
    answers = in_batches(lambda batch: client.get_partitions_column_statistics(database, name, batch, wanted),
                         names, _COLUMN_STATS_BATCH, parallelism)
    for batch, found in answers:
        for partition_name in batch:
            for obj in found.get(partition_name, ()):
                per_column.setdefault(obj.colName.lower(), []).append(_hive_column(obj))
    # a column some partition lacks statistics for is unknown as a whole
    return {column: merge_columns(parts) for column, parts in per_column.items() if len(parts) == len(partitions)}


def hive_statistics(client: MetastoreCalls, table: ttypes.Table, partitions: Sequence[PartitionFacts], *,
                    all_partitions: bool, parallelism: int = 1) -> PlanStatistics:
    """Statistics of the partitions (or the one unpartitioned table) a Hive plan reads.

    ``all_partitions`` says that nothing was pruned, so the table's own figures describe the plan too.
    """
    sources: list[str] = []
    partition_rows: dict[str, int] = {}
    exact_rows: dict[str, int] = {}
    marked: set[str] | None = None
    for facts in partitions:
        rows, accurate = _rows(facts.parameters)
        key = partition_key(facts.values)
        if rows is not None:
            partition_rows[key] = rows
        if _exact(facts, rows, accurate) and rows is not None:
            exact_rows[key] = rows
        _, flagged = _basic_accurate(facts.parameters)
        marked = flagged if marked is None else marked & flagged
    row_count: int | None = None
    if partitions and len(partition_rows) == len(partitions):
        row_count = sum(partition_rows.values())
        sources.append("partition statistics" if table.partitionKeys else "table statistics")
    elif all_partitions and table.partitionKeys:
        table_rows, _ = _rows(table.parameters or {})
        if table_rows is not None:
            row_count = table_rows
            sources.append("table statistics")
    columns = _spark_columns(table.parameters or {})
    if columns:
        sources.append("Spark column statistics")
    hive_marked = (marked or set()) - set(columns)
    if hive_marked and partitions:
        try:
            columns.update(_hive_columns(client, table, partitions, hive_marked, parallelism))
            sources.append("Hive column statistics")
        except HmsCatalogError:
            sources.append("Hive column statistics unavailable")
    table_parameters = table.parameters or {}
    table_bytes = _int(table_parameters, _SPARK_PREFIX + "totalSize") or _int(table_parameters, "totalSize")
    return PlanStatistics(row_count, partition_rows, exact_rows, columns, tuple(sources),
                          table_bytes if table_bytes is not None and table_bytes > 0 else None)
