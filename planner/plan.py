"""Split plans: plain, frozen, picklable values that go to JSON and back without loss.

A split says which bytes of which file one reader task reads, where those bytes live (hosts), and the
partition values its rows get. The plan adds the table's identity, format and schema, and a summary of
what planning did and what it cost.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from hms_catalog.formats.detect import TextFormat
from hms_catalog.formats.schema import Column, TableSchema
from hms_catalog.types.json_codec import type_from_json, type_to_json
from planner.statistics import PlanStatistics

if TYPE_CHECKING:
    from planner.aggregates import AggregateAnswer

__all__ = ["Split", "DeleteFile", "PartitionField", "PlanSummary", "SplitPlan", "PLAN_FORMAT_VERSION"]

PLAN_FORMAT_VERSION = 1


class DeleteFile(NamedTuple):
    """An Iceberg delete file to apply to a split's rows (content: position_deletes or equality_deletes)."""

    path: str
    content: str
    file_format: str
    length: int
    equality_ids: tuple[int, ...] = ()


class PartitionField(NamedTuple):
    """An Iceberg partition field: its name in the splits' partition values, its source column and its
    transform as Iceberg spells it (``identity``, ``day``, ``bucket[16]``, ``truncate[4]``, ...)."""

    name: str
    source: str
    transform: str


class Split(NamedTuple):
    """One unit of reading. A NamedTuple: immutable, picklable and cheap to make by the million.

    A split with ``log_files`` (a Hudi merge-on-read file slice) also names its ``table_root`` and the
    ``snapshot`` (commit instant) the plan was made at: merging needs the table's configs and timeline, and
    every split of a plan must read the same commit, as Hudi's own realtime splits carry their base path and
    latest commit.
    """

    path: str
    start: int
    length: int
    file_length: int
    modification_time: int | None
    hosts: tuple[str, ...]
    partition_values: tuple[tuple[str, str | None], ...]
    file_format: str
    delete_files: tuple[DeleteFile, ...] = ()
    log_files: tuple[str, ...] = ()
    table_root: str | None = None
    snapshot: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = self._asdict()
        data["hosts"] = list(self.hosts)
        data["partition_values"] = [list(pair) for pair in self.partition_values]
        data["delete_files"] = [{**d._asdict(), "equality_ids": list(d.equality_ids)} for d in self.delete_files]
        data["log_files"] = list(self.log_files)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Split:
        return cls(
            path=str(data["path"]), start=int(data["start"]), length=int(data["length"]),
            file_length=int(data["file_length"]),
            modification_time=None if data.get("modification_time") is None else int(data["modification_time"]),
            hosts=tuple(data.get("hosts", ())),
            partition_values=tuple((str(k), None if v is None else str(v)) for k, v in data.get("partition_values", ())),
            file_format=str(data["file_format"]),
            delete_files=tuple(
                DeleteFile(d["path"], d["content"], d["file_format"], int(d["length"]), tuple(d.get("equality_ids", ())))
                for d in data.get("delete_files", ())
            ),
            log_files=tuple(data.get("log_files", ())),
            table_root=data.get("table_root"),
            snapshot=data.get("snapshot"),
        )


@dataclass(frozen=True)
class PlanSummary:
    """What planning did: counts, where the bytes are, and where the time went."""

    files: int = 0
    bytes: int = 0
    splits: int = 0
    partitions_total: int | None = None
    partitions_scanned: int = 0
    partitions_pruned: int = 0
    absent_locations: int = 0
    hosts: Mapping[str, int] = field(default_factory=dict)
    metastore_calls: Mapping[str, int] = field(default_factory=dict)
    hms_seconds: float = 0.0
    listing_seconds: float = 0.0
    splitting_seconds: float = 0.0
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["hosts"] = dict(self.hosts)
        data["metastore_calls"] = dict(self.metastore_calls)
        data["notes"] = list(self.notes)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlanSummary:
        values = dict(data)
        values["hosts"] = dict(values.get("hosts", {}))
        values["metastore_calls"] = dict(values.get("metastore_calls", {}))
        values["notes"] = tuple(values.get("notes", ()))
        return cls(**values)


def _column_to_json(column: Column) -> dict[str, Any]:
    return {
        "name": column.name, "type": None if column.type is None else type_to_json(column.type),
        "source_type": column.source_type, "nullable": column.nullable, "comment": column.comment,
        "partition": column.partition, "problem": column.problem, "field_id": column.field_id, "meta": column.meta,
    }


def _column_from_json(data: Mapping[str, Any]) -> Column:
    kind = data.get("type")
    return Column(
        name=data["name"], type=None if kind is None else type_from_json(kind), source_type=data["source_type"],
        nullable=data["nullable"], comment=data["comment"], partition=data["partition"], problem=data["problem"],
        field_id=data["field_id"], meta=data["meta"],
    )


@dataclass(frozen=True)
class SplitPlan:
    """Everything a reader needs: which table, its format and schema, the splits, and the summary."""

    catalog: str
    database: str
    table: str
    table_format: str
    file_format: str
    schema: TableSchema
    splits: tuple[Split, ...]
    summary: PlanSummary
    predicate: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    text: TextFormat | None = None  # delimiters, escapes, null format of text tables: readers need them
    statistics: PlanStatistics | None = None  # when asked for: row counts and column statistics
    aggregate: AggregateAnswer | None = None  # when asked for: aggregates answered from metadata, or why not
    partition_fields: tuple[PartitionField, ...] = ()  # Iceberg's partition fields, for runtime filters

    @property
    def full_name(self) -> str:
        return f"{self.catalog}.{self.database}.{self.table}"

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": PLAN_FORMAT_VERSION,
            "catalog": self.catalog, "database": self.database, "table": self.table,
            "table_format": self.table_format, "file_format": self.file_format,
            "schema": {"columns": [_column_to_json(c) for c in self.schema.columns], "source": self.schema.source,
                       "details": dict(self.schema.details)},
            "splits": [split.to_json() for split in self.splits],
            "summary": self.summary.to_json(),
            "predicate": self.predicate,
            "options": dict(self.options),
            "text": None if self.text is None else asdict(self.text),
            "statistics": None if self.statistics is None else self.statistics.to_json(),
            "aggregate": None if self.aggregate is None else self.aggregate.to_json(),
            "partition_fields": [field._asdict() for field in self.partition_fields],
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SplitPlan:
        version = data.get("format_version")
        if version != PLAN_FORMAT_VERSION:
            raise ValueError(f"split plan format version {version!r} is not {PLAN_FORMAT_VERSION}")
        schema = data["schema"]
        return cls(
            catalog=data["catalog"], database=data["database"], table=data["table"],
            table_format=data["table_format"], file_format=data["file_format"],
            schema=TableSchema(tuple(_column_from_json(c) for c in schema["columns"]), source=schema["source"],
                               details=schema.get("details", {})),
            splits=tuple(Split.from_json(s) for s in data["splits"]),
            summary=PlanSummary.from_json(data["summary"]),
            predicate=data.get("predicate"),
            options=dict(data.get("options", {})),
            text=None if data.get("text") is None else TextFormat(**data["text"]),
            statistics=None if data.get("statistics") is None else PlanStatistics.from_json(data["statistics"]),
            partition_fields=tuple(PartitionField(**item) for item in data.get("partition_fields", ())),
        )

    @classmethod
    def loads(cls, text: str) -> SplitPlan:
        return cls.from_json(json.loads(text))
