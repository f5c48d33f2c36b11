"""SHOW CREATE TABLE and SHOW TBLPROPERTIES: a table as the statement that recreates it, and its properties.

The statement is written in the syntax this catalog's parser reads (Spark SQL / HiveQL), so that run
with another name it creates a table whose DESCRIBE equals the original's, comments included: Hive
tables as ``STORED AS`` (or ``ROW FORMAT`` for text tables), Spark data source tables as ``USING``,
Iceberg tables as ``USING iceberg`` with their partition transforms. A managed table's location is left
out (a copy gets its own); an external table's is kept. Properties that describe the table's state
rather than its definition (statistics, timestamps, Spark's schema record) are left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.iceberg import partitioning_text
from hms_catalog.formats.detect import TableFormat
from hms_catalog.formats.metadata import TableMetadata
from hms_catalog.formats.storage import LAZY_SIMPLE_SERDE, STORAGE_FORMATS

__all__ = ["show_create_table", "definition_properties", "quote_name", "sql_string"]

_STATE = re.compile(r"^(transient_lastDdlTime|numFiles|totalSize|numRows|rawDataSize|COLUMN_STATS_ACCURATE|numFilesErasureCoded|"
                    r"EXTERNAL|comment|metadata_location|previous_metadata_location|table_type|last_modified_(by|time)|"
                    r"spark\.sql\..*|hms_catalog\..*|current-(schema|snapshot-.*)|snapshot-count|uuid|format)$")
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DELIMITERS = (("field.delim", "FIELDS TERMINATED BY"), ("escape.delim", "ESCAPED BY"),
               ("colelction.delim", "COLLECTION ITEMS TERMINATED BY"), ("mapkey.delim", "MAP KEYS TERMINATED BY"),
               ("line.delim", "LINES TERMINATED BY"), ("serialization.null.format", "NULL DEFINED AS"))


def quote_name(name: str) -> str:
    return name if _PLAIN.match(name) else "`" + name.replace("`", "``") + "`"


def sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\t", "\\t") + "'"


def definition_properties(parameters: Mapping[str, str]) -> dict[str, str]:
    """The properties a user set, without those that record the table's state."""
    return {k: v for k, v in sorted(parameters.items()) if not _STATE.match(k)}


def _pairs(pairs: Mapping[str, str]) -> str:
    return "(" + ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in pairs.items()) + ")"


def _column(name: str, kind: str, comment: str | None) -> str:
    return f"  {quote_name(name)} {kind}" + (f" COMMENT {sql_string(comment)}" if comment else "")


def show_create_table(name: str, metadata: TableMetadata) -> str:
    """The CREATE TABLE statement for ``name`` (as it should be written in the statement) of this table."""
    table: ttypes.Table = metadata.table
    detection = metadata.detection
    schema = metadata.schema
    parameters = table.parameters or {}
    external = table.tableType == "EXTERNAL_TABLE" or parameters.get("EXTERNAL", "").upper() == "TRUE"
    data = [c for c in schema.columns if not c.partition]
    partitions = [c for c in schema.columns if c.partition]
    lines = [f"CREATE {'EXTERNAL ' if external else ''}TABLE {name} ("]
    lines.append(",\n".join(_column(c.name, c.source_type, c.comment) for c in (schema.columns if detection.spark_provider else data)))
    lines.append(")")
    sd = table.sd or ttypes.StorageDescriptor()
    serde = sd.serdeInfo or ttypes.SerDeInfo()
    if detection.format is TableFormat.ICEBERG:
        lines.append("USING iceberg")
        location = parameters.get("metadata_location")
        fields = partitioning_text(location, dict(metadata.io_properties)) if location else None
        if fields:
            lines.append(f"PARTITIONED BY ({fields})")
    elif detection.spark_provider:
        lines.append(f"USING {detection.spark_provider}")
        options = {k: v for k, v in (serde.parameters or {}).items() if k != "path"}
        if options:
            lines.append(f"OPTIONS {_pairs(options)}")
        if partitions:
            lines.append("PARTITIONED BY (" + ", ".join(quote_name(c.name) for c in partitions) + ")")
    else:
        if partitions:
            lines.append("PARTITIONED BY (\n" + ",\n".join(_column(c.name, c.source_type, c.comment) for c in partitions) + ")")
        lines += _hive_storage(sd, serde)
    comment = parameters.get("comment")
    if comment:
        lines.insert(3, f"COMMENT {sql_string(comment)}")
    if external and sd.location:
        lines.append(f"LOCATION {sql_string(sd.location)}")
    properties = definition_properties(parameters)
    if properties:
        lines.append(f"TBLPROPERTIES {_pairs(properties)}")
    return "\n".join(lines)


def _hive_storage(sd: ttypes.StorageDescriptor, serde: ttypes.SerDeInfo) -> list[str]:
    parameters = dict(serde.parameters or {})
    for stored in STORAGE_FORMATS.values():
        if (sd.inputFormat, sd.outputFormat) != (stored.input_format, stored.output_format):
            continue
        if serde.serializationLib == stored.serde:
            custom = {k: v for k, v in parameters.items() if k not in stored.serde_parameters}
            if serde.serializationLib == LAZY_SIMPLE_SERDE and custom:
                return [_delimited(parameters), f"STORED AS {stored.name}"]
            return [f"STORED AS {stored.name}"] if not custom else \
                [f"ROW FORMAT SERDE {sql_string(stored.serde)} WITH SERDEPROPERTIES {_pairs(custom)}", f"STORED AS {stored.name}"]
        if stored.name in ("TEXTFILE", "SEQUENCEFILE") and serde.serializationLib:
            row = f"ROW FORMAT SERDE {sql_string(serde.serializationLib)}"
            custom = {k: v for k, v in parameters.items() if k != "serialization.format"}
            return [row + (f" WITH SERDEPROPERTIES {_pairs(custom)}" if custom else ""), f"STORED AS {stored.name}"]
    return ["STORED AS TEXTFILE"] if not sd.inputFormat else [
        f"-- stored with input format {sd.inputFormat}, output format {sd.outputFormat}, serde {serde.serializationLib}"]


def _delimited(parameters: Mapping[str, str]) -> str:
    clauses = ["ROW FORMAT DELIMITED"]
    for key, clause in _DELIMITERS:
        value = parameters.get(key)
        if value is not None and not (key == "field.delim" and value == "\x01"):
            clauses.append(f"{clause} {sql_string(value)}")
    return " ".join(clauses)
