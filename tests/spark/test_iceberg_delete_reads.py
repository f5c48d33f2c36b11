"""Iceberg tables with delete files read through the hms source: the rows left after the deletes.

Position deletes are compared with pyiceberg's scan; pyiceberg 0.12 refuses equality deletes, so those
tables are compared with the rows the planner tests compute from what was written (see
tests/planner/test_iceberg_deletes.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from planner.spark import attach_catalogs
from tests.planner.test_iceberg_deletes import SMALL_SPLITS, Deleted, equalities, partitioned, positioned  # noqa: F401
from tests.spark.test_table_formats import arrow_rows, frame_rows
from tests.support.sessions import open_catalog, read_hms


@pytest.fixture
def home(tmp_path: Path, metastore_uri: str) -> Iterator[Path]:
    """A home whose catalog ``hive`` cuts files into 8 KiB splits (several per data file)."""
    path = tmp_path / "home"
    open_catalog(path, metastore_uri, **SMALL_SPLITS).manager.close()
    yield path


def _expected(deleted: Deleted, columns: list[str] | None = None) -> Any:
    rows = pa.Table.from_pylist(deleted.expected, schema=deleted.table.schema().as_arrow())
    return arrow_rows(rows if columns is None else rows.select(columns))


def test_position_deletes_equal_pyicebergs_scan(spark: Any, positioned: Deleted, home: Path, unique_name: str) -> None:  # noqa: F811 - the fixture imported above
    ours = read_hms(spark, home, f"hive.{unique_name}.positioned", maxPartitionBytes="1")
    assert ours.rdd.getNumPartitions() >= 6  # two data files, several splits each, each split a task
    assert frame_rows(ours) == arrow_rows(positioned.table.scan().to_arrow())
    assert read_hms(spark, home, f"hive.{unique_name}.positioned", columns="").count() == len(positioned.expected) == 7491


def test_equality_deletes_equal_the_rule_applied_to_the_rows_written(spark: Any, equalities: Deleted, home: Path,  # noqa: F811 - the fixture imported above
                                                                    unique_name: str) -> None:
    name = f"hive.{unique_name}.equalities"
    assert frame_rows(read_hms(spark, home, name)) == _expected(equalities)
    only_id = read_hms(spark, home, name, columns="id")  # the key columns name and region are read, then dropped
    assert only_id.columns == ["id"]
    assert frame_rows(only_id) == _expected(equalities, ["id"])
    assert read_hms(spark, home, name, columns="").count() == len(equalities.expected)


def test_partitioned_table_with_both_kinds_of_deletes(spark: Any, partitioned: Deleted, home: Path, unique_name: str) -> None:  # noqa: F811 - the fixture imported above
    ours = read_hms(spark, home, f"hive.{unique_name}.partitioned")
    assert frame_rows(ours) == _expected(partitioned)


@pytest.fixture
def sql(spark: Any, home: Path) -> Iterator[Any]:
    """``spark.sql`` resolving the catalog ``hive`` of ``home``, put back afterwards."""
    original = spark.sql
    runner = attach_catalogs(spark, str(home))
    yield spark.sql
    spark.sql = original
    runner.session.manager.close()


def test_sql_count_subtracts_position_deletes(sql: Any, positioned: Deleted, unique_name: str) -> None:  # noqa: F811 - the fixture imported above
    assert sql(f"SELECT count(*) AS n FROM hive.{unique_name}.positioned").collect()[0].n == len(positioned.expected)


def test_sql_filter_reads_the_key_columns_it_does_not_name(sql: Any, equalities: Deleted, unique_name: str) -> None:  # noqa: F811 - the fixture imported above
    us = sql(f"SELECT id FROM hive.{unique_name}.equalities WHERE region = 'us'").collect()
    assert sorted(row.id for row in us) == sorted(r["id"] for r in equalities.expected if r["region"] == "us")
    assert sql(f"SELECT count(*) AS n FROM hive.{unique_name}.equalities").collect()[0].n == len(equalities.expected)
