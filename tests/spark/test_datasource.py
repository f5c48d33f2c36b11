"""The hms data source returns the rows Spark's own Hive reader returns, one Spark partition per split."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog import open_session
from planner import SplitPlan, plan_table
from planner.packing import PackingSettings, pack_splits
from planner.spark.datasource import packing_options
from tests.support.sessions import read_hms

DB = "spark_reads"
ALL_TYPES = (
    "b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(10,2), dec38 DECIMAL(38,9), "
    "s STRING, ch CHAR(5), vc VARCHAR(7), bin BINARY, dt DATE, ts TIMESTAMP, arr ARRAY<INT>, "
    "m MAP<STRING,ARRAY<DOUBLE>>, st STRUCT<a:INT,b:STRING,nested:STRUCT<x:DECIMAL(5,1)>>"
)
ROWS = [
    "(true, 1, 2, 3, 4, 1.5, 2.5, 12.34, 1234567890.123456789, 'hello', 'ab', 'xyz', X'0102', DATE'2024-02-29', "
    "TIMESTAMP'2024-01-01 10:11:12.123456', array(1, NULL, 3), map('k', array(1.0D, NULL)), "
    "named_struct('a', 1, 'b', 'q', 'nested', named_struct('x', 1.5)))",
    "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "(false, -128, -32768, -2147483648, -9223372036854775808, -0.0, 1e300, -99999999.99, 0, '', '', '', X'', DATE'1970-01-01', "
    "TIMESTAMP'1969-12-31 23:59:59', array(), map(), named_struct('a', NULL, 'b', NULL, 'nested', NULL))",
]


def canonical(value: Any) -> Any:
    if hasattr(value, "asDict"):
        return tuple((k, canonical(v)) for k, v in value.asDict().items())
    if isinstance(value, dict):
        return tuple(sorted((canonical(k), canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(canonical(v) for v in value)
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def rows_of(frame: Any) -> Counter[Any]:
    return Counter(canonical(row) for row in frame.collect())


@pytest.fixture(scope="module")
def tables(spark: Any) -> Iterator[str]:
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    values = ", ".join(ROWS)
    spark.sql(f"CREATE TABLE {DB}.parquet_all ({ALL_TYPES}) PARTITIONED BY (part STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.parquet_all PARTITION (part='a') VALUES {values}")
    spark.sql(f"INSERT INTO {DB}.parquet_all PARTITION (part='b') VALUES {ROWS[0]}")
    spark.sql(f"CREATE TABLE {DB}.orc_all ({ALL_TYPES}) STORED AS ORC")
    spark.sql(f"INSERT INTO {DB}.orc_all VALUES {values}")
    spark.sql(
        f"CREATE TABLE {DB}.text_all (i INT, s STRING, dec DECIMAL(10,2), dt DATE, ts TIMESTAMP, b BOOLEAN, "
        "arr ARRAY<STRING>, m MAP<STRING,INT>, st STRUCT<a:INT,b:ARRAY<STRING>>) STORED AS TEXTFILE"
    )
    spark.sql(
        f"INSERT INTO {DB}.text_all VALUES (1, 'a,b', 1.25, DATE'2024-01-02', TIMESTAMP'2024-01-02 03:04:05', true, "
        "array('x', 'y'), map('k1', 1, 'k2', 2), named_struct('a', 7, 'b', array('p', 'q'))), "
        "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), (2, '', 0, DATE'1999-12-31', TIMESTAMP'1999-12-31 23:59:59', false, "
        "array(), map(), named_struct('a', NULL, 'b', array()))"
    )
    spark.sql(f"CREATE TABLE {DB}.lines (n INT, word STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY '|' STORED AS TEXTFILE")
    words = ", ".join(f"({n}, '{'w' * (n % 17)}')" for n in range(2000))
    spark.sql(f"INSERT INTO {DB}.lines VALUES {words}")
    spark.sql(f"CREATE TABLE {DB}.csv_source (id INT, name STRING, price DECIMAL(8,3)) USING csv")
    spark.sql(f"INSERT INTO {DB}.csv_source VALUES (1, 'a', 1.5), (2, NULL, NULL), (3, 'c', 3.25)")
    spark.sql(f"CREATE TABLE {DB}.parquet_source (id BIGINT, v STRING, p INT) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {DB}.parquet_source VALUES (1, 'a', 10), (2, 'b', 20), (3, NULL, NULL)")
    spark.sql(f"CREATE TABLE {DB}.open_csv (id INT, s STRING) "
              "ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.OpenCSVSerde' STORED AS TEXTFILE")
    spark.sql(f"CREATE TABLE {DB}.escaped (a STRING, tags ARRAY<STRING>, n INT) ROW FORMAT DELIMITED FIELDS TERMINATED BY '|' "
              "ESCAPED BY '\\\\' COLLECTION ITEMS TERMINATED BY ',' STORED AS TEXTFILE")
    spark.sql(f"INSERT INTO {DB}.escaped VALUES ('x|y', array('p,q', 'r'), 1), (NULL, NULL, NULL), ('N', array('\\\\N'), 2), "
              "('tab\\tnew\\nline', array(), 3)")
    spark.sql(f"CREATE TABLE {DB}.far_future (id INT, ts TIMESTAMP) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.far_future VALUES (1, TIMESTAMP'9999-12-31 23:59:59.999999'), (2, TIMESTAMP'2262-04-12 00:00:00')")
    yield DB
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


@pytest.fixture
def home(tmp_path: Path, metastore_uri: str) -> Iterator[Path]:
    path = tmp_path / "home"
    session = open_session(path)
    session.run_one(f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}', "
                    "'file.split.min-size'='1', 'file_split_size'='4096')")
    session.manager.close()
    yield path


def read(spark: Any, home: Path, table: str, **options: str) -> Any:
    return read_hms(spark, home, f"hive.{DB}.{table}", **options)


@pytest.mark.parametrize("table", ["parquet_all", "orc_all", "text_all", "lines", "csv_source", "parquet_source", "open_csv",
                                   "escaped", "far_future"])
def test_same_rows_as_sparks_own_reader(spark: Any, tables: str, home: Path, table: str) -> None:
    ours = read(spark, home, table)
    theirs = spark.table(f"{DB}.{table}")
    assert [f.name.lower() for f in ours.schema] == [f.name.lower() for f in theirs.schema]
    assert rows_of(ours) == rows_of(theirs.select(*[f.name for f in theirs.schema]))


def test_one_spark_partition_per_split_and_lines_across_split_boundaries(spark: Any, tables: str, home: Path) -> None:
    session = open_session(home)
    catalog = session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(DB, "lines"))
    session.manager.close()
    assert len(plan.splits) > 3  # 4 KiB splits over the text files: lines cross split boundaries
    alone = read(spark, home, "lines", maxPartitionBytes="1", openCostInBytes="0")  # each split a task of its own
    assert alone.rdd.getNumPartitions() == len(plan.splits)
    assert sorted(alone.collect()) == sorted(read(spark, home, "lines").collect())
    frame = read(spark, home, "lines", **packing_options(spark))
    packed = pack_splits(plan.splits, PackingSettings(min_partitions=spark.sparkContext.defaultParallelism))
    assert frame.rdd.getNumPartitions() == len(packed) < len(plan.splits)
    numbers = [row.n for row in frame.collect()]
    assert sorted(numbers) == list(range(2000))  # every line exactly once


def test_partition_filters_prune_splits_and_rows_stay_right(spark: Any, tables: str, home: Path) -> None:
    session = open_session(home)
    catalog = session.manager.catalog("hive")
    everything = plan_table(catalog, catalog.table(DB, "parquet_all"))
    only_b = plan_table(catalog, catalog.table(DB, "parquet_all"), "part = 'b'")
    session.manager.close()
    frame = read(spark, home, "parquet_all", maxPartitionBytes="1")
    filtered = frame.where("part = 'b'")
    assert frame.rdd.getNumPartitions() == len(everything.splits)
    assert filtered.rdd.getNumPartitions() == len(only_b.splits) < len(everything.splits)
    assert rows_of(filtered) == rows_of(spark.table(f"{DB}.parquet_all").where("part = 'b'"))
    by_option = read(spark, home, "parquet_all", where="part = 'a'")
    assert by_option.count() == 3


def test_column_selection_and_counts_from_footers(spark: Any, tables: str, home: Path) -> None:
    narrowed = read(spark, home, "parquet_all", columns="i,part")
    assert narrowed.columns == ["i", "part"]
    assert rows_of(narrowed) == rows_of(spark.table(f"{DB}.parquet_all").select("i", "part"))
    for table in ("parquet_all", "orc_all", "lines"):
        assert read(spark, home, table, columns="").count() == spark.table(f"{DB}.{table}").count()


def test_reading_an_existing_plan(spark: Any, tables: str, home: Path) -> None:
    session = open_session(home)
    catalog = session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(DB, "orc_all"))
    session.manager.close()
    frame = spark.read.format("hms").option("plan", plan.dumps()).load()
    assert rows_of(frame) == rows_of(spark.table(f"{DB}.orc_all"))
    assert SplitPlan.loads(plan.dumps()).splits == plan.splits


def test_a_file_changed_since_planning_fails_naming_it(spark: Any, tables: str, home: Path, tmp_path: Path) -> None:
    session = open_session(home)
    catalog = session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(DB, "parquet_source"))
    session.manager.close()
    victim = plan.splits[0].path[len("file://"):]
    os.truncate(victim, 3)
    with pytest.raises(Exception, match="changed since it was planned.*REFRESH TABLE"):
        spark.read.format("hms").option("plan", plan.dumps()).load().collect()


def test_a_session_without_python_filter_pushdown_still_reads(spark: Any, tables: str, home: Path) -> None:
    from planner.spark import register

    spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    try:
        register(spark)
        frame = read(spark, home, "parquet_all", where="part = 'b'")
        assert rows_of(frame) == rows_of(spark.table(f"{DB}.parquet_all").where("part = 'b'"))
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
        register(spark)
