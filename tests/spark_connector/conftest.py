"""A catalog service over the test metastore, and its catalog ``conn`` registered in the test session's Spark
through the native connector (the jar is on the session's ``spark.jars``)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from hms_catalog.client.hive_thrift import ttypes
from planner.plan import SplitPlan
from spark_connector import catalog_conf
from tests.support.hms import Admin
from tests.support.service import Server, served

DB = f"conn{os.getpid()}"
T = TypeVar("T")
CATALOG = "conn"  # the service's catalog and, registered under the same name, the Spark catalog


@pytest.fixture(scope="package")
def connector_service(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str) -> Iterator[Server]:
    with served(tmp_path_factory.mktemp("connector") / "home") as running:
        client = running.client()
        client.create_catalog(CATALOG, {"type": "hms", "hive.metastore.uris": metastore_uri})
        client.close()
        yield running


def service_plan(service: Server, catalog: str, database: str, table: str, where: str | None = None) -> SplitPlan:
    """The split plan the service makes of a table (what the connector's scan reads)."""
    client = service.client()
    try:
        return SplitPlan.loads(client.plan(catalog, database, table, where))
    finally:
        client.close()


def heard(observe: Callable[[], T], done: Callable[[T], bool], failure: str, *, every: float = 0.2) -> T:
    """What ``observe()`` answers once ``done`` holds of it, asked again every ``every`` seconds: a running driver
    hears of a change on the service's change feed a moment after the change was made. Fails with ``failure``
    after 30 s."""
    deadline = time.monotonic() + 30
    while not done(seen := observe()):
        assert time.monotonic() < deadline, failure
        time.sleep(every)
    return seen


@contextlib.contextmanager
def registered(spark: Any, service: Server, name: str, *, token: str | None = None, remote_name: str | None = None) -> Iterator[str]:
    """The service's catalog ``remote_name`` (default ``name``) registered in ``spark`` as ``name``, with the
    service's token unless ``token`` says otherwise, until the block ends."""
    settings = catalog_conf(name, service.url, token or service.token, remote_name=remote_name)
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield name
    finally:
        for key in settings:
            spark.conf.unset(key)


@pytest.fixture(scope="package")
def connected(spark: Any, connector_service: Server) -> Iterator[str]:
    """The Spark name of the service's catalog ``conn``; unregistered afterwards."""
    with registered(spark, connector_service, CATALOG) as name:
        yield name


@pytest.fixture(scope="package")
def written(spark: Any, admin: Admin, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database of tables written by Spark with Hive support, one per storage the connector reads."""
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    columns = ("id INT, name STRING, amount DECIMAL(12,3), ratio DOUBLE, flag BOOLEAN, born DATE, ts TIMESTAMP, "
               "big BIGINT, small SMALLINT, tiny TINYINT, f FLOAT, bin BINARY, code VARCHAR(5), "
               "tags ARRAY<STRING>, attrs MAP<STRING, INT>, point STRUCT<x: DOUBLE, label: STRING>")
    rows = [
        "(1, 'ann', 12.345, 0.5, true, DATE'2024-01-01', TIMESTAMP'2024-01-01 10:00:00', 10000000000, 300, 7, 1.25, "
        "X'00FF10', 'ab', array('a', 'b'), map('k', 1), named_struct('x', 1.5, 'label', 'p'))",
        "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
        "(3, 'with | pipe, comma', -0.001, -1e10, false, DATE'1999-12-31', TIMESTAMP'1999-12-31 23:59:59.123456', -5, "
        "-32768, -128, -0.5, X'', 'x\\\\y', array(), map(), named_struct('x', CAST(NULL AS DOUBLE), 'label', NULL))",
    ]
    for name, storage in [("pq", "STORED AS PARQUET"), ("orc", "STORED AS ORC")]:
        spark.sql(f"CREATE TABLE {DB}.{name} ({columns}) PARTITIONED BY (dt STRING, hr INT) {storage}")
        spark.sql(f"INSERT INTO {DB}.{name} PARTITION (dt='2024-01-01', hr=1) VALUES {', '.join(rows)}")
        spark.sql(f"INSERT INTO {DB}.{name} PARTITION (dt='2024-01-02', hr=2) VALUES {rows[0]}")
    spark.sql(f"CREATE TABLE {DB}.txt ({columns}) PARTITIONED BY (dt STRING) "
              "ROW FORMAT DELIMITED FIELDS TERMINATED BY '|' ESCAPED BY '\\\\' COLLECTION ITEMS TERMINATED BY ',' "
              "MAP KEYS TERMINATED BY ':' NULL DEFINED AS 'NIL' STORED AS TEXTFILE")
    spark.sql(f"INSERT INTO {DB}.txt PARTITION (dt='a') VALUES {', '.join(rows)}")
    spark.sql(f"CREATE TABLE {DB}.csv (id STRING, name STRING, note STRING) "
              "ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.OpenCSVSerde' "
              "WITH SERDEPROPERTIES ('separatorChar' = ';', 'quoteChar' = '\"') STORED AS TEXTFILE")
    spark.sql(f"INSERT INTO {DB}.csv VALUES ('1', 'a;b', 'quoted \"x\"'), ('2', '', NULL)")
    # Header lines are skipped per file, as Hive, Trino and Impala read them (Spark's own Hive reader does not)
    headed = tmp_path_factory.mktemp("headed")
    (headed / "part-0.csv").write_text("id,name\n1,a\n2,b\n")
    (headed / "part-1.csv").write_text("id,name\n3,c\n")
    spark.sql(f"CREATE EXTERNAL TABLE {DB}.headed (id INT, name STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
              f"STORED AS TEXTFILE LOCATION '{headed.as_uri()}' TBLPROPERTIES ('skip.header.line.count' = '1')")
    spark.sql(f"CREATE TABLE {DB}.ds_csv (id INT, name STRING, born DATE, p INT) USING csv "
              "OPTIONS (header 'true', sep ';', nullValue 'NIL') PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {DB}.ds_csv VALUES (1, 'a;b', DATE'2024-01-01', 1), (2, NULL, NULL, 1), (3, 'c', NULL, 2)")
    spark.sql(f"CREATE TABLE {DB}.ds_json (id INT, point STRUCT<x: DOUBLE, tags: ARRAY<STRING>>, p STRING) USING json "
              "PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {DB}.ds_json VALUES (1, named_struct('x', 1.5, 'tags', array('a')), 'x'), (2, NULL, 'y')")
    # Hive's JSON serde is not among Spark's jars (Spark cannot read this table itself): hand-written JSON lines
    hive_json = tmp_path_factory.mktemp("hive_json")
    (hive_json / "part-0.json").write_text('{"id": 1, "name": "a", "point": {"x": 1.5, "tags": ["t"]}}\n'
                                           '{"id": 2, "name": null}\n{"id": 3, "extra": true, "name": "c"}\n')
    columns_json = [ttypes.FieldSchema("id", "int", ""), ttypes.FieldSchema("name", "string", ""),
                    ttypes.FieldSchema("point", "struct<x:double,tags:array<string>>", "")]
    sd = ttypes.StorageDescriptor(
        cols=columns_json, location=hive_json.as_uri(), inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat", numBuckets=-1, bucketCols=[], sortCols=[],
        serdeInfo=ttypes.SerDeInfo(serializationLib="org.apache.hive.hcatalog.data.JsonSerDe", parameters={}), parameters={})
    admin.pool.call("create_table", ttypes.Table(tableName="hive_json", dbName=DB, owner="test", sd=sd, partitionKeys=[],
                                                 parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"))
    spark.sql(f"CREATE TABLE {DB}.ds (id BIGINT, label STRING, p INT) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {DB}.ds VALUES (1, 'one', 1), (2, 'two', 2), (3, NULL, NULL)")
    yield DB
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


@contextlib.contextmanager
def split_catalog(spark: Any, service: Server, metastore_uri: str, name: str, split_size: int) -> Iterator[str]:
    """A catalog ``name`` of the same metastore whose splits are ``split_size`` bytes, registered in Spark."""
    client = service.client()
    client.create_catalog(name, {"type": "hms", "hive.metastore.uris": metastore_uri,
                                 "file_split_size": str(split_size), "file.split.min-size": str(split_size)})
    client.close()
    with registered(spark, service, name):
        yield name


@pytest.fixture(scope="package")
def small_splits(spark: Any, connector_service: Server, metastore_uri: str) -> Iterator[str]:
    """64 KiB splits: the large files below are read in several splits from mid-file offsets."""
    with split_catalog(spark, connector_service, metastore_uri, "connsmall", 65536) as name:
        yield name


@pytest.fixture(scope="package")
def tiny_splits(spark: Any, connector_service: Server, metastore_uri: str) -> Iterator[str]:
    """8 KiB splits: each row group of a small Parquet file is a split of its own."""
    with split_catalog(spark, connector_service, metastore_uri, "conntiny", 8192) as name:
        yield name


@pytest.fixture(scope="package")
def large_files(spark: Any, written: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """One file per table, each of several 64 KiB splits: Parquet and ORC by pyarrow, text by pyarrow's CSV writer."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv
    import pyarrow.orc as pa_orc
    import pyarrow.parquet as pq

    rows = 60_000
    table = pa.table({
        "id": pa.array(range(rows), pa.int64()),
        "label": pa.array([f"row-{i:07d}-" + "x" * (i % 13) for i in range(rows)]),
        "score": pa.array([i * 0.25 for i in range(rows)]),
    })
    ddl = "id BIGINT, label STRING, score DOUBLE"
    for name, write, storage in [
        ("big_pq", lambda path: pq.write_table(table, path, row_group_size=5_000, compression="none"), "STORED AS PARQUET"),
        ("big_orc", lambda path: pa_orc.write_table(table, path, stripe_size=64 * 1024, compression="uncompressed"),
         "STORED AS ORC"),
        ("big_txt", lambda path: pa_csv.write_csv(table, path, pa_csv.WriteOptions(include_header=False, quoting_style="none")),
         "ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE"),
    ]:
        folder = tmp_path_factory.mktemp(name)
        write(str(folder / "data"))
        spark.sql(f"CREATE EXTERNAL TABLE {written}.{name} ({ddl}) {storage} LOCATION '{folder.as_uri()}'")
    return written
