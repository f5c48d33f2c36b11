"""Column statistics from the real metastore, after Spark's ANALYZE and after Hive-style writes.

Spark's ``ANALYZE TABLE ... COMPUTE STATISTICS FOR COLUMNS`` keeps what it computes in the table's
properties (``spark.sql.statistics.colStats.<column>.*``) and per partition in
``spark.sql.statistics.numRows``; it writes nothing to the metastore's column statistics, so the
metastore calls answer empty for a table only Spark analyzed. Hive's ANALYZE (and Impala's COMPUTE
STATS) write them with update_table_column_statistics / update_partition_column_statistics, which is how
the second test writes them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hms_catalog.client import MetastoreClient
from hms_catalog.client.hive_thrift import ttypes
from tests.support.hms import Admin


@pytest.fixture(scope="module")
def analyzed(spark: Any) -> Iterator[str]:
    """``column_stats.sales`` (id INT, name STRING, amount DOUBLE, partitioned by p STRING), analyzed by Spark."""
    database = "column_stats"
    spark.sql(f"DROP DATABASE IF EXISTS {database} CASCADE")
    spark.sql(f"CREATE DATABASE {database}")
    spark.sql(f"CREATE TABLE {database}.sales (id INT, name STRING, amount DOUBLE) PARTITIONED BY (p STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {database}.sales PARTITION (p='a') VALUES (1, 'x', 1.5), (2, 'yy', 2.5), (3, NULL, 3.5)")
    spark.sql(f"INSERT INTO {database}.sales PARTITION (p='b') VALUES (4, 'zzz', 4.5)")
    spark.sql(f"ANALYZE TABLE {database}.sales COMPUTE STATISTICS FOR COLUMNS id, name, amount")
    spark.sql(f"ANALYZE TABLE {database}.sales PARTITION (p) COMPUTE STATISTICS")
    yield database
    spark.sql(f"DROP DATABASE IF EXISTS {database} CASCADE")


def test_spark_analyze_leaves_no_metastore_column_statistics(analyzed: str, client: MetastoreClient) -> None:
    assert client.get_table_column_statistics(analyzed, "sales", ["id", "name", "amount"]) == []
    assert client.get_partitions_column_statistics(analyzed, "sales", ["p=a", "p=b"], ["id", "name"]) == {}
    parameters = client.get_table(analyzed, "sales").parameters
    assert parameters["spark.sql.statistics.colStats.id.min"] == "1" and parameters["spark.sql.statistics.numRows"] == "4"
    partitions = client.get_partitions_by_names(analyzed, "sales", ["p=a"])
    assert partitions[0].parameters["spark.sql.statistics.numRows"] == "3"


def _long(column: str, low: int, high: int, distinct: int) -> ttypes.ColumnStatisticsObj:
    data = ttypes.ColumnStatisticsData(longStats=ttypes.LongColumnStatsData(lowValue=low, highValue=high, numNulls=0, numDVs=distinct))
    return ttypes.ColumnStatisticsObj(column, "int", data)


def test_statistics_written_as_hive_writes_them_are_read_back(analyzed: str, client: MetastoreClient, admin: Admin) -> None:
    name = ttypes.ColumnStatisticsObj("name", "string", ttypes.ColumnStatisticsData(
        stringStats=ttypes.StringColumnStatsData(maxColLen=3, avgColLen=2.0, numNulls=1, numDVs=3)))
    table_stats = ttypes.ColumnStatistics(
        statsDesc=ttypes.ColumnStatisticsDesc(isTblLevel=True, dbName=analyzed, tableName="sales"),
        statsObj=[_long("id", 1, 4, 4), name], engine="hive",
    )
    assert admin.pool.call("update_table_column_statistics", table_stats)
    for partition, stats in (("p=a", _long("id", 1, 3, 3)), ("p=b", _long("id", 4, 4, 1))):
        partition_stats = ttypes.ColumnStatistics(
            statsDesc=ttypes.ColumnStatisticsDesc(isTblLevel=False, dbName=analyzed, tableName="sales", partName=partition),
            statsObj=[stats], engine="hive",
        )
        assert admin.pool.call("update_partition_column_statistics", partition_stats)

    read = {s.colName: s for s in client.get_table_column_statistics(analyzed, "sales", ["id", "name", "amount"])}
    assert set(read) == {"id", "name"}  # amount has none
    assert (read["id"].statsData.longStats.lowValue, read["id"].statsData.longStats.highValue) == (1, 4)
    assert read["name"].statsData.stringStats.numNulls == 1 and read["name"].statsData.stringStats.maxColLen == 3

    by_partition = client.get_partitions_column_statistics(analyzed, "sales", ["p=a", "p=b", "p=missing"], ["id", "name"])
    assert set(by_partition) == {"p=a", "p=b"}
    assert [s.statsData.longStats.highValue for s in by_partition["p=a"]] == [3]
    assert [s.statsData.longStats.numDVs for s in by_partition["p=b"]] == [1]
    [accurate] = client.get_partitions_by_names(analyzed, "sales", ["p=a"])
    assert "COLUMN_STATS_ACCURATE" in accurate.parameters  # what a planner reads to trust them

    assert client.metrics().errors == {}
