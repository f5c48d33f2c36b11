"""Pure functions from DDL specs to the thrift structs a metastore holds, laid out as Hive and Spark lay them
out, so that Spark's Hive support, Hive and Trino read what is created here as their own.

- Hive tables (``STORED AS``, ``ROW FORMAT``): the storage format's input format, output format and serde;
  ``ROW FORMAT DELIMITED`` as LazySimpleSerDe parameters under the keys Spark and Hive write
  (``field.delim``, ``colelction.delim`` with Hive's spelling, ``mapkey.delim``, ...), and Spark's record of
  the schema (``spark.sql.sources.schema``), as Spark's own CREATE TABLE keeps it for Hive tables too.
- Spark data source tables (``USING parquet``, and a CREATE TABLE naming no storage at all, as Spark reads
  it): Spark's record of the provider, the typed schema and the partition columns in table parameters
  (``spark.sql.sources.*``) and the location as the ``path`` serde parameter; Parquet and ORC also with
  their Hive serde and the columns in the metastore, which Spark calls a Hive-compatible data source table,
  so Hive and Trino read them too.
- Every table's serde carries ``serialization.format`` (``1``, or the field delimiter), as Hive's own table
  object starts with; a table given a LOCATION is external, as Spark makes it.
- Column types are parsed by the type model first: a type the model does not know is an error naming the
  column, before the metastore is asked anything.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.spark_types import CHAR_VARCHAR_KEY, declared_char_type, strings_for_chars, without_nested_comments
from hms_catalog.ddl.specs import ColumnSpec, DatabaseSpec, PartitionValues, RowFormatSpec, TableSpec
from hms_catalog.errors import ConfigurationError, SchemaError
from hms_catalog.formats.hive_schema import spark_stored_schema
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name
from hms_catalog.formats.storage import LAZY_SIMPLE_SERDE, SPARK_PROVIDERS, SPARK_SOURCE_STORAGE, STORAGE_FORMATS, storage_format
from hms_catalog.types import (
    ArrayType,
    MapType,
    StructField,
    StructType,
    from_spark_type,
    parse_hive_type,
    to_hive_string,
    to_spark_schema,
)

__all__ = [
    "database_struct", "table_struct", "partition_struct", "field_schemas", "check_type", "spark_schema_parameters",
    "DDL_MARKER", "SCHEMA_PARTS_THRESHOLD", "SERIALIZATION_FORMAT", "DEFAULT_PROVIDER", "provider_of", "like_struct",
    "stored_columns",
]

# Written on every object a DDL here creates or changes, with the catalog's version: the event follower
# tells the metastore's events of our own DDLs by it (as Impala marks its own with its catalog version).
DDL_MARKER = "hms_catalog.ddl.version"
SCHEMA_PARTS_THRESHOLD = 4000  # Spark splits a longer schema into numbered parts (spark.sql.sources.schemaStringLengthThreshold)
# The keys Spark's and Hive's DDL write for each ROW FORMAT DELIMITED clause (Hive's collection key is misspelt,
# and both write only that spelling). NULL DEFINED AS is kept as Hive writes it; Spark 4 drops it, which would
# change what the table's files mean.
_DELIMITED = {"fields_terminated_by": ("field.delim", "serialization.format"), "escaped_by": ("escape.delim",),
              "collection_items_terminated_by": ("colelction.delim",),
              "map_keys_terminated_by": ("mapkey.delim",), "lines_terminated_by": ("line.delim",),
              "null_defined_as": ("serialization.null.format",)}
SERIALIZATION_FORMAT = {"serialization.format": "1"}  # what Hive's table object starts with, for every table
DEFAULT_PROVIDER = "parquet"  # spark.sql.sources.default: a CREATE TABLE naming no storage makes this data source table


def check_type(column: ColumnSpec) -> str:
    """The column's Hive type in the metastore's spelling, or ConfigurationError naming the column."""
    try:
        return to_hive_string(parse_hive_type(column.type, column=column.name))
    except SchemaError as error:  # the parser's message names the column and the position already
        raise ConfigurationError(str(error)) from error
    except Exception as error:
        raise ConfigurationError(f"column '{column.name}': {error}") from error


def field_schemas(columns: Sequence[ColumnSpec]) -> list[ttypes.FieldSchema]:
    seen: set[str] = set()
    schemas = []
    for column in columns:
        if column.name.lower() in seen:
            raise ConfigurationError(f"column '{column.name}' is given twice")
        seen.add(column.name.lower())
        check_type(column)
        # Nested fields' comments stay in Spark's schema record; the metastore's type has none, as Spark writes it.
        kind = to_hive_string(without_nested_comments(parse_hive_type(column.type, column=column.name)))
        schemas.append(ttypes.FieldSchema(column.name.lower(), kind, column.comment))
    return schemas


def database_struct(spec: DatabaseSpec) -> ttypes.Database:
    """``DBPROPERTIES ('comment' = ..)`` is the database's description unless COMMENT gives one, as Spark reads it: never a
    parameter of its own."""
    parameters = dict(spec.properties)
    comment = parameters.pop("comment", None)
    return ttypes.Database(name=spec.name.lower(), description=(spec.comment if spec.comment is not None else comment) or "",
                           locationUri=spec.location, parameters=parameters)


def _row_format(row_format: RowFormatSpec | None) -> tuple[str | None, dict[str, str]]:
    if row_format is None:
        return None, {}
    parameters = dict(row_format.serde_properties)
    for attribute, keys in _DELIMITED.items():
        value = getattr(row_format, attribute)
        if value is not None:
            for key in keys:
                parameters[key] = value
    return row_format.serde or LAZY_SIMPLE_SERDE, parameters


def _delimits(row_format: RowFormatSpec) -> bool:
    return any(getattr(row_format, attribute) is not None for attribute in _DELIMITED)


def spark_schema_parameters(columns: Sequence[ColumnSpec], partition_columns: Sequence[str]) -> dict[str, str]:
    """Spark's record of a table's schema, as Spark writes it: the JSON schema (in numbered parts when long),
    and the partition columns by name."""
    types = [parse_hive_type(c.type, column=c.name) for c in columns]
    fields = [StructField(c.name, strings_for_chars(t), True, c.comment) for c, t in zip(columns, types)]
    schema = to_spark_schema(fields).jsonValue()
    for field, data_type in zip(schema["fields"], types):
        declared = declared_char_type(data_type)
        if declared is not None:
            field["metadata"][CHAR_VARCHAR_KEY] = declared
    text = json.dumps(schema, separators=(",", ":"))
    parameters: dict[str, str] = {}
    if len(text) <= SCHEMA_PARTS_THRESHOLD:
        parameters["spark.sql.sources.schema"] = text
    else:
        parts = [text[i : i + SCHEMA_PARTS_THRESHOLD] for i in range(0, len(text), SCHEMA_PARTS_THRESHOLD)]
        parameters["spark.sql.sources.schema.numParts"] = str(len(parts))
        parameters.update({f"spark.sql.sources.schema.part.{i}": part for i, part in enumerate(parts)})
    if partition_columns:
        parameters["spark.sql.sources.schema.numPartCols"] = str(len(partition_columns))
        parameters.update({f"spark.sql.sources.schema.partCol.{i}": name for i, name in enumerate(partition_columns)})
    return parameters


def provider_of(spec: TableSpec) -> str | None:
    """The data source of a table to create: USING's, or Spark's default when no storage is named at all."""
    if spec.provider is not None:
        return spec.provider.lower()
    if spec.stored_as is None and spec.row_format is None:
        return DEFAULT_PROVIDER
    return None


def table_struct(spec: TableSpec, location: str | None, *, owner: str = "") -> ttypes.Table:
    """The metastore's table for ``spec``; ``location`` is where its files go (None: the metastore decides)."""
    if spec.provider is not None and (spec.stored_as is not None or spec.row_format is not None):
        raise ConfigurationError("a table is either USING a data source or STORED AS / ROW FORMAT, not both")
    spec = _hive_by_provider(spec)
    parameters = dict(spec.properties)
    if spec.comment:
        parameters["comment"] = spec.comment
    external = spec.external or spec.location is not None
    if external:
        parameters["EXTERNAL"] = "TRUE"
    serde_parameters: dict[str, str] = dict(SERIALIZATION_FORMAT)
    provider = provider_of(spec)
    if provider is not None:
        if provider not in SPARK_PROVIDERS:
            raise ConfigurationError(f"USING {spec.provider}: expected one of {', '.join(SPARK_PROVIDERS)} or iceberg")
        all_columns, partition_names = _source_columns(spec)
        field_schemas(all_columns)  # each type checked, each name once, before Spark's schema record is made
        data = [c for c in all_columns if c.name.lower() not in {p.lower() for p in partition_names}]
        ordered = data + [next(c for c in all_columns if c.name.lower() == p.lower()) for p in partition_names]
        parameters.update(spark_schema_parameters(ordered, partition_names))
        parameters["spark.sql.sources.provider"] = spec.provider or provider  # as written (USING PARQUET), as Spark keeps it
        # Spark tracks the partitions of its partitioned data source tables in the metastore
        # (manageFilesourcePartitions, on by default) only when the table says so, and says so only for those.
        if partition_names:
            parameters["spark.sql.partitionProvider"] = "catalog"
        serde_parameters.update(dict(spec.options))
        if location is not None:
            serde_parameters["path"] = location
        _check_source_types(provider, all_columns)
        hive_compatible = provider in ("parquet", "orc")
        storage = STORAGE_FORMATS[provider.upper()] if hive_compatible else SPARK_SOURCE_STORAGE
        columns = field_schemas(data) if hive_compatible else [ttypes.FieldSchema("col", "array<string>", "from deserializer")]
        partition_keys = field_schemas([c for c in ordered if c.name.lower() in {p.lower() for p in partition_names}])
        input_format, output_format, serde = storage.input_format, storage.output_format, storage.serde
    else:
        storage = storage_format(spec.stored_as or "TEXTFILE")
        input_format, output_format, serde = storage.input_format, storage.output_format, storage.serde
        serde_parameters.update(storage.serde_parameters)
        custom, delimited = _row_format(spec.row_format)
        if custom is not None:
            # Hive also takes ROW FORMAT SERDE naming the format's own serde, to give it properties (SHOW CREATE TABLE
            # writes a Parquet or ORC table with serde properties so); another serde would not read those files.
            own = spec.row_format is not None and spec.row_format.serde == storage.serde and not _delimits(spec.row_format)
            if spec.stored_as is not None and spec.stored_as.upper() not in ("TEXTFILE", "SEQUENCEFILE") and not own:
                raise ConfigurationError(f"ROW FORMAT applies to text storage, not STORED AS {spec.stored_as.upper()}")
            serde = custom
            serde_parameters.update(delimited)
        columns = field_schemas(spec.columns)
        names = {c.name for c in columns}
        clash = [p.name for p in spec.partition_columns if p.name.lower() in names]
        if clash:
            raise ConfigurationError(f"partition column '{clash[0]}' is also a data column")
        partition_keys = field_schemas(spec.partition_columns)
        parameters.update(spark_schema_parameters([*spec.columns, *spec.partition_columns],
                                                  [c.name for c in spec.partition_columns]))
    return ttypes.Table(
        tableName=spec.name.lower(), dbName=spec.database.lower(), owner=owner,
        tableType="EXTERNAL_TABLE" if external else "MANAGED_TABLE",
        partitionKeys=partition_keys, parameters=parameters,
        sd=ttypes.StorageDescriptor(
            cols=columns, location=location, inputFormat=input_format, outputFormat=output_format, compressed=False,
            numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
            serdeInfo=ttypes.SerDeInfo(serializationLib=serde, parameters=serde_parameters),
        ),
    )


def _hive_by_provider(spec: TableSpec) -> TableSpec:
    """``USING hive [OPTIONS (fileFormat 'parquet')] [PARTITIONED BY (col, ..)]`` as Spark reads it: a Hive table
    (text unless fileFormat names another format) whose partition columns, named from its columns, come last."""
    if (spec.provider or "").lower() != "hive":
        return spec
    options = {key.lower(): value for key, value in spec.options}
    unknown = sorted(set(options) - {"fileformat"})
    if unknown:
        raise ConfigurationError(f"USING hive OPTIONS ({unknown[0]} ..): only fileFormat is supported; name the storage with "
                                 "STORED AS and its serde with ROW FORMAT instead")
    stored_as = options.get("fileformat", "TEXTFILE").upper()
    storage_format(stored_as)  # an unknown format is refused here, listing the known ones
    named = {p.lower() for p in spec.partition_transforms}
    missing = sorted(named - {c.name.lower() for c in spec.columns})
    if missing or any("(" in p for p in spec.partition_transforms):
        raise ConfigurationError(f"USING hive PARTITIONED BY names columns of the table; '{(missing or spec.partition_transforms)[0]}' "
                                 "is not one")
    ordered = [next(c for c in spec.columns if c.name.lower() == p.lower()) for p in spec.partition_transforms]
    return replace(spec, provider=None, options=(), stored_as=stored_as, partition_transforms=(),
                   columns=tuple(c for c in spec.columns if c.name.lower() not in named),
                   partition_columns=(*spec.partition_columns, *ordered))


def _check_source_types(provider: str, columns: Sequence[ColumnSpec]) -> None:
    """CSV holds plain values only: a nested column is refused, as Spark's CSV source refuses it."""
    if provider != "csv":
        return
    for column in columns:
        if isinstance(parse_hive_type(column.type, column=column.name), (ArrayType, MapType, StructType)):
            raise ConfigurationError(f"USING csv cannot hold column '{column.name}' of type {column.type}: CSV holds plain "
                                     "values only (Spark's CSV source refuses it too); use USING json, parquet or orc")


def _source_columns(spec: TableSpec) -> tuple[list[ColumnSpec], list[str]]:
    """A data source table's columns and partition columns: ``PARTITIONED BY (col, ...)`` naming data columns,
    or typed partition columns (``PARTITIONED BY (dt STRING)``) appended to them, as Spark reads both."""
    if spec.partition_columns and spec.partition_transforms:
        raise ConfigurationError("PARTITIONED BY lists either column names of the table or new typed columns, not both")
    if spec.partition_columns:
        taken = {c.name.lower() for c in spec.columns}
        clash = [p.name for p in spec.partition_columns if p.name.lower() in taken]
        if clash:
            raise ConfigurationError(f"partition column '{clash[0]}' is also a data column")
        return [*spec.columns, *spec.partition_columns], [c.name for c in spec.partition_columns]
    names = {c.name.lower(): c.name for c in spec.columns}
    missing = [p for p in spec.partition_transforms if p.lower() not in names]
    if missing:
        raise ConfigurationError(f"PARTITIONED BY names '{missing[0]}', which is not a column of the table")
    return list(spec.columns), [names[p.lower()] for p in spec.partition_transforms]


def partition_struct(table: ttypes.Table, partition: PartitionValues, *, parameters: dict[str, str] | None = None) -> ttypes.Partition:
    """The partition of ``table`` with these values, at its given location or under the table's as
    ``k=v/k2=v2`` (escaped as Hive escapes)."""
    keys = [k.name.lower() for k in table.partitionKeys or []]
    given = {k.lower(): v for k, v in partition.values}
    unknown = sorted(set(given) - set(keys))
    if unknown:
        raise ConfigurationError(f"'{unknown[0]}' is not a partition column of {table.dbName}.{table.tableName} "
                                 f"(its partition columns: {', '.join(keys) or 'none'})")
    missing = [k for k in keys if k not in given]
    if missing:
        raise ConfigurationError(f"a partition of {table.dbName}.{table.tableName} needs a value for '{missing[0]}'")
    values = [given[k] for k in keys]
    location = partition.location
    if location is None and table.sd is not None and table.sd.location:
        location = f"{table.sd.location.rstrip('/')}/{make_partition_name(keys, values)}"
    sd = ttypes.StorageDescriptor(**{**table.sd.__dict__, "location": location}) if table.sd else None
    return ttypes.Partition(values=[DEFAULT_PARTITION if v is None else v for v in values], dbName=table.dbName,
                            tableName=table.tableName, sd=sd, parameters=dict(parameters or {}))


def stored_columns(table: ttypes.Table) -> tuple[list[ColumnSpec], list[str]]:
    """A table's columns (partition columns last) and its partition column names: from Spark's schema record when
    it has one (a csv or json table keeps nothing else), else from the metastore's columns and keys."""
    stored = spark_stored_schema(table.parameters or {})
    if stored is not None:
        from pyspark.sql.types import StructType as SparkStruct

        fields, partition_names = stored
        parsed = SparkStruct.fromJson({"type": "struct", "fields": fields})
        return ([ColumnSpec(f.name, (f.metadata or {}).get(CHAR_VARCHAR_KEY) or to_hive_string(from_spark_type(f.dataType)),
                            (f.metadata or {}).get("comment")) for f in parsed.fields], list(partition_names))
    keys = list(table.partitionKeys or [])
    columns = [ColumnSpec(c.name, c.type, c.comment) for c in [*(table.sd.cols or []), *keys]]
    return columns, [k.name for k in keys]


def like_struct(source: ttypes.Table, spec: TableSpec, location: str | None) -> ttypes.Table:
    """The table CREATE TABLE ``spec.name`` LIKE ``source`` makes, as Spark makes it: ``source``'s columns and
    partitioning; the storage ``spec`` names (USING, STORED AS, ROW FORMAT) or else the source's own; only the
    properties ``spec`` gives."""
    columns, partition_names = stored_columns(source)
    source_provider = (source.parameters or {}).get("spark.sql.sources.provider")
    source_provider = None if (source_provider or "").lower() == "hive" else source_provider
    names = {p.lower() for p in partition_names}
    data = [c for c in columns if c.name.lower() not in names]
    partitions = [c for c in columns if c.name.lower() in names]
    if spec.provider is not None or (source_provider is not None and spec.stored_as is None and spec.row_format is None):
        serde = dict(source.sd.serdeInfo.parameters or {}) if source.sd.serdeInfo else {}
        options = spec.options or tuple((k, v) for k, v in serde.items() if k not in ("path", "serialization.format"))
        return table_struct(replace(spec, columns=tuple(data + partitions), partition_transforms=tuple(partition_names),
                                    provider=spec.provider or source_provider, options=options), location)
    if spec.stored_as is not None or spec.row_format is not None:
        return table_struct(replace(spec, columns=tuple(data), partition_columns=tuple(partitions)), location)
    # A Hive table with no storage named: its storage as it is (whatever its formats and serde), at the new location.
    table = table_struct(replace(spec, columns=tuple(data), partition_columns=tuple(partitions), stored_as="TEXTFILE"), location)
    sd = ttypes.StorageDescriptor(**{**source.sd.__dict__, "location": location, "cols": table.sd.cols})
    serde = source.sd.serdeInfo
    if serde is not None:
        sd.serdeInfo = ttypes.SerDeInfo(**{**serde.__dict__, "parameters": {k: v for k, v in (serde.parameters or {}).items()
                                                                             if k != "path"}})
    table.sd = sd
    return table
