"""Hive's storage formats by their ``STORED AS`` names: input format, output format and serde, as Hive's
``StorageFormatDescriptor``s spell them, in one table every writer of table structs reads (DDL, ``LIKE
PATH``, filesystem catalogs, the demo, the benchmarks).

Spark data source tables (``USING parquet``) keep Spark's placeholder storage in the metastore and their
real format in ``spark.sql.sources.provider``; :data:`SPARK_SOURCE_STORAGE` is that placeholder, as Spark
writes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from hms_catalog.errors import ConfigurationError

__all__ = ["StorageFormat", "STORAGE_FORMATS", "SPARK_SOURCE_STORAGE", "SPARK_PROVIDERS", "LAZY_SIMPLE_SERDE", "storage_format"]

LAZY_SIMPLE_SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"


@dataclass(frozen=True)
class StorageFormat:
    """One way Hive stores a table's files."""

    name: str
    input_format: str
    output_format: str
    serde: str
    serde_parameters: Mapping[str, str] = field(default_factory=dict)


STORAGE_FORMATS: Mapping[str, StorageFormat] = MappingProxyType({
    "PARQUET": StorageFormat("PARQUET", "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                             "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                             "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"),
    "ORC": StorageFormat("ORC", "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
                         "org.apache.hadoop.hive.ql.io.orc.OrcSerde"),
    "TEXTFILE": StorageFormat("TEXTFILE", "org.apache.hadoop.mapred.TextInputFormat",
                              "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat", LAZY_SIMPLE_SERDE,
                              {"serialization.format": "1"}),
    "AVRO": StorageFormat("AVRO", "org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
                          "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat", "org.apache.hadoop.hive.serde2.avro.AvroSerDe"),
    "SEQUENCEFILE": StorageFormat("SEQUENCEFILE", "org.apache.hadoop.mapred.SequenceFileInputFormat",  # Spark's STORED AS's
                                  "org.apache.hadoop.mapred.SequenceFileOutputFormat", LAZY_SIMPLE_SERDE,
                                  {"serialization.format": "1"}),
    "RCFILE": StorageFormat("RCFILE", "org.apache.hadoop.hive.ql.io.RCFileInputFormat", "org.apache.hadoop.hive.ql.io.RCFileOutputFormat",
                            "org.apache.hadoop.hive.serde2.columnar.LazyBinaryColumnarSerDe"),
    "JSONFILE": StorageFormat("JSONFILE", "org.apache.hadoop.mapred.TextInputFormat",
                              "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat", "org.apache.hive.hcatalog.data.JsonSerDe"),
})

# What Spark writes as a data source table's storage: readers take the provider, never these.
SPARK_SOURCE_STORAGE = StorageFormat("SPARK", "org.apache.hadoop.mapred.SequenceFileInputFormat",
                                     "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat", LAZY_SIMPLE_SERDE)
SPARK_PROVIDERS = ("parquet", "orc", "csv", "json", "avro")


def storage_format(name: str) -> StorageFormat:
    """The format ``STORED AS name`` means; the error lists the names there are."""
    found = STORAGE_FORMATS.get(name.upper())
    if found is None:
        raise ConfigurationError(f"unknown storage format '{name}'; expected one of {', '.join(STORAGE_FORMATS)}")
    return found
