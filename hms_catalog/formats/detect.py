"""What a metastore table is, decided from its one get_table answer and nothing else.

Order as Doris decides it: ICEBERG (its table parameter wins over the generic input format pyiceberg
registers), then HUDI (Hudi's input formats or Flink's marker), then HIVE (Parquet, ORC, text with its
serde, Spark data source tables), else UNKNOWN with a reason a person can act on. An UNKNOWN table
still lists and describes; only reading it fails, with that reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TypedDict

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.formats.storage import STORAGE_FORMATS

__all__ = ["TableFormat", "TableKind", "TextFormat", "Detection", "detect", "HUDI_INPUT_FORMATS", "UNREADABLE_PARAMETER"]

# Set by a catalog that knows a table cannot be read (a filesystem catalog's Delta folder, mixed formats):
# the table is UNKNOWN with this reason. A metastore table never has it.
UNREADABLE_PARAMETER = "hms_catalog.unreadable"


class TableFormat(str, Enum):
    HIVE = "HIVE"
    ICEBERG = "ICEBERG"
    HUDI = "HUDI"
    UNKNOWN = "UNKNOWN"


class TableKind(str, Enum):
    TABLE = "TABLE"
    VIEW = "VIEW"


HUDI_COW_INPUT_FORMATS = frozenset(
    {"org.apache.hudi.hadoop.HoodieParquetInputFormat", "com.uber.hoodie.hadoop.HoodieInputFormat"}
)
HUDI_MOR_INPUT_FORMATS = frozenset(
    {
        "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat",
        "com.uber.hoodie.hadoop.realtime.HoodieRealtimeInputFormat",
    }
)
HUDI_INPUT_FORMATS = HUDI_COW_INPUT_FORMATS | HUDI_MOR_INPUT_FORMATS

_PARQUET_INPUTS = (STORAGE_FORMATS["PARQUET"].input_format, "parquet.hive.DeprecatedParquetInputFormat",
                   "parquet.hive.MapredParquetInputFormat")
_ORC_INPUT = STORAGE_FORMATS["ORC"].input_format
_AVRO_INPUT = STORAGE_FORMATS["AVRO"].input_format
_TEXT_INPUT = STORAGE_FORMATS["TEXTFILE"].input_format
_LAZY_SIMPLE = ("org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", "org.apache.hadoop.hive.serde2.MetadataTypedColumnsetSerDe")
_OPEN_CSV = "org.apache.hadoop.hive.serde2.OpenCSVSerde"
_JSON_SERDES = ("org.apache.hive.hcatalog.data.JsonSerDe", "org.apache.hadoop.hive.serde2.JsonSerDe", "org.openx.data.jsonserde.JsonSerDe")
_SPARK_PROVIDERS = {
    "parquet": "parquet", "org.apache.spark.sql.parquet": "parquet",
    "org.apache.spark.sql.execution.datasources.parquet.parquetfileformat": "parquet",
    "orc": "orc", "org.apache.spark.sql.hive.orc": "orc", "org.apache.spark.sql.execution.datasources.orc.orcfileformat": "orc",
    "csv": "csv", "com.databricks.spark.csv": "csv", "json": "json", "text": "text",
    "avro": "avro", "com.databricks.spark.avro": "avro",
}


@dataclass(frozen=True)
class TextFormat:
    """How a delimited text table is laid out (LazySimpleSerDe's properties, or OpenCSVSerde's)."""

    field_delimiter: str = "\x01"
    collection_delimiter: str = "\x02"
    map_key_delimiter: str = "\x03"
    line_delimiter: str = "\n"
    escape_char: str | None = None
    null_format: str = "\\N"
    quote_char: str | None = None
    all_columns_string: bool = False
    header_lines: int = 0  # lines skipped at the start of each file (skip.header.line.count, csv header)


@dataclass(frozen=True)
class Detection:
    """The classification of one table and what a reader needs to know about its files."""

    format: TableFormat
    reason: str
    file_format: str | None = None
    kind: TableKind = TableKind.TABLE
    input_format: str | None = None
    serde: str | None = None
    location: str | None = None
    text: TextFormat | None = None
    transactional: str | None = None
    spark_provider: str | None = None
    hudi_query: str | None = None
    parameters: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def readable(self) -> bool:
        """Whether the planner and readers can take this table; when not, :attr:`reason` says why."""
        return self.format is not TableFormat.UNKNOWN and self.kind is TableKind.TABLE


class _Found(TypedDict):
    """What every detection records of the table as found, whatever its format."""

    input_format: str | None
    serde: str | None
    location: str | None
    parameters: dict[str, str]


def _delimiter(params: dict[str, str], keys: tuple[str, ...], default: str) -> str:
    """Hive's rule: a delimiter that parses as a byte number is that byte, else its first character."""
    for key in keys:
        text = params.get(key)
        if text:
            try:
                number = int(text)
            except ValueError:
                return text[0]
            if -128 <= number <= 127:
                return chr(number % 256)
            return text[0]
    return default


def _header_lines(params: dict[str, str]) -> int:
    try:
        return max(0, int(params.get("skip.header.line.count", "0")))
    except ValueError:
        return 0


def _text_format(serde: str, params: dict[str, str]) -> TextFormat:
    if serde == _OPEN_CSV:
        return TextFormat(
            field_delimiter=params.get("separatorChar", ","), quote_char=params.get("quoteChar", '"'),
            escape_char=params.get("escapeChar", "\\"), null_format="", all_columns_string=True,
            header_lines=_header_lines(params),
        )
    escape = params.get("escape.delim")
    return TextFormat(
        field_delimiter=_delimiter(params, ("field.delim", "serialization.format"), "\x01"),
        collection_delimiter=_delimiter(params, ("collection.delim", "colelction.delim"), "\x02"),
        map_key_delimiter=_delimiter(params, ("mapkey.delim",), "\x03"),
        line_delimiter=_delimiter(params, ("line.delim",), "\n"),
        escape_char=_delimiter(params, ("escape.delim",), "\\") if escape else None,
        null_format=params.get("serialization.null.format", "\\N"),
        header_lines=_header_lines(params),
    )


def detect(table: ttypes.Table) -> Detection:
    """Classify ``table`` (a thrift Table as get_table returns it)."""
    params = {str(k): str(v) for k, v in (table.parameters or {}).items()}
    sd = table.sd or ttypes.StorageDescriptor()
    serde_info = sd.serdeInfo or ttypes.SerDeInfo()
    serde_params = {str(k): str(v) for k, v in (serde_info.parameters or {}).items()}
    input_format = sd.inputFormat or None
    serde = serde_info.serializationLib or None
    location = serde_params.get("path") if params.get("spark.sql.sources.provider") else None
    location = location or sd.location or None
    common = _Found(input_format=input_format, serde=serde, location=location, parameters=params)

    if UNREADABLE_PARAMETER in params:
        return Detection(TableFormat.UNKNOWN, params[UNREADABLE_PARAMETER], **common)
    if params.get("table_type", "").upper() == "ICEBERG":
        return Detection(TableFormat.ICEBERG, "table parameter table_type=ICEBERG", file_format="iceberg", **common)

    provider = params.get("spark.sql.sources.provider", "").lower()
    if input_format in HUDI_INPUT_FORMATS or params.get("flink.connector", "").lower() == "hudi" or provider == "hudi":
        if input_format in HUDI_INPUT_FORMATS:
            query = "snapshot" if input_format in HUDI_MOR_INPUT_FORMATS else "read_optimized"
        else:
            # Written by Flink or registered as a Spark data source: read-optimized would silently skip the
            # log files of a merge-on-read table, so only a table declared copy-on-write reads base files only.
            declared = (params.get("flink.table.type") or params.get("hoodie.table.type") or params.get("type") or "").lower()
            query = "read_optimized" if declared in ("copy_on_write", "cow") else "snapshot"
        reason = f"input format {input_format}" if input_format in HUDI_INPUT_FORMATS else "Hudi table parameters"
        return Detection(TableFormat.HUDI, reason, file_format="parquet", hudi_query=query, **common)

    if table.tableType == "VIRTUAL_VIEW" or table.viewOriginalText or table.viewExpandedText:
        text = (table.viewExpandedText or table.viewOriginalText or "").strip()
        return Detection(TableFormat.HIVE, f"a view: {text[:200]}", file_format="view", kind=TableKind.VIEW, **common)

    transactional = None
    if params.get("transactional", "").lower() == "true":
        transactional = params.get("transactional_properties", "default").lower()

    if provider:
        file_format = _SPARK_PROVIDERS.get(provider)
        if file_format is None:
            return Detection(TableFormat.UNKNOWN, f"Spark data source provider '{provider}' is not supported",
                             spark_provider=provider, **common)
        text_format = TextFormat(
            field_delimiter=serde_params.get("sep", serde_params.get("delimiter", ",")),
            header_lines=1 if serde_params.get("header", "false").lower() == "true" else 0,
        )
        return Detection(TableFormat.HIVE, f"Spark data source table (provider {provider})", file_format=file_format,
                         spark_provider=provider, text=text_format if file_format == "csv" else None,
                         transactional=transactional, **common)

    if input_format in _PARQUET_INPUTS:
        return Detection(TableFormat.HIVE, f"input format {input_format}", file_format="parquet", transactional=transactional, **common)
    if input_format == _ORC_INPUT:
        reason = f"input format {input_format}" + (" (transactional ACID)" if transactional else "")
        return Detection(TableFormat.HIVE, reason, file_format="orc", transactional=transactional, **common)
    if input_format == _AVRO_INPUT:
        return Detection(TableFormat.HIVE, f"input format {input_format}", file_format="avro", transactional=transactional, **common)
    if input_format == _TEXT_INPUT:
        # As Hive's MetaStoreUtils.getSchema: table parameters override the serde's (TBLPROPERTIES
        # ('serialization.null.format'='') is a common way to read empty fields as NULL).
        text_params = {**serde_params, **params}
        if serde in _LAZY_SIMPLE or serde is None:
            return Detection(TableFormat.HIVE, f"text with serde {serde or _LAZY_SIMPLE[0]}", file_format="text",
                             text=_text_format(serde or _LAZY_SIMPLE[0], text_params), transactional=transactional, **common)
        if serde == _OPEN_CSV:
            return Detection(TableFormat.HIVE, f"text with serde {serde}", file_format="csv",
                             text=_text_format(serde, text_params), transactional=transactional, **common)
        if serde in _JSON_SERDES:
            return Detection(TableFormat.HIVE, f"text with serde {serde}", file_format="json", transactional=transactional, **common)
        return Detection(TableFormat.UNKNOWN, f"text serde {serde} is not supported", **common)
    if input_format is None:
        return Detection(TableFormat.UNKNOWN, "the table has no input format", **common)
    return Detection(TableFormat.UNKNOWN, f"input format {input_format} is not supported", **common)
