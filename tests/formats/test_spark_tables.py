"""Tables written by Spark with Hive support: detection, and DESCRIBE equal to Spark's own DESCRIBE."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hms_catalog.execution import Session

ALL_TYPES = (
    "b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(10,2), dec38 DECIMAL(38,9), "
    "s STRING, ch CHAR(5), vc VARCHAR(7), bin BINARY, dt DATE, ts TIMESTAMP, "
    "arr ARRAY<INT>, m MAP<STRING,ARRAY<DOUBLE>>, st STRUCT<a:INT,`b c`:STRING,nested:STRUCT<x:DECIMAL(5,1)>>, "
    "deep ARRAY<MAP<STRING,STRUCT<k:BIGINT>>>, `MixedCase` INT"
)
TABLES = {
    "parquet_all": f"CREATE TABLE {{db}}.parquet_all ({ALL_TYPES}) PARTITIONED BY (part STRING, day DATE) STORED AS PARQUET",
    "orc_all": f"CREATE TABLE {{db}}.orc_all ({ALL_TYPES}) STORED AS ORC",
    "text_delimited": "CREATE TABLE {db}.text_delimited (id INT, tags ARRAY<STRING>, attrs MAP<STRING,INT>) "
    "ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' COLLECTION ITEMS TERMINATED BY '|' MAP KEYS TERMINATED BY ':' "
    "STORED AS TEXTFILE",
    "csv_source": "CREATE TABLE {db}.csv_source (id INT, name STRING, price DECIMAL(8,3)) USING csv",
    "parquet_source": "CREATE TABLE {db}.parquet_source (id BIGINT, v STRING, p INT) USING parquet PARTITIONED BY (p)",
    "open_csv": "CREATE TABLE {db}.open_csv (id INT, price DECIMAL(8,3), s STRING) "
    "ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.OpenCSVSerde' STORED AS TEXTFILE",
}
EXPECTED_FILE_FORMATS = {
    "parquet_all": "parquet", "orc_all": "orc", "text_delimited": "text", "csv_source": "csv",
    "parquet_source": "parquet", "open_csv": "csv",
}


@pytest.fixture(scope="module")
def spark_db(spark: Any, metastore: Any) -> Iterator[str]:
    name = "spark_written"
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {name}")
    for table, ddl in TABLES.items():
        spark.sql(f"DROP TABLE IF EXISTS {name}.{table}")
        spark.sql(ddl.format(db=name))
    spark.sql(f"INSERT INTO {name}.parquet_source VALUES (1, 'a', 10), (2, 'b', 20)")
    yield name
    spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")



def spark_describe(spark: Any, name: str) -> list[tuple[str, str]]:
    """Spark's DESCRIBE rows up to its '# Partition Information' section, partition columns included once."""
    rows = []
    for row in spark.sql(f"DESCRIBE TABLE {name}").collect():
        if not row.col_name or row.col_name.startswith("#"):
            break
        rows.append((row.col_name, row.data_type))
    return rows


@pytest.mark.parametrize("table", sorted(TABLES))
def test_describe_matches_spark(spark: Any, spark_db: str, session: Session, table: str) -> None:
    ours = session.run_one(f"DESCRIBE hive.{spark_db}.{table}")
    theirs = spark_describe(spark, f"{spark_db}.{table}")
    assert [(row[0], row[1]) for row in ours.rows] == theirs
    partition_flags = {row[0]: row[3] for row in ours.rows}
    spark_partitions = set(spark.table(f"{spark_db}.{table}").schema.fieldNames()) & {"part", "day", "p"}
    assert {name for name, flag in partition_flags.items() if flag} == spark_partitions


@pytest.mark.parametrize("table", sorted(TABLES))
def test_detection_and_arrow_schema(spark: Any, spark_db: str, session: Session, table: str) -> None:
    handle = session.manager.catalog("hive").table(spark_db, table)
    assert handle.detection.format.value == "HIVE"
    assert handle.detection.file_format == EXPECTED_FILE_FORMATS[table]
    arrow = handle.schema.arrow_schema()
    assert arrow.names == [c.name for c in handle.schema.columns]
    spark_schema = handle.schema.spark_schema()
    assert [f.name.lower() for f in spark_schema.fields] == [f.name.lower() for f in spark.table(f"{spark_db}.{table}").schema]


def test_csv_source_schema_comes_from_spark_parameters(spark_db: str, session: Session) -> None:
    handle = session.manager.catalog("hive").table(spark_db, "csv_source")
    assert handle.thrift.sd.cols[0].type == "array<string>"  # the placeholder Spark leaves in the metastore
    assert [c.name for c in handle.schema.columns] == ["id", "name", "price"]
    assert "spark.sql.sources.schema" in handle.schema.source


def test_open_csv_columns_are_all_strings_as_spark_reads_them(spark_db: str, session: Session) -> None:
    rows = session.run_one(f"DESCRIBE hive.{spark_db}.open_csv").rows
    assert [(r[0], r[1]) for r in rows] == [("id", "string"), ("price", "string"), ("s", "string")]


def test_column_case_is_restored_from_spark(spark_db: str, session: Session) -> None:
    names = [c.name for c in session.manager.catalog("hive").table(spark_db, "orc_all").schema.columns]
    assert "MixedCase" in names


def test_a_cold_describe_of_each_format_is_one_get_table(spark_db: str, session: Session) -> None:
    catalog = session.manager.catalog("hive")
    for table in TABLES:
        before = catalog.metrics()
        session.run_one(f"DESCRIBE hive.{spark_db}.{table}")
        assert catalog.metrics().calls_since(before) == {"get_table_req": 1}, table
        again = catalog.metrics()
        session.run_one(f"DESCRIBE hive.{spark_db}.{table}")
        assert catalog.metrics().calls_since(again) == {}
