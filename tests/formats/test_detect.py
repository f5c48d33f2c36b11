"""Format detection is a pure function of the thrift Table: tested with plain structs."""

from __future__ import annotations

import pytest

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.formats import TableFormat, TableKind, detect
from tests.support import hms

TEXT = hms.TEXT
ORC = ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
       "org.apache.hadoop.hive.ql.io.orc.OrcSerde")


def table(formats: tuple[str, str, str] = hms.PARQUET, *, parameters: dict[str, str] | None = None,
          serde_parameters: dict[str, str] | None = None) -> ttypes.Table:
    t = hms.table_struct("db", "t", [("a", "int")], "file:///w/db.db/t", formats=formats, parameters=parameters)
    if serde_parameters is not None:
        t.sd.serdeInfo.parameters = serde_parameters
    return t


def test_iceberg_wins_over_the_generic_input_format_pyiceberg_registers() -> None:
    t = table(("org.apache.hadoop.mapred.FileInputFormat", "org.apache.hadoop.mapred.FileOutputFormat",
               "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"), parameters={"table_type": "iceberg"})
    detection = detect(t)
    assert detection.format is TableFormat.ICEBERG and detection.readable
    assert "table_type=ICEBERG" in detection.reason


@pytest.mark.parametrize(
    ("input_format", "query"),
    [
        ("org.apache.hudi.hadoop.HoodieParquetInputFormat", "read_optimized"),
        ("org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat", "snapshot"),
        ("com.uber.hoodie.hadoop.HoodieInputFormat", "read_optimized"),
        ("com.uber.hoodie.hadoop.realtime.HoodieRealtimeInputFormat", "snapshot"),
    ],
)
def test_hudi_input_formats(input_format: str, query: str) -> None:
    detection = detect(table((input_format, hms.PARQUET[1], hms.PARQUET[2])))
    assert (detection.format, detection.hudi_query, detection.file_format) == (TableFormat.HUDI, query, "parquet")


def test_hudi_written_by_flink() -> None:
    assert detect(table(TEXT, parameters={"flink.connector": "hudi"})).format is TableFormat.HUDI


def test_parquet_orc_and_transactional_orc() -> None:
    assert detect(table()).file_format == "parquet"
    orc = detect(table(ORC))
    assert (orc.format, orc.file_format, orc.transactional) == (TableFormat.HIVE, "orc", None)
    acid = detect(table(ORC, parameters={"transactional": "true"}))
    assert acid.transactional == "default" and "transactional ACID" in acid.reason
    insert_only = detect(table(ORC, parameters={"transactional": "TRUE", "transactional_properties": "insert_only"}))
    assert insert_only.transactional == "insert_only"


def test_text_delimiters_follow_hive_rules() -> None:
    plain = detect(table(TEXT, serde_parameters={"serialization.format": "1"}))
    assert plain.file_format == "text" and plain.text is not None
    assert (plain.text.field_delimiter, plain.text.collection_delimiter, plain.text.null_format) == ("\x01", "\x02", "\\N")
    csvish = detect(table(TEXT, serde_parameters={"field.delim": ",", "colelction.delim": "|", "mapkey.delim": ":",
                                                   "serialization.null.format": "", "escape.delim": "\\"}))
    assert csvish.text is not None
    assert (csvish.text.field_delimiter, csvish.text.collection_delimiter, csvish.text.map_key_delimiter) == (",", "|", ":")
    assert (csvish.text.null_format, csvish.text.escape_char) == ("", "\\")
    numeric = detect(table(TEXT, serde_parameters={"field.delim": "9"}))  # a byte number: tab
    assert numeric.text is not None and numeric.text.field_delimiter == "\t"


def test_open_csv_reads_every_column_as_string_and_json_serdes() -> None:
    csv = detect(table((TEXT[0], TEXT[1], "org.apache.hadoop.hive.serde2.OpenCSVSerde"), serde_parameters={"separatorChar": ";"}))
    assert csv.file_format == "csv" and csv.text is not None
    assert csv.text.all_columns_string and csv.text.field_delimiter == ";" and csv.text.quote_char == '"'
    json_table = detect(table((TEXT[0], TEXT[1], "org.apache.hive.hcatalog.data.JsonSerDe")))
    assert json_table.file_format == "json"


def test_spark_data_source_tables_use_the_provider_and_its_path() -> None:
    t = table(("org.apache.hadoop.mapred.SequenceFileInputFormat", TEXT[1], TEXT[2]),
              parameters={"spark.sql.sources.provider": "csv"}, serde_parameters={"path": "file:/w/real"})
    detection = detect(t)
    assert (detection.format, detection.file_format, detection.location) == (TableFormat.HIVE, "csv", "file:/w/real")
    delta = detect(table(parameters={"spark.sql.sources.provider": "delta"}))
    assert delta.format is TableFormat.UNKNOWN and "provider 'delta' is not supported" in delta.reason


def test_views_are_recognised_and_not_readable() -> None:
    view = hms.table_struct("db", "v", [("a", "int")], "")
    view.tableType, view.viewOriginalText, view.viewExpandedText = "VIRTUAL_VIEW", "select 1", "select 1 as a"
    view.sd.inputFormat = None
    detection = detect(view)
    assert detection.kind is TableKind.VIEW and not detection.readable and "a view" in detection.reason


@pytest.mark.parametrize(
    ("formats", "reason"),
    [
        (("org.apache.hadoop.mapred.SequenceFileInputFormat", TEXT[1], TEXT[2]),
         "input format org.apache.hadoop.mapred.SequenceFileInputFormat is not supported"),
        ((TEXT[0], TEXT[1], "org.apache.hadoop.hive.serde2.RegexSerDe"),
         "text serde org.apache.hadoop.hive.serde2.RegexSerDe is not supported"),
        (("org.apache.hadoop.hive.ql.io.RCFileInputFormat", TEXT[1], TEXT[2]), "RCFileInputFormat is not supported"),
    ],
)
def test_anything_else_is_unknown_with_a_reason(formats: tuple[str, str, str], reason: str) -> None:
    detection = detect(table(formats))
    assert detection.format is TableFormat.UNKNOWN and not detection.readable
    assert reason in detection.reason


def test_avro_tables_are_hive_tables_of_avro_files() -> None:
    detection = detect(table(("org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
                              "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat",
                              "org.apache.hadoop.hive.serde2.avro.AvroSerDe")))
    assert (detection.format, detection.file_format, detection.readable) == (TableFormat.HIVE, "avro", True)


def test_table_parameters_override_serde_parameters_for_text() -> None:
    detection = detect(table(TEXT, parameters={"serialization.null.format": ""}, serde_parameters={"field.delim": ","}))
    assert detection.text is not None
    assert (detection.text.null_format, detection.text.field_delimiter) == ("", ",")


def test_flink_hudi_tables_read_as_snapshot_unless_declared_copy_on_write() -> None:
    assert detect(table(TEXT, parameters={"flink.connector": "hudi"})).hudi_query == "snapshot"
    cow = detect(table(TEXT, parameters={"flink.connector": "hudi", "flink.table.type": "COPY_ON_WRITE"}))
    assert cow.hudi_query == "read_optimized"
