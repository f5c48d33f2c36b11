"""The ``hms`` PySpark data source: a split plan becomes Spark partitions, one per split.

    spark.dataSource.register(HmsDataSource)
    spark.read.format("hms").option("home", "/path/to/home").load("cat.db.table")

Options: ``home`` (catalog definitions; default as the CLI's --home), ``columns`` (comma-separated;
only these are read and declared; empty for none, e.g. for counts), ``where`` (a predicate that prunes
partitions), ``plan`` (a split plan's JSON: read exactly that plan). With
``spark.sql.python.filterPushdown.enabled=true`` the filters Spark pushes prune partitions too; Spark
still applies every filter to the rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from hms_catalog.formats.detect import TextFormat
from hms_catalog.formats.schema import Column, TableSchema
from planner.plan import Split, SplitPlan
from planner.spark.filters import spark_filters_to_expression

__all__ = ["HmsDataSource", "HmsPushdownDataSource", "SplitPartition", "register"]


@dataclass
class SplitPartition(InputPartition):
    """One Spark input partition: one split of the plan."""

    index: int
    split: Split

    def __init__(self, index: int, split: Split) -> None:
        super().__init__(index)
        self.index = index
        self.split = split


def _as_read(kind: Any) -> Any:
    """The type Spark reads: CHAR(n)/VARCHAR(n) are strings (as in Spark's own reads of Hive tables)."""
    from pyspark.sql import types as spark_types

    if isinstance(kind, (spark_types.CharType, spark_types.VarcharType)):
        return spark_types.StringType()
    if isinstance(kind, spark_types.StructType):
        return spark_types.StructType([spark_types.StructField(f.name, _as_read(f.dataType), f.nullable, f.metadata) for f in kind.fields])
    if isinstance(kind, spark_types.ArrayType):
        return spark_types.ArrayType(_as_read(kind.elementType), kind.containsNull)
    if isinstance(kind, spark_types.MapType):
        return spark_types.MapType(_as_read(kind.keyType), _as_read(kind.valueType), kind.valueContainsNull)
    return kind


def _selected(schema: TableSchema, columns: str | None) -> list[Column]:
    if columns is None:
        return [c for c in schema.columns if c.readable]
    names = [name.strip() for name in columns.split(",") if name.strip()]
    return [schema.column(name) for name in names]


class HmsDataSource(DataSource):
    """Reads tables of hms-catalog catalogs (or an existing split plan) into Spark."""

    @classmethod
    def name(cls) -> str:
        return "hms"

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self._table_schema: TableSchema | None = None
        self._plan: SplitPlan | None = None
        self._text: TextFormat | None = None

    def _load_schema(self) -> TableSchema:
        if self._table_schema is None:
            if "plan" in self.options:
                self._plan = SplitPlan.loads(self.options["plan"])
                self._table_schema, self._text = self._plan.schema, self._plan.text
            else:
                from planner.spark.tables import table_handle

                _, table = table_handle(self.options)
                self._table_schema, self._text = table.schema, table.detection.text
        return self._table_schema

    def schema(self) -> StructType:
        schema = self._load_schema()
        return _as_read(schema.spark_schema([c.name for c in _selected(schema, self.options.get("columns"))]))

    _reader_class: type[HmsReader]

    def reader(self, schema: StructType) -> DataSourceReader:
        table_schema = self._load_schema()
        return self._reader_class(dict(self.options), table_schema, _selected(table_schema, self.options.get("columns")),
                                  self._plan, self._text)


class HmsReader(DataSourceReader):
    def __init__(self, options: dict[str, str], table_schema: TableSchema, columns: Sequence[Column],
                 plan: SplitPlan | None, text: TextFormat | None) -> None:
        # Everything read() needs is set here: the reader is sent to the workers before partitions() runs.
        # A plan given as an option is parsed already; its JSON is not carried to every task again.
        self.options = {key: value for key, value in options.items() if key != "plan"}
        self.columns = list(columns)
        self.table_schema = table_schema
        self._plan = plan
        self._pushed: list[Any] = []
        self.text = text

    def partitions(self) -> Sequence[InputPartition]:
        plan = self._plan
        if plan is None:
            from planner.core import plan_table
            from planner.spark.tables import table_handle

            catalog, table = table_handle(self.options)
            where = self.options.get("where")
            pushed = spark_filters_to_expression(self._pushed, {c.name.lower() for c in self.table_schema.partition_columns})
            from hms_catalog.sql import parse_expression
            from hms_catalog.sql.expressions import And

            expression = parse_expression(where) if where else None
            if pushed is not None:
                expression = pushed if expression is None else And(expression, pushed)
            plan = plan_table(catalog, table, expression)
        self._plan = None  # the reader travels to every task: splits travel in their partitions only
        return [SplitPartition(index, split) for index, split in enumerate(plan.splits)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        from planner.readers import read_split

        if not isinstance(partition, SplitPartition):
            return  # an empty plan: Spark still asks for one (placeholder) partition

        target = self.table_schema.arrow_schema([c.name for c in self.columns])
        yield from read_split(partition.split, self.columns, target, text=self.text,
                              table_columns=self.table_schema.data_columns)


class HmsPushdownReader(HmsReader):
    """The reader used when the session lets Python sources take filters: pushed filters prune partitions.

    PySpark refuses a reader that implements pushFilters unless
    ``spark.sql.python.filterPushdown.enabled`` is true, hence two readers.
    """

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:  # noqa: N802 - Spark's name
        """Keep the filters for partition pruning; hand them all back, so Spark applies them to rows."""
        self._pushed = list(filters)
        yield from filters


HmsDataSource._reader_class = HmsReader


class HmsPushdownDataSource(HmsDataSource):
    """``hms`` for sessions with ``spark.sql.python.filterPushdown.enabled=true``."""

    _reader_class = HmsPushdownReader


def register(spark: Any) -> None:
    """Register the ``hms`` format with ``spark``: the variant that prunes by pushed filters when the
    session enables them, the plain one (still pruned by the ``where`` option) otherwise."""
    enabled = str(spark.conf.get("spark.sql.python.filterPushdown.enabled", "false")).lower() == "true"
    spark.dataSource.register(HmsPushdownDataSource if enabled else HmsDataSource)
