"""SHOW CREATE TABLE and SHOW TBLPROPERTIES: a table as the statement that recreates it, and its properties.

The statement is written in the syntax this catalog's parser reads (Spark SQL / HiveQL), so that run
with another name it creates a table equal to the original in the metastore (tests/ddl/test_show_create.py): Hive
tables as ``STORED AS`` (or ``ROW FORMAT`` for text tables), Spark data source tables as ``USING``,
Iceberg tables as ``USING iceberg`` with their partition transforms. A managed table's location is left
out (a copy gets its own); an external table's is kept. Properties that describe the table's state
rather than its definition (statistics, timestamps, Spark's schema record) are left out.

SHOW TBLPROPERTIES lists what Spark 4's own lists for the same table (:func:`spark_properties`), so that a user
moving between the two sees one answer: Spark's reading of the metastore's table, not the parameters as stored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.iceberg import partitioning_text
from hms_catalog.ddl.structs import stored_columns
from hms_catalog.errors import HmsCatalogError
from hms_catalog.formats.detect import TableFormat
from hms_catalog.formats.metadata import TableMetadata
from hms_catalog.formats.storage import LAZY_SIMPLE_SERDE, STORAGE_FORMATS

__all__ = ["show_create_table", "definition_properties", "spark_properties", "missing_property", "REDACTED", "quote_name", "sql_string"]

_SERIALIZATION_FORMAT = ("serialization.format", "1")  # what every table's serde starts with: said by no clause

_STATE = re.compile(r"^(transient_lastDdlTime|numFiles|totalSize|numRows|rawDataSize|COLUMN_STATS_ACCURATE|numFilesErasureCoded|"
                    r"EXTERNAL|comment|metadata_location|previous_metadata_location|table_type|last_modified_(by|time)|"
                    r"spark\.sql\..*|hms_catalog\..*|current-(schema|snapshot-.*)|snapshot-count|uuid|format)$")
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DELIMITERS = (("field.delim", "FIELDS TERMINATED BY"), ("escape.delim", "ESCAPED BY"),
               ("colelction.delim", "COLLECTION ITEMS TERMINATED BY"), ("mapkey.delim", "MAP KEYS TERMINATED BY"),
               ("line.delim", "LINES TERMINATED BY"), ("serialization.null.format", "NULL DEFINED AS"))


# SHOW TBLPROPERTIES, as Spark 4 answers it for a table of its session catalog on a Hive metastore.
_SPARK_KEEPS_APART = frozenset({"EXTERNAL", "comment", "numFiles", "numPartitions", "numRows", "rawDataSize", "totalSize",
                                "COLUMN_STATS_ACCURATE"})  # read into fields of Spark's own (HiveClientImpl), never listed
_V2_RESERVED = frozenset({"comment", "collation", "location", "provider", "owner", "external", "is_managed_location",
                          "table_type"})  # keys of Spark's v2 table view that SHOW TBLPROPERTIES leaves out
_REDACTION = (re.compile(r"(?i)secret|password|token|access[.]?key"), re.compile(r"(?i)url"))  # Spark's default
# spark.redaction.regex and spark.sql.redaction.options.regex: a key or a value matching either hides the value
REDACTED = "*********(redacted)"


def spark_properties(table: ttypes.Table) -> dict[str, str]:
    """The table's properties as Spark 4's SHOW TBLPROPERTIES lists them, sorted by key: its parameters less Spark's
    own records (``spark.sql.*``, statistics, ``EXTERNAL``, ``comment``; a data source table's DDL time) and the
    catalog's bookkeeping (``hms_catalog.*``), with the storage's properties as ``option.*`` (a data source table's
    OPTIONS without ``path``, a Hive table's serde properties), secret-looking values redacted as Spark redacts them.

    A Hive table's ``transient_lastDdlTime`` and serde properties are listed: Spark's v2 view of a Hive table shows them.
    """
    parameters = table.parameters or {}
    source = parameters.get("spark.sql.sources.provider", "hive").lower() != "hive"
    shown = {k: v for k, v in parameters.items() if not k.startswith(("spark.sql.", "hms_catalog.")) and k not in _SPARK_KEEPS_APART
             and not (source and k == "transient_lastDdlTime")}
    serde = table.sd.serdeInfo if table.sd is not None and table.sd.serdeInfo is not None else ttypes.SerDeInfo()
    for key, value in (serde.parameters or {}).items():
        if not (source and key in ("path", "serialization.format")):
            shown["option." + key] = value
    return {k: REDACTED if any(r.search(k) or r.search(v) for r in _REDACTION) else v
            for k, v in sorted(shown.items()) if k not in _V2_RESERVED}


def missing_property(table_name: str, key: str) -> str:
    """Spark's answer for a key the table does not have (a row, not an error)."""
    return f"Table {table_name} does not have property: {key}"


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
    return f"  {quote_name(name)} {kind}" + (f" COMMENT {sql_string(comment)}" if comment is not None else "")


def _delimiter(text: str) -> str:
    """A delimiter as a literal this catalog's parser and Spark's both read back: control characters (Hive's default
    field delimiter ``\\u0001``) as ``\\uXXXX`` escapes, not raw in the statement."""
    return "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 and c not in "\n\t" else c for c in sql_string(text))


@dataclass(frozen=True)
class _Shown:
    name: str
    type: str
    comment: str | None
    partition: bool


def _columns(metadata: TableMetadata) -> list[_Shown]:
    """The columns as the statement declares them: from Spark's schema record where the table has one (it keeps nested
    comments and char/varchar types, which the metastore's types lose), else as the metastore holds them ('' is a
    comment of its own, as Spark keeps it); an Iceberg table's from its own schema."""
    table = metadata.table
    if metadata.detection.format is not TableFormat.ICEBERG:
        try:
            specs, partition_names = stored_columns(table)
        except HmsCatalogError:  # a type with no Hive spelling: as the schema shows it, below
            pass
        else:
            keys = {p.lower() for p in partition_names}
            return [_Shown(c.name, c.type, c.comment, c.name.lower() in keys) for c in specs]
    stored = {f.name.lower(): f.comment for f in [*((table.sd.cols if table.sd else None) or []), *(table.partitionKeys or [])]}
    return [_Shown(c.name, c.source_type, stored.get(c.name.lower(), c.comment or None), c.partition) for c in metadata.schema.columns]


def show_create_table(name: str, metadata: TableMetadata) -> str:
    """The CREATE TABLE statement for ``name`` (as it should be written in the statement) of this table."""
    table: ttypes.Table = metadata.table
    detection = metadata.detection
    parameters = table.parameters or {}
    external = table.tableType == "EXTERNAL_TABLE" or parameters.get("EXTERNAL", "").upper() == "TRUE"
    columns = _columns(metadata)
    data = [c for c in columns if not c.partition]
    partitions = [c for c in columns if c.partition]
    lines = [f"CREATE {'EXTERNAL ' if external else ''}TABLE {name} ("]
    lines.append(",\n".join(_column(c.name, c.type, c.comment) for c in (columns if detection.spark_provider else data)))
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
        lines.append(f"USING {parameters.get('spark.sql.sources.provider') or detection.spark_provider}")  # as written
        options = {k: v for k, v in (serde.parameters or {}).items() if k != "path" and (k, v) != _SERIALIZATION_FORMAT}
        if options:
            lines.append(f"OPTIONS {_pairs(options)}")
        if partitions:
            lines.append("PARTITIONED BY (" + ", ".join(quote_name(c.name) for c in partitions) + ")")
    else:
        if partitions:
            lines.append("PARTITIONED BY (\n" + ",\n".join(_column(c.name, c.type, c.comment) for c in partitions) + ")")
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
    """STORED AS the format whose input and output formats the table has, with the ROW FORMAT that gives its serde
    properties: DELIMITED for a text table's delimiters, else SERDE with the properties no clause says."""
    parameters = dict(serde.parameters or {})
    for stored in STORAGE_FORMATS.values():
        if (sd.inputFormat, sd.outputFormat) != (stored.input_format, stored.output_format):
            continue
        defaults = {_SERIALIZATION_FORMAT, *stored.serde_parameters.items()}
        custom = {k: v for k, v in parameters.items() if (k, v) not in defaults}
        if serde.serializationLib == stored.serde and not custom:
            return [f"STORED AS {stored.name}"]
        if serde.serializationLib == LAZY_SIMPLE_SERDE and _only_delimiters(custom):
            return [_delimited(parameters), f"STORED AS {stored.name}"]
        if serde.serializationLib:
            row = f"ROW FORMAT SERDE {sql_string(serde.serializationLib)}"
            return [row + (f" WITH SERDEPROPERTIES {_pairs(custom)}" if custom else ""), f"STORED AS {stored.name}"]
    return ["STORED AS TEXTFILE"] if not sd.inputFormat else [
        f"-- stored with input format {sd.inputFormat}, output format {sd.outputFormat}, serde {serde.serializationLib}"]


def _only_delimiters(custom: Mapping[str, str]) -> bool:
    """Serde properties that ROW FORMAT DELIMITED says all of (``serialization.format`` is the field delimiter)."""
    keys = {key for key, _ in _DELIMITERS}
    return all(k in keys or (k == "serialization.format" and v == custom.get("field.delim")) for k, v in custom.items())


def _delimited(parameters: Mapping[str, str]) -> str:
    clauses = ["ROW FORMAT DELIMITED"]
    for key, clause in _DELIMITERS:
        value = parameters.get(key)
        if value is not None:
            clauses.append(f"{clause} {_delimiter(value)}")
    return " ".join(clauses)
