"""Plan statistics from what tables keep: Spark's ANALYZE results, Hive's basic and column statistics."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hms_catalog.client.hive_thrift import ttypes
from planner.statistics import ColumnStatistics, PartitionFacts, hive_statistics, merge_columns, partition_key
from tests.support.fake_metastore import FakeMetastore

ACCURATE = json.dumps({"BASIC_STATS": "true", "COLUMN_STATS": {"id": "true"}})


def table(parameters: dict[str, str], keys: tuple[str, ...] = ("p",)) -> ttypes.Table:
    return ttypes.Table(dbName="db", tableName="t", parameters=parameters,
                        partitionKeys=[ttypes.FieldSchema(k, "string", "") for k in keys],
                        sd=ttypes.StorageDescriptor(cols=[ttypes.FieldSchema("id", "int", "")]))


def facts(value: str | None, parameters: dict[str, str], files: int = 1, size: int = 100) -> PartitionFacts:
    return PartitionFacts((("p", value),), parameters, files, size)


class Unreachable:
    """A client no statistics call should reach."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"unexpected metastore call {name}")


def test_row_counts_sum_over_partitions_and_only_verified_ones_are_exact() -> None:
    partitions = [
        facts("a", {"numRows": "10", "COLUMN_STATS_ACCURATE": ACCURATE, "numFiles": "1", "totalSize": "100"}),
        facts("b", {"numRows": "5", "COLUMN_STATS_ACCURATE": ACCURATE, "numFiles": "2", "totalSize": "100"}),  # files changed
        facts(None, {"numRows": "7"}),  # positive, trusted as Spark trusts it, but not marked accurate
    ]
    found = hive_statistics(Unreachable(), table({}), [p for p in partitions], all_partitions=False)  # type: ignore[arg-type]
    assert found.row_count == 22 and found.partition_rows == {"a": 10, "b": 5, "\x01": 7}
    assert found.exact_rows == {"a": 10}
    assert partition_key((("p", "x"), ("q", None))) == "x\x00\x01"


@pytest.mark.parametrize("parameters", [{}, {"numRows": "0"}, {"numRows": "-1", "COLUMN_STATS_ACCURATE": ACCURATE}])
def test_uncounted_partitions_leave_the_count_unknown(parameters: dict[str, str]) -> None:
    found = hive_statistics(Unreachable(), table({}), [facts("a", {"numRows": "3"}), facts("b", parameters)],  # type: ignore[arg-type]
                            all_partitions=False)
    assert found.row_count is None and found.partition_rows == {"a": 3}


def test_an_empty_partition_counted_by_hive_is_zero_rows() -> None:
    accurate_empty = {"numRows": "0", "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}', "numFiles": "0", "totalSize": "0"}
    found = hive_statistics(Unreachable(), table({}), [facts("a", accurate_empty, 0, 0)], all_partitions=True)  # type: ignore[arg-type]
    assert found.row_count == 0 and found.exact_rows == {"a": 0}


def test_sparks_own_statistics_come_first() -> None:
    spark_stats = {"spark.sql.statistics.numRows": "99", "spark.sql.statistics.colStats.id.distinctCount": "42",
                   "spark.sql.statistics.colStats.id.min": "1", "spark.sql.statistics.colStats.id.max": "77",
                   "spark.sql.statistics.colStats.id.nullCount": "0", "spark.sql.statistics.colStats.id.version": "2"}
    found = hive_statistics(Unreachable(), table(spark_stats, keys=()), [PartitionFacts((), spark_stats, 1, 10)],  # type: ignore[arg-type]
                            all_partitions=True)
    assert found.row_count == 99
    assert found.columns == {"id": ColumnStatistics(distinct_count=42, null_count=0, min="1", max="77")}


def test_hive_column_statistics_are_fetched_in_batches_for_marked_columns_only() -> None:
    metastore = FakeMetastore()
    names = [f"p={i}" for i in range(250)]

    def stats(low: int, high: int) -> ttypes.ColumnStatisticsObj:
        longs = ttypes.LongColumnStatsData(lowValue=low, highValue=high, numNulls=1, numDVs=high - low)
        data = ttypes.ColumnStatisticsData(longStats=longs)
        return ttypes.ColumnStatisticsObj(colName="id", colType="int", statsData=data)

    for i, name in enumerate(names):
        metastore.set_statistics("db", "t", [stats(i, i + 10)], partition=name)
    partitions = [facts(str(i), {"COLUMN_STATS_ACCURATE": ACCURATE}) for i in range(250)]
    found = hive_statistics(metastore, table({}), partitions, all_partitions=True)  # type: ignore[arg-type]
    assert found.columns["id"] == ColumnStatistics(distinct_count=10, null_count=250, min="0", max="259")
    asked = [args for method, args in metastore.requests if method == "get_partitions_statistics_req"]
    assert [len(args[2]) for args in asked] == [100, 100, 50] and all(args[3] == ["id"] for args in asked)
    unmarked = [facts(str(i), {"COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}'}) for i in range(3)]
    assert hive_statistics(Unreachable(), table({}), unmarked, all_partitions=True).columns == {}  # type: ignore[arg-type]


def test_merging_partitions_keeps_what_is_known_of_all() -> None:
    merged = merge_columns([ColumnStatistics(3, 1, "9", "20"), ColumnStatistics(5, 0, "10", "100")])
    assert merged == ColumnStatistics(distinct_count=5, null_count=1, min="9", max="100")
    assert merge_columns([ColumnStatistics(3, 1, "2024-01-02", "2024-02-01"), ColumnStatistics(None, None, "2023-12-31", None)]) == \
        ColumnStatistics(min="2023-12-31")
