"""DDL specs as the thrift structs Hive and Spark would write for the same statements."""

from __future__ import annotations

import json

import pytest

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.specs import ColumnSpec, DatabaseSpec, PartitionValues, RowFormatSpec, TableSpec
from hms_catalog.ddl.structs import database_struct, partition_struct, spark_schema_parameters, table_struct
from hms_catalog.errors import ConfigurationError
from hms_catalog.formats.detect import TableFormat, detect
from hms_catalog.formats.storage import STORAGE_FORMATS

COLUMNS = (ColumnSpec("Id", "INT", "the key"), ColumnSpec("tags", "array<struct<a:int,b:string>>"))


def test_a_hive_table_stored_as_parquet() -> None:
    spec = TableSpec("db", "T", COLUMNS, partition_columns=(ColumnSpec("dt", "string"),), stored_as="parquet",
                     comment="facts", properties=(("owner.team", "etl"),))
    table = table_struct(spec, "file:///w/db.db/t")
    parquet = STORAGE_FORMATS["PARQUET"]
    assert (table.dbName, table.tableName, table.tableType) == ("db", "t", "MANAGED_TABLE")
    assert [(c.name, c.type, c.comment) for c in table.sd.cols] == [("id", "int", "the key"),
                                                                      ("tags", "array<struct<a:int,b:string>>", None)]
    assert [(k.name, k.type) for k in table.partitionKeys] == [("dt", "string")]
    assert (table.sd.inputFormat, table.sd.outputFormat, table.sd.serdeInfo.serializationLib) == (
        parquet.input_format, parquet.output_format, parquet.serde)
    schema = {k: v for k, v in table.parameters.items() if k.startswith("spark.sql.sources.schema")}
    assert {k: v for k, v in table.parameters.items() if k not in schema} == {"owner.team": "etl", "comment": "facts"}
    # Spark's record of the schema, as Spark's own CREATE TABLE keeps it for Hive tables: names as written
    assert [f["name"] for f in json.loads(schema["spark.sql.sources.schema"])["fields"]] == ["Id", "tags", "dt"]
    assert (schema["spark.sql.sources.schema.numPartCols"], schema["spark.sql.sources.schema.partCol.0"]) == ("1", "dt")
    assert table.sd.serdeInfo.parameters == {"serialization.format": "1"}
    assert detect(table).format is TableFormat.HIVE and detect(table).file_format == "parquet"


def test_row_format_delimited_uses_hives_own_keys() -> None:
    row_format = RowFormatSpec(fields_terminated_by="|", escaped_by="\\", collection_items_terminated_by=",",
                               map_keys_terminated_by=":", null_defined_as="NIL")
    table = table_struct(TableSpec("db", "t", COLUMNS, row_format=row_format, external=True), "file:///data/t")
    params = table.sd.serdeInfo.parameters
    assert params["field.delim"] == params["serialization.format"] == "|"
    assert params["colelction.delim"] == ","  # sic: Hive reads this spelling
    assert (params["mapkey.delim"], params["escape.delim"], params["serialization.null.format"]) == (":", "\\", "NIL")
    assert table.tableType == "EXTERNAL_TABLE" and table.parameters["EXTERNAL"] == "TRUE"
    text = detect(table).text
    assert text is not None and text.field_delimiter == "|" and text.null_format == "NIL"


def test_a_spark_data_source_table_records_spark_schema() -> None:
    spec = TableSpec("db", "t", (ColumnSpec("id", "bigint"), ColumnSpec("dt", "string"), ColumnSpec("v", "double")),
                     partition_transforms=("dt",), provider="parquet")
    table = table_struct(spec, "file:///w/t")
    params = table.parameters
    assert params["spark.sql.sources.provider"] == "parquet"
    assert params["spark.sql.partitionProvider"] == "catalog"  # else Spark keeps its partitions out of the metastore
    fields = json.loads(params["spark.sql.sources.schema"])["fields"]
    assert [f["name"] for f in fields] == ["id", "v", "dt"]  # partition columns last, as Spark keeps them
    assert (params["spark.sql.sources.schema.numPartCols"], params["spark.sql.sources.schema.partCol.0"]) == ("1", "dt")
    assert [c.name for c in table.sd.cols] == ["id", "v"] and [k.name for k in table.partitionKeys] == ["dt"]
    assert table.sd.serdeInfo.parameters["path"] == "file:///w/t"
    csv = table_struct(TableSpec("db", "c", (ColumnSpec("a", "int"),), provider="csv", options=(("header", "true"),)), "file:///w/c")
    assert [c.name for c in csv.sd.cols] == ["col"] and csv.sd.serdeInfo.parameters["header"] == "true"
    assert detect(csv).spark_provider == "csv"


def test_long_spark_schemas_are_split_in_parts() -> None:
    columns = [ColumnSpec(f"column_with_a_long_name_{i}", "decimal(38,10)") for i in range(200)]
    params = spark_schema_parameters(columns, [])
    parts = int(params["spark.sql.sources.schema.numParts"])
    assert parts > 1 and json.loads("".join(params[f"spark.sql.sources.schema.part.{i}"] for i in range(parts)))


@pytest.mark.parametrize("spec, message", [
    (TableSpec("db", "t", (ColumnSpec("a", "int"), ColumnSpec("A", "int"))), "given twice"),
    (TableSpec("db", "t", (ColumnSpec("a", "integr"),)), "column 'a'"),
    (TableSpec("db", "t", (ColumnSpec("a", "int"),), partition_columns=(ColumnSpec("a", "int"),)), "also a data column"),
    (TableSpec("db", "t", (ColumnSpec("a", "int"),), stored_as="feather"), "unknown storage format 'feather'"),
    (TableSpec("db", "t", (ColumnSpec("a", "int"),), provider="parquet", stored_as="orc"), "not both"),
    (TableSpec("db", "t", (ColumnSpec("a", "int"),), provider="parquet", partition_transforms=("b",)), "not a column"),
])
def test_bad_specs_are_refused_naming_what_is_wrong(spec: TableSpec, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        table_struct(spec, None)


def test_partitions_go_under_the_table_escaped_as_hive_escapes() -> None:
    table = table_struct(TableSpec("db", "t", COLUMNS, partition_columns=(ColumnSpec("dt", "string"), ColumnSpec("h", "int"))),
                         "file:///w/t")
    partition = partition_struct(table, PartitionValues((("h", "5"), ("dt", "50%/x"))))
    assert partition.values == ["50%/x", "5"] and partition.sd.location == "file:///w/t/dt=50%25%2Fx/h=5"
    null = partition_struct(table, PartitionValues((("dt", None), ("h", "1")), "file:///elsewhere"))
    assert null.values == ["__HIVE_DEFAULT_PARTITION__", "1"] and null.sd.location == "file:///elsewhere"
    with pytest.raises(ConfigurationError, match="needs a value for 'h'"):
        partition_struct(table, PartitionValues((("dt", "x"),)))


def test_a_database() -> None:
    database = database_struct(DatabaseSpec("Sales", "all sales", "file:///w/sales", (("k", "v"),)))
    assert database == ttypes.Database(name="sales", description="all sales", locationUri="file:///w/sales", parameters={"k": "v"})
