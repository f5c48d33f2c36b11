"""What a writer needs to know of a table: which of Spark's writers makes its files, with which options,
and whether an overwrite replaces the partitions it writes (Hive tables) or those its spec names (Spark
data source tables, in STATIC mode).

Files are made by Spark's own writers, as Spark's own inserts make them: a Hive table stored as Parquet
or ORC through Spark's native Parquet and ORC writers (Spark converts such inserts the same way), other
Hive tables through Hive's serde and output format (delimited text with its delimiters, escapes and null
format, OpenCSV, Avro), a data source table through its provider's writer with its OPTIONS. What cannot
be written so is refused here, before any file is made, naming the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import UnsupportedTableError
from hms_catalog.formats.detect import TableFormat, TableKind, detect

__all__ = ["WriteTarget", "write_target"]

# Data source providers Spark ships a writer for (avro needs the spark-avro module, which Spark does not bundle)
_SOURCE_WRITERS = {"parquet": "parquet", "orc": "orc", "csv": "csv", "json": "json", "text": "text", "avro": "avro"}
# Table parameters Spark's Parquet and ORC writers take as options for a Hive table (its compression)
_NATIVE_OPTION_PREFIXES = ("parquet.", "orc.")
_STATS = ("numFiles", "totalSize", "numRows", "rawDataSize", "COLUMN_STATS_ACCURATE")


@dataclass(frozen=True)
class WriteTarget:
    """A table as its writers see it; :meth:`descriptor` is what the service sends a Spark driver."""

    database: str
    table: str
    location: str
    writer: str  # parquet | orc | csv | json | text | avro | hive
    hive_table: bool  # True: overwrites are dynamic whatever the session says (Spark's rule for STORED AS tables)
    partition_keys: tuple[str, ...]
    options: dict[str, str] = field(default_factory=dict)
    hive: dict[str, Any] | None = None  # writer 'hive': input/output format, serde and its properties
    iceberg: bool = False  # data files of an Iceberg table: partition columns stay in the files, pyiceberg commits

    def descriptor(self) -> dict[str, Any]:
        return {"database": self.database, "table": self.table, "location": self.location, "writer": self.writer,
                "hive_table": self.hive_table, "partition_keys": list(self.partition_keys), "options": self.options,
                "hive": self.hive, "iceberg": self.iceberg, "keep_partition_columns": self.iceberg}


def write_target(struct: ttypes.Table, full_name: str) -> WriteTarget:
    """The writers of ``struct`` (a metastore table), or UnsupportedTableError saying why it takes no writes."""
    detection = detect(struct)
    if detection.kind is not TableKind.TABLE:
        raise UnsupportedTableError(f"{full_name} is a view: views take no writes (write to the tables it reads)")
    if detection.format is TableFormat.ICEBERG:
        raise UnsupportedTableError(f"{full_name} is an Iceberg table: its writers are described by write.iceberg.iceberg_target")
    if detection.format is TableFormat.HUDI:
        raise UnsupportedTableError(f"{full_name} is a Hudi table: it takes writes through Hudi's own writer only, which keeps "
                                    "its timeline and file groups")
    if detection.format is TableFormat.UNKNOWN:
        raise UnsupportedTableError(f"{full_name} takes no writes here: {detection.reason}")
    if detection.transactional:
        raise UnsupportedTableError(f"{full_name} is a transactional ({detection.transactional}) table: write to it through Hive, "
                                    "which keeps its delta files")
    if not detection.location:
        raise UnsupportedTableError(f"{full_name} has no location to write to")
    sd = struct.sd or ttypes.StorageDescriptor()
    serde = sd.serdeInfo or ttypes.SerDeInfo()
    serde_parameters = {str(k): str(v) for k, v in (serde.parameters or {}).items()}
    parameters = {str(k): str(v) for k, v in (struct.parameters or {}).items()}
    keys = tuple(k.name.lower() for k in struct.partitionKeys or [])
    common: dict[str, Any] = {"database": struct.dbName.lower(), "table": struct.tableName.lower(),
                              "location": detection.location.rstrip("/"), "partition_keys": keys}
    if detection.spark_provider:
        writer = _SOURCE_WRITERS.get(detection.file_format or "")
        if writer is None:
            raise UnsupportedTableError(f"{full_name} is a Spark data source table of provider '{detection.spark_provider}', "
                                        "which has no writer here")
        options = {k: v for k, v in serde_parameters.items() if k != "path"}
        return WriteTarget(writer=writer, hive_table=False, options=options, **common)
    if detection.file_format in ("parquet", "orc"):
        options = {k: v for k, v in parameters.items() if k.startswith(_NATIVE_OPTION_PREFIXES)}
        options.update(serde_parameters)
        return WriteTarget(writer=detection.file_format, hive_table=True, options=options, **common)
    columns = list(sd.cols or [])
    properties = {**{k: v for k, v in parameters.items() if k not in _STATS}, **serde_parameters,
                  "serialization.lib": serde.serializationLib or "",
                  "columns": ",".join(c.name for c in columns),
                  "columns.types": ":".join(c.type for c in columns),
                  "name": f"{struct.dbName}.{struct.tableName}"}
    if keys:
        properties["partition_columns"] = "/".join(keys)
        properties["partition_columns.types"] = ":".join(k.type for k in struct.partitionKeys or [])
    hive = {"input_format": sd.inputFormat, "output_format": sd.outputFormat, "serde": serde.serializationLib,
            "properties": properties}
    return WriteTarget(writer="hive", hive_table=True, hive=hive, **common)
