"""Tables for the planner tests, written by Spark with Hive support (once per module that asks)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

SPARK_DB = "planner_spark"


@pytest.fixture(scope="session")
def spark_tables(spark: Any) -> Iterator[str]:
    """``sales`` (dt string, region string), ``events`` (day date, hr int, with NULL and odd values)."""
    spark.sql(f"DROP DATABASE IF EXISTS {SPARK_DB} CASCADE")
    spark.sql(f"CREATE DATABASE {SPARK_DB}")
    spark.sql(f"CREATE TABLE {SPARK_DB}.sales (id BIGINT, amount DECIMAL(10,2)) "
              "PARTITIONED BY (dt STRING, region STRING) STORED AS PARQUET")
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    rows = ", ".join(
        f"({i}, {i}.25, '2024-01-0{1 + i % 4}', '{['eu', 'us', 'apac'][i % 3]}')" for i in range(24)
    )
    spark.sql(f"INSERT INTO {SPARK_DB}.sales PARTITION (dt, region) SELECT * FROM VALUES {rows}")
    spark.sql(f"CREATE TABLE {SPARK_DB}.events (id INT, name STRING) PARTITIONED BY (day DATE, hr INT) STORED AS PARQUET")
    spark.sql(
        f"INSERT INTO {SPARK_DB}.events PARTITION (day, hr) SELECT * FROM VALUES "
        "(1, 'a', DATE'2024-03-01', 1), (2, 'b', DATE'2024-03-01', 13), (3, 'c', DATE'2024-03-02', 2), "
        "(4, 'd', DATE'2024-03-10', NULL), (5, 'e', NULL, 5)"
    )
    spark.sql(f"CREATE TABLE {SPARK_DB}.labels (id INT) PARTITIONED BY (label STRING) STORED AS PARQUET")
    spark.sql(
        f"INSERT INTO {SPARK_DB}.labels PARTITION (label) SELECT * FROM VALUES (1, 'a/b'), (2, 'x y'), (3, 'p=q'), (4, '100%')"
    )
    yield SPARK_DB
    spark.sql(f"DROP DATABASE IF EXISTS {SPARK_DB} CASCADE")


