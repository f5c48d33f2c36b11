"""The ``hms`` PySpark data source: a split plan becomes Spark partitions of whole splits, packed as Spark
packs its own files (:mod:`planner.packing`).

    spark.dataSource.register(HmsDataSource)
    spark.read.format("hms").option("home", "/path/to/home").load("cat.db.table")

Options: ``home`` (catalog definitions; default as the CLI's --home), ``columns`` (comma-separated;
only these are read and declared; empty for none, e.g. for counts), ``where`` (a predicate that prunes
partitions), ``plan`` (a split plan's JSON: read exactly that plan). With
``spark.sql.python.filterPushdown.enabled=true`` the filters Spark pushes prune partitions too; Spark
still applies every filter to the rows.

Files are read with the catalog's storage settings (endpoints, credentials): its resolver travels to the
Python workers inside the reader, pickled as its settings alone, and is never written into an option, a
plan or a split. A ``plan`` is read with the settings of its catalog under ``home`` when that is given.

How many splits one task reads follows Spark's settings for its own files, given as the options
``maxPartitionBytes``, ``openCostInBytes`` and ``minPartitionNum`` (:func:`packing_options` reads them
from a session; the source itself runs where no session is at hand). Without them, Spark's defaults and
this machine's CPU count are used.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from hms_catalog.formats.detect import TextFormat
from hms_catalog.formats.schema import Column, TableSchema
from hms_catalog.storage.resolver import StorageResolver
from planner.packing import PackingSettings, pack_splits
from planner.plan import Split, SplitPlan
from planner.spark.filters import spark_filters_to_expression

__all__ = ["HmsDataSource", "HmsPushdownDataSource", "SplitPartition", "packing_options", "register"]

_PACKING_OPTIONS = {"maxpartitionbytes": "max_partition_bytes", "opencostinbytes": "open_cost", "minpartitionnum": "min_partitions"}


@dataclass
class SplitPartition(InputPartition):
    """One Spark input partition: splits of the plan, read one after the other."""

    index: int
    splits: tuple[Split, ...]

    def __init__(self, index: int, splits: Sequence[Split]) -> None:
        super().__init__(index)
        self.index = index
        self.splits = tuple(splits)


def _packing(options: Mapping[str, str]) -> PackingSettings:
    values: dict[str, int] = {"min_partitions": os.cpu_count() or 1}
    for key, value in options.items():
        field = _PACKING_OPTIONS.get(key.lower())
        if field is not None:
            try:
                values[field] = int(value)
            except ValueError:
                from hms_catalog.errors import ConfigurationError

                raise ConfigurationError(
                    f"the hms source's option '{key}' must be a number of bytes or partitions, got {value!r}") from None
    return PackingSettings(**values)


def packing_options(spark: Any) -> dict[str, str]:
    """The options that make the ``hms`` source pack splits as ``spark`` packs its own files."""
    conf = spark.conf
    parallelism = conf.get("spark.sql.leafNodeDefaultParallelism", None)
    if parallelism is None:
        try:
            parallelism = str(spark.sparkContext.defaultParallelism)
        except Exception:  # noqa: BLE001 - a Spark Connect session has no context to ask
            parallelism = str(os.cpu_count() or 1)
    options = {
        "maxPartitionBytes": str(_bytes(conf.get("spark.sql.files.maxPartitionBytes", "128m"))),
        "openCostInBytes": str(_bytes(conf.get("spark.sql.files.openCostInBytes", "4m"))),
        "minPartitionNum": conf.get("spark.sql.files.minPartitionNum", None) or parallelism,
    }
    return options


def _bytes(text: str) -> int:
    """A Spark byte size (``128m``, ``4194304``, ``1g``...) in bytes."""
    units = {"b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}
    stripped = text.strip().lower()
    digits = stripped.rstrip("bkmgt")
    unit = stripped[len(digits):] or "b"
    return int(digits) * units[unit]


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
        self._storage: StorageResolver | None = None

    def _load_schema(self) -> TableSchema:
        if self._table_schema is None:
            if "plan" in self.options:
                self._plan = SplitPlan.loads(self.options["plan"])
                self._table_schema, self._text = self._plan.schema, self._plan.text
                from planner.spark.tables import plan_storage

                self._storage = plan_storage(self.options, self._plan.catalog)
            else:
                from planner.spark.tables import table_handle

                catalog, table = table_handle(self.options)
                self._table_schema, self._text = table.schema, table.detection.text
                self._storage = catalog.storage
        return self._table_schema

    def schema(self) -> StructType:
        schema = self._load_schema()
        return _as_read(schema.spark_schema([c.name for c in _selected(schema, self.options.get("columns"))]))

    _reader_class: type[HmsReader]

    def reader(self, schema: StructType) -> DataSourceReader:
        table_schema = self._load_schema()
        return self._reader_class(dict(self.options), table_schema, _selected(table_schema, self.options.get("columns")),
                                  self._plan, self._text, self._storage)


class HmsReader(DataSourceReader):
    def __init__(self, options: dict[str, str], table_schema: TableSchema, columns: Sequence[Column],
                 plan: SplitPlan | None, text: TextFormat | None, storage: StorageResolver | None = None) -> None:
        # Everything read() needs is set here: the reader is sent to the workers before partitions() runs.
        # A plan given as an option is parsed already; its JSON is not carried to every task again.
        self.options = {key: value for key, value in options.items() if key != "plan"}
        self.columns = list(columns)
        self.table_schema = table_schema
        self._plan = plan
        self._pushed: list[Any] = []
        self.text = text
        # the catalog's storage settings, pickled to the workers without its filesystems (rebuilt there)
        self.storage = storage if storage is not None else StorageResolver()

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
        return [SplitPartition(index, splits) for index, splits in enumerate(pack_splits(plan.splits, _packing(self.options)))]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        from planner.readers import read_split

        if not isinstance(partition, SplitPartition):
            return  # an empty plan: Spark still asks for one (placeholder) partition

        target = self.table_schema.arrow_schema([c.name for c in self.columns])
        for split in partition.splits:
            yield from read_split(split, self.columns, target, text=self.text, table_columns=self.table_schema.data_columns,
                                  storage=self.storage)


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
