"""ALTER TABLE: columns, properties and locations, as catalog events.

Hive tables change in the metastore; existing partitions get the new columns too only with Hive's CASCADE
(RESTRICT is Hive's and Spark's default; Spark reads old partitions with the table's columns either way). A Spark data source
table's own record of its schema (``spark.sql.sources.schema``) changes with it, so Spark's Hive support
sees the change too. Iceberg tables change through pyiceberg (a new metadata file): columns are matched by
field id there, so renames and widenings keep reading old files right. A type change must widen
(:mod:`hms_catalog.ddl.widening`): the metastore would store any type and readers would then fail.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hms_catalog.cache.versions import CatalogObject, ChangeKind
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.context import DdlContext, DdlOutcome, table_locked
from hms_catalog.ddl.iceberg import iceberg_catalog
from hms_catalog.ddl.locations import check_location, resolved_location
from hms_catalog.ddl.partition_values import partition_name
from hms_catalog.ddl.reserved import check_table_keys
from hms_catalog.ddl.specs import (
    AddColumns,
    ChangeColumn,
    ColumnSpec,
    RenameColumn,
    ReplaceColumns,
    SetLocation,
    SetSerdeProperties,
    SetTableProperties,
    TableChange,
    UnsetTableProperties,
)
from hms_catalog.ddl.structs import check_type, field_schemas, spark_schema_parameters
from hms_catalog.ddl.tables import changeable_table
from hms_catalog.ddl.widening import check_widening
from hms_catalog.errors import ConfigurationError, NotFoundError
from hms_catalog.formats.detect import TableFormat, detect
from hms_catalog.formats.hive_schema import spark_stored_schema
from hms_catalog.formats.storage import LAZY_SIMPLE_SERDE

__all__ = ["alter_columns_or_properties", "partition_provider"]

_TEXT_SERDES = (LAZY_SIMPLE_SERDE, "org.apache.hadoop.hive.serde2.OpenCSVSerde", "org.apache.hadoop.hive.serde2.RegexSerDe")


@table_locked
def alter_columns_or_properties(ctx: DdlContext, database: str, name: str, change: TableChange) -> DdlOutcome:
    database, name = database.lower(), name.lower()
    full = f"{ctx.catalog.name}.{database}.{name}"
    if isinstance(change, SetTableProperties):
        check_table_keys((key for key, _ in change.properties), f"table '{full}' SET TBLPROPERTIES")
    elif isinstance(change, UnsetTableProperties):
        check_table_keys(change.keys, f"table '{full}' UNSET TBLPROPERTIES")
    struct = changeable_table(ctx, database, name, "ALTER TABLE")
    if detect(struct).format is TableFormat.ICEBERG:
        return _alter_iceberg(ctx, database, name, change)
    if isinstance(change, SetLocation) and change.partition is not None:
        return _partition_location(ctx, struct, change)
    cascade = False
    if isinstance(change, (AddColumns, ChangeColumn, RenameColumn, ReplaceColumns)):
        columns = _new_columns(struct, change)
        _set_columns(struct, columns)
        cascade = bool(struct.partitionKeys) and getattr(change, "cascade", True)  # a RENAME COLUMN: partitions too
        done = _describe(change)
    elif isinstance(change, SetTableProperties):
        struct.parameters = {**(struct.parameters or {}), **dict(change.properties)}
        done = "properties set: " + ", ".join(key for key, _ in change.properties)
    elif isinstance(change, UnsetTableProperties):
        parameters = dict(struct.parameters or {})
        for key in change.keys:  # a key the table lacks is no error, with or without IF EXISTS, as in Spark 4
            parameters.pop(key, None)
        struct.parameters = parameters
        done = "properties unset: " + ", ".join(change.keys)
    elif isinstance(change, SetSerdeProperties):
        if change.serde is not None and _is_data_source(struct):
            raise ConfigurationError(f"ALTER TABLE SET SERDE is not supported for table '{full}', a Spark data source table: its "
                                     "USING says how its files are read (Spark refuses it too); SET SERDEPROPERTIES changes its options")
        serde = struct.sd.serdeInfo or ttypes.SerDeInfo(parameters={})
        serde.parameters = {**(serde.parameters or {}), **dict(change.properties)}
        if change.serde is not None:
            serde.serializationLib = change.serde
        struct.sd.serdeInfo = serde
        done = "serde properties set" + (f", serde {change.serde}" if change.serde else "")
    elif isinstance(change, SetLocation):
        location = resolved_location(change.location, ctx.catalog.client.get_database(database).locationUri,
                                     f"table '{full}'", f"database '{database}'")
        check_location(location, f"table '{full}'", ctx.catalog.storage)
        struct.sd.location = location
        if struct.sd.serdeInfo is not None and "path" in (struct.sd.serdeInfo.parameters or {}):
            struct.sd.serdeInfo.parameters = {**struct.sd.serdeInfo.parameters, "path": location}
        done = f"location set to {location}"
    else:
        raise ConfigurationError(f"{type(change).__name__} is not a change of columns or properties")
    if isinstance(change, (SetTableProperties, UnsetTableProperties, SetSerdeProperties, SetLocation)):
        struct.parameters = {**struct.parameters, **partition_provider(struct)}
    with ctx.changing([(database, name)], events=[("ALTER_TABLE", database, name, 1)]) as changes:
        ctx.client.alter_table(database, name, struct, cascade=cascade)
        changes.append((ChangeKind.CHANGED, CatalogObject.for_table(database, name)))
    return ctx.outcome(f"table '{full}' altered: {done}{' (partitions too)' if cascade else ''}", changes)


def partition_provider(struct: ttypes.Table, *, tracked: bool = False) -> dict[str, str]:
    """Where Spark's own ALTER of a table's definition (properties, location) records that its partitions are
    kept: in the metastore for a Hive table, or a data source table that says so already (or, ``tracked``,
    once RECOVER PARTITIONS has put them there); else on the filesystem."""
    parameters = struct.parameters or {}
    catalog = tracked or not parameters.get("spark.sql.sources.provider") or \
        parameters.get("spark.sql.partitionProvider") == "catalog"
    return {"spark.sql.partitionProvider": "catalog" if catalog else "filesystem"}


def _describe(change: TableChange) -> str:
    if isinstance(change, AddColumns):
        return "column(s) added: " + ", ".join(c.name for c in change.columns)
    if isinstance(change, RenameColumn):
        return f"column {change.old} renamed to {change.new}"
    if isinstance(change, ChangeColumn):
        return f"column {change.old} changed" + (f" to {change.new}" if change.new.lower() != change.old.lower() else "")
    return "columns replaced"


def _is_data_source(struct: ttypes.Table) -> bool:
    """A table of Spark's data source API (``USING parquet`` ..), not a Hive table (``USING hive``, ``STORED AS``)."""
    return (struct.parameters or {}).get("spark.sql.sources.provider", "hive").lower() != "hive"


def _is_source_placeholder(struct: ttypes.Table) -> bool:
    """A Spark data source table Hive cannot read (csv, json): the metastore holds a placeholder column."""
    cols = struct.sd.cols or []
    return bool((struct.parameters or {}).get("spark.sql.sources.provider")) and [c.name for c in cols] == ["col"] and \
        (cols[0].comment or "") == "from deserializer"


def _current_columns(struct: ttypes.Table) -> list[ColumnSpec]:
    stored = spark_stored_schema(struct.parameters or {})
    if _is_source_placeholder(struct) and stored is not None:
        from pyspark.sql.types import StructType as SparkStruct

        from hms_catalog.types import from_spark_type, to_hive_string

        fields, partition_names = stored
        parsed = SparkStruct.fromJson({"type": "struct", "fields": fields})
        partitions = {p.lower() for p in partition_names}
        return [ColumnSpec(f.name, to_hive_string(from_spark_type(f.dataType)), (f.metadata or {}).get("comment"))
                for f in parsed.fields if f.name.lower() not in partitions]
    return [ColumnSpec(c.name, c.type, c.comment) for c in struct.sd.cols or []]


def _new_columns(struct: ttypes.Table, change: TableChange) -> list[ColumnSpec]:
    current = _current_columns(struct)
    by_name = {c.name.lower(): i for i, c in enumerate(current)}
    keys = {k.name.lower() for k in struct.partitionKeys or []}
    text = (struct.sd.serdeInfo.serializationLib if struct.sd.serdeInfo else None) in _TEXT_SERDES
    table = f"{struct.dbName}.{struct.tableName}"

    def free(name: str) -> None:
        if name.lower() in by_name or name.lower() in keys:
            raise ConfigurationError(f"table '{table}' already has a column '{name}'")

    if isinstance(change, AddColumns):
        for column in change.columns:
            free(column.name)
            check_type(column)
        return current + list(change.columns)
    if isinstance(change, RenameColumn):
        index = _index(by_name, change.old, table, keys)
        if change.new.lower() != change.old.lower():
            free(change.new)
        current[index] = ColumnSpec(change.new, current[index].type, current[index].comment)
        return current
    if isinstance(change, ChangeColumn):
        index = _index(by_name, change.old, table, keys)
        old = current[index]
        if change.new.lower() != change.old.lower():
            free(change.new)
        kind = old.type if change.type is None else check_widening(old.name, old.type, change.type, text=text)
        # A name that differs only in case is no rename (names compare without case): the column keeps its own, as Spark's.
        new_name = old.name if change.new.lower() == change.old.lower() else change.new
        current[index] = ColumnSpec(new_name, kind, old.comment if change.comment is None else change.comment)
        if change.first or change.after is not None:
            moved = current.pop(index)
            if change.first:
                current.insert(0, moved)
            else:
                rest = {c.name.lower(): i for i, c in enumerate(current)}
                current.insert(_index(rest, change.after or "", table, keys) + 1, moved)
        return current
    assert isinstance(change, ReplaceColumns)
    for column in change.columns:
        if column.name.lower() in keys:
            raise ConfigurationError(f"'{column.name}' is a partition column of '{table}': REPLACE COLUMNS lists data columns")
        if column.name.lower() in by_name:
            check_widening(column.name, current[by_name[column.name.lower()]].type, column.type, text=text)
    return list(change.columns)


def _index(by_name: dict[str, int], name: str, table: str, keys: set[str]) -> int:
    if name.lower() in keys:
        raise ConfigurationError(f"'{name}' is a partition column of '{table}': its name and type are the partitions' own")
    if name.lower() not in by_name:
        raise NotFoundError("column", f"{table}.{name}")
    return by_name[name.lower()]


def _set_columns(struct: ttypes.Table, columns: list[ColumnSpec]) -> None:
    """The new columns in the metastore (unless it holds a placeholder) and in Spark's schema record."""
    parameters = dict(struct.parameters or {})
    if not _is_source_placeholder(struct):
        struct.sd.cols = field_schemas(columns)
    stored = spark_stored_schema(parameters)
    if stored is not None:
        _, partition_names = stored
        partition_specs = [ColumnSpec(k.name, k.type, k.comment) for k in struct.partitionKeys or []]
        if _is_source_placeholder(struct) and stored is not None:
            fields, _ = stored
            partition_specs = [c for c in _all_stored(fields) if c.name.lower() in {p.lower() for p in partition_names}]
        for key in [k for k in parameters if k.startswith("spark.sql.sources.schema")]:
            del parameters[key]
        parameters.update(spark_schema_parameters(columns + partition_specs, [p.name for p in partition_specs]))
    struct.parameters = parameters


def _all_stored(fields: list[dict[str, object]]) -> list[ColumnSpec]:
    from pyspark.sql.types import StructType as SparkStruct

    from hms_catalog.types import from_spark_type, to_hive_string

    parsed = SparkStruct.fromJson({"type": "struct", "fields": fields})
    return [ColumnSpec(f.name, to_hive_string(from_spark_type(f.dataType))) for f in parsed.fields]


def _partition_location(ctx: DdlContext, struct: ttypes.Table, change: SetLocation) -> DdlOutcome:
    assert change.partition is not None
    database, name = struct.dbName.lower(), struct.tableName.lower()
    location = resolved_location(change.location, struct.sd.location, f"a partition of {database}.{name}",
                                 f"table {database}.{name}")
    check_location(location, f"a partition of {database}.{name}", ctx.catalog.storage)
    partition_text = partition_name(struct, change.partition)
    found = ctx.catalog.client.get_partitions_by_names(database, name, [partition_text])
    if not found:
        raise NotFoundError("partition", f"{database}.{name} {partition_text}")
    partition = found[0]
    partition.sd.location = location
    if (struct.sd.numBuckets or -1) < 0:
        partition.sd.numBuckets = 0  # Spark's own rewrite of a partition of an unbucketed table stores 0 buckets
    with ctx.changing([(database, name)], events=[("ALTER_PARTITION", database, name, 1)]) as changes:
        ctx.client.alter_partitions(database, name, [partition])
        changes.append((ChangeKind.CHANGED, CatalogObject("partition", database, name, partition_text)))
    return ctx.outcome(f"partition {partition_text} of '{ctx.catalog.name}.{database}.{name}' moved to {location}", changes)


def _alter_iceberg(ctx: DdlContext, database: str, name: str, change: TableChange) -> DdlOutcome:
    """Iceberg's own schema and property updates; Hive-only changes are refused, saying why."""
    from hms_catalog.ddl.iceberg import arrow_schema_of

    table = iceberg_catalog(ctx.catalog).load_table((database, name))
    full = f"{ctx.catalog.name}.{database}.{name}"
    work: Callable[[], Any]
    if isinstance(change, AddColumns):
        def work() -> None:
            with table.update_schema() as update:
                update.union_by_name(arrow_schema_of(list(change.columns)))
        done = "column(s) added: " + ", ".join(c.name for c in change.columns)
    elif isinstance(change, RenameColumn):
        def work() -> None:
            with table.update_schema() as update:
                update.rename_column(change.old, change.new)
        done = f"column {change.old} renamed to {change.new}"
    elif isinstance(change, ChangeColumn):
        field = table.schema().find_field(change.old, case_sensitive=False)
        from pyiceberg.io.pyarrow import schema_to_pyarrow

        from hms_catalog.types import from_arrow_type, to_hive_string

        old_type = to_hive_string(from_arrow_type(schema_to_pyarrow(table.schema()).field(field.name).type))
        new_type = None if change.type is None else check_widening(change.old, old_type, change.type, iceberg=True)

        def work() -> None:
            with table.update_schema() as update:
                if new_type is not None and new_type != old_type:
                    update.update_column(field.name, field_type=_iceberg_type(new_type))
                if change.comment is not None:
                    update.update_column(field.name, doc=change.comment)
                if change.first:
                    update.move_first(field.name)
                elif change.after is not None:
                    update.move_after(field.name, change.after)
                if change.new.lower() != change.old.lower():
                    update.rename_column(field.name, change.new)
        done = f"column {change.old} changed"
    elif isinstance(change, SetTableProperties):
        def work() -> None:
            with table.transaction() as transaction:
                transaction.set_properties(dict(change.properties))
        done = "properties set: " + ", ".join(key for key, _ in change.properties)
    elif isinstance(change, UnsetTableProperties):
        def work() -> None:
            with table.transaction() as transaction:
                transaction.remove_properties(*change.keys)
        done = "properties unset: " + ", ".join(change.keys)
    else:
        raise ConfigurationError(f"{type(change).__name__} is not supported on Iceberg table '{full}' "
                                 "(REPLACE COLUMNS, SET LOCATION and partitions are Hive's)")
    with ctx.changing([(database, name)], events=[("ALTER_TABLE", database, name, 1)]) as changes:
        work()
        changes.append((ChangeKind.CHANGED, CatalogObject.for_table(database, name)))
    return ctx.outcome(f"Iceberg table '{full}' altered: {done}", changes)


def _iceberg_type(hive_type: str) -> Any:
    from pyiceberg.types import DecimalType, DoubleType, LongType

    if hive_type == "bigint":
        return LongType()
    if hive_type == "double":
        return DoubleType()
    precision, scale = (int(part) for part in hive_type[len("decimal("):-1].split(","))
    return DecimalType(precision, scale)
