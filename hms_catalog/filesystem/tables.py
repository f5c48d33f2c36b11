"""The thrift structs a metastore would hold for a table of a given :class:`TableLayout`, and its partitions.

Built once here for both uses: a filesystem catalog answering ``get_table`` from folders, and ``CREATE TABLE
... LIKE PATH`` registering a folder in a real metastore. Parquet, ORC and Avro become Hive tables (input and
output formats, serde), which Spark's Hive reader reads natively; CSV and JSON become Spark data source tables
with their options and typed schema (Hive's text serdes would read CSV's quoted fields or JSON's types
differently from the filesystem catalog). Iceberg and Hudi keep their own markers; a table that cannot be read
carries its reason.
"""

from __future__ import annotations

import json

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.filesystem.detect import TableLayout
from hms_catalog.formats.detect import UNREADABLE_PARAMETER
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, parse_partition_name
from hms_catalog.formats.storage import SPARK_SOURCE_STORAGE, STORAGE_FORMATS
from hms_catalog.types import StructField, parse_hive_type, to_spark_schema

__all__ = ["HIVE_FORMATS", "SPARK_PROVIDERS", "table_struct", "partition_struct"]

HIVE_FORMATS = {name.lower(): (f.input_format, f.output_format, f.serde)
                for name, f in STORAGE_FORMATS.items() if name in ("PARQUET", "ORC", "AVRO")}
SPARK_PROVIDERS = ("csv", "json")
_HUDI_INPUT = {"COPY_ON_WRITE": "org.apache.hudi.hadoop.HoodieParquetInputFormat",
               "MERGE_ON_READ": "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"}
_CSV_OPTIONS = {"delimiter": "sep", "header": "header", "quote": "quote", "escape": "escape"}
_SPARK_STORAGE = (SPARK_SOURCE_STORAGE.input_format, SPARK_SOURCE_STORAGE.output_format, SPARK_SOURCE_STORAGE.serde)


def table_struct(database: str, table: str, location: str, layout: TableLayout, *,
                 metadata_location: str | None = None, detected_key: str = "hms_catalog.detected") -> ttypes.Table:
    """The external table ``database.table`` at ``location`` read as ``layout`` says."""
    columns = [ttypes.FieldSchema(name, kind, "") for name, kind in layout.columns]
    parameters = {"EXTERNAL": "TRUE", detected_key: layout.reason}
    serde_parameters: dict[str, str] = {}
    input_format = output_format = serde = None
    if layout.format in HIVE_FORMATS:
        input_format, output_format, serde = HIVE_FORMATS[layout.format]
    elif layout.format in SPARK_PROVIDERS:
        input_format, output_format, serde = _SPARK_STORAGE
        parameters.update(_spark_schema(layout))
        parameters["spark.sql.sources.provider"] = layout.format
        serde_parameters["path"] = location
        if layout.format == "csv":
            serde_parameters.update({spark: layout.options[ours] for ours, spark in _CSV_OPTIONS.items() if ours in layout.options})
    elif layout.format == "iceberg" and metadata_location is not None:
        parameters.update(table_type="ICEBERG", metadata_location=metadata_location)
    elif layout.format == "hudi":
        input_format = _HUDI_INPUT.get(layout.options.get("table_type", ""), _HUDI_INPUT["COPY_ON_WRITE"])
    else:
        parameters[UNREADABLE_PARAMETER] = layout.reason
    return ttypes.Table(
        tableName=table.lower(), dbName=database.lower(), owner="", tableType="EXTERNAL_TABLE",
        partitionKeys=[ttypes.FieldSchema(name, kind, "") for name, kind in layout.partition_keys],
        parameters=parameters,
        sd=ttypes.StorageDescriptor(
            cols=columns, location=location, inputFormat=input_format, outputFormat=output_format,
            serdeInfo=ttypes.SerDeInfo(serializationLib=serde, parameters=serde_parameters), compressed=False,
            numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
        ),
    )


def partition_struct(table: ttypes.Table, name: str, folder: str) -> ttypes.Partition:
    """The partition ``name`` (``k1=v1/k2=v2``) of ``table``, whose files are in ``folder`` under its location."""
    values = [value if value is not None else DEFAULT_PARTITION for _, value in parse_partition_name(name)]
    sd = ttypes.StorageDescriptor(**{**table.sd.__dict__, "location": f"{table.sd.location.rstrip('/')}/{folder}"})
    return ttypes.Partition(values=values, dbName=table.dbName, tableName=table.tableName, sd=sd, parameters={})


def _spark_schema(layout: TableLayout) -> dict[str, str]:
    """Spark's own record of a data source table's typed schema (partition columns last, as Spark keeps them)."""
    fields = [StructField(name, parse_hive_type(kind, column=name)) for name, kind in (*layout.columns, *layout.partition_keys)]
    parameters = {"spark.sql.sources.schema": json.dumps(to_spark_schema(fields).jsonValue())}
    if layout.partition_keys:
        parameters["spark.sql.sources.schema.numPartCols"] = str(len(layout.partition_keys))
        for index, (name, _) in enumerate(layout.partition_keys):
            parameters[f"spark.sql.sources.schema.partCol.{index}"] = name
    return parameters
