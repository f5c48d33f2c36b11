"""A table's schema in the canonical type model: data columns, then partition columns.

A column whose type cannot be parsed or has no Spark/Arrow counterpart (Hive's uniontype) is kept
with the reason, so the table still describes and the problem is reported per column, not per table;
only rendering or reading that column fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hms_catalog.errors import SchemaError, UnsupportedTypeError
from hms_catalog.types import DataType, StructField, to_arrow_type, to_spark_simple_string, to_spark_type

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import types as spark_types

__all__ = ["Column", "TableSchema"]


@dataclass(frozen=True)
class Column:
    """One column: its canonical type (None when unparseable), the type as the source wrote it, and flags."""

    name: str
    type: DataType | None
    source_type: str
    nullable: bool = True
    comment: str = ""
    partition: bool = False
    problem: str | None = None
    field_id: int | None = None
    meta: bool = False

    @property
    def readable(self) -> bool:
        return self.problem is None and self.type is not None

    def spark_type_string(self) -> str:
        """Spark SQL's simple type syntax, or the source's text for a column Spark cannot represent."""
        if self.type is None:
            return self.source_type
        try:
            return to_spark_simple_string(self.type)
        except UnsupportedTypeError:
            return self.source_type

    def as_field(self) -> StructField:
        if self.type is None:
            raise SchemaError(self.problem or "type unknown", column=self.name)
        return StructField(self.name, self.type, self.nullable, self.comment or None, self.field_id)


def _check_renderable(column: Column) -> Column:
    """Record, per column, that Spark cannot represent its type (e.g. uniontype). Asked of the type's Spark
    string, which refuses exactly what the Spark type does, without importing pyspark into every process that reads
    a schema (a CLI's plan, the service)."""
    if column.type is None or column.problem:
        return column
    try:
        to_spark_simple_string(column.type)
    except UnsupportedTypeError as error:
        return Column(**{**column.__dict__, "problem": error.reason})
    return column


@dataclass(frozen=True)
class TableSchema:
    """Columns in display order (data columns first, partition columns last) and where they came from."""

    columns: tuple[Column, ...]
    source: str
    details: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ordered = [c for c in self.columns if not c.partition] + [c for c in self.columns if c.partition]
        object.__setattr__(self, "columns", tuple(_check_renderable(c) for c in ordered))
        object.__setattr__(self, "details", dict(self.details))  # a plain dict: plans pickle

    @property
    def data_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if not c.partition)

    @property
    def partition_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.partition)

    def column(self, name: str) -> Column:
        lowered = name.lower()
        for column in self.columns:
            if column.name.lower() == lowered:
                return column
        raise SchemaError(f"no column '{name}'", column=name)

    def spark_schema(self, names: list[str] | None = None) -> spark_types.StructType:
        """The Spark schema of the named columns (all by default); an unreadable one raises, naming it."""
        from pyspark.sql import types as spark_types

        fields = []
        for column in self._select(names):
            if not column.readable:
                raise UnsupportedTypeError(column.problem or "unknown type", column=column.name)
            fields.append(spark_types.StructField(column.name, to_spark_type(column.type), column.nullable))  # type: ignore[arg-type]
        return spark_types.StructType(fields)

    def arrow_schema(self, names: list[str] | None = None) -> pa.Schema:
        import pyarrow as pa

        fields = []
        for column in self._select(names):
            if not column.readable:
                raise UnsupportedTypeError(column.problem or "unknown type", column=column.name)
            metadata = {b"comment": column.comment.encode()} if column.comment else None
            fields.append(pa.field(column.name, to_arrow_type(column.type), column.nullable, metadata))  # type: ignore[arg-type]
        return pa.schema(fields)

    def _select(self, names: list[str] | None) -> list[Column]:
        return list(self.columns) if names is None else [self.column(name) for name in names]
