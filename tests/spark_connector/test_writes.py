"""Writes through the connector: INSERT, INSERT OVERWRITE, CTAS and DataFrameWriterV2 on tables of the
metastore, committed by the service, compared with what Spark's own Hive support writes and reads."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.spark_connector.conftest import CATALOG
from tests.support.hms import Admin

DB = f"wr{os.getpid()}"


@pytest.fixture(scope="module")
def db(spark: Any, connected: str) -> Iterator[str]:
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")
    spark.sql(f"CREATE DATABASE spark_catalog.{DB}")
    yield DB
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")


def _rows(spark: Any, table: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(row) for row in spark.table(table).collect()), key=repr)


def _partitions(spark: Any, table: str) -> list[str]:
    return sorted(row[0] for row in spark.sql(f"SHOW PARTITIONS {table}").collect())


def _location(admin: Admin, table: str) -> Path:
    struct = admin.pool.call("get_table", DB, table)
    return Path(urlsplit(struct.sd.location).path)


def test_insert_into_a_hive_parquet_table_is_read_by_sparks_own_hive_reader(spark: Any, db: str, admin: Admin) -> None:
    spark.sql(f"CREATE TABLE spark_catalog.{db}.sales (id INT, amount DECIMAL(10,2), dt STRING) PARTITIONED BY (dt) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {CATALOG}.{db}.sales VALUES (1, 1.50, '2024-01-01'), (2, 2.25, '2024-01-02'), (3, NULL, '2024-01-02')")
    spark.sql(f"INSERT INTO {CATALOG}.{db}.sales PARTITION (dt='50%') VALUES (4, 4.00)")
    own = _rows(spark, f"spark_catalog.{db}.sales")
    assert own == _rows(spark, f"{CATALOG}.{db}.sales")
    assert len(own) == 4
    assert _partitions(spark, f"spark_catalog.{db}.sales") == ["dt=2024-01-01", "dt=2024-01-02", "dt=50%25"]
    assert (_location(admin, "sales") / "dt=50%25").is_dir()
