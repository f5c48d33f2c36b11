"""Snapshot (``_rt``) reads of Hudi merge-on-read tables through the hms source equal hudi-rs's own reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hms_catalog import open_session
from hms_catalog.types import from_arrow_type, to_hive_string
from planner import plan_table
from planner.packing import PackingSettings, pack_splits
from planner.spark import attach_catalogs
from tests.formats.test_hudi_tables import FIXTURES
from tests.planner.test_hudi_merge import TRIPS, hudi_table, unzip_table
from tests.spark.test_datasource import rows_of
from tests.spark.test_table_formats import frame_rows, home  # noqa: F401 - the catalog home fixture
from tests.support.hms import Admin
from tests.support.hudi_tables import hive_sync_table

MOR_FIXTURES = sorted(FIXTURES.glob("*mor*.zip")) if FIXTURES.is_dir() else []


def register_snapshot_table(admin: Admin, database: str, root: Path, table: Any) -> None:
    """``t_rt`` as Hudi's hive sync registers it, partition keys typed as the table's partition fields."""
    keys = [(f.name, to_hive_string(from_arrow_type(f.type))) for f in table.get_partition_schema()]
    admin.create_database(database)
    admin.pool.call("create_table", hive_sync_table(database, "t_rt", root, [], partition_keys=keys, realtime=True))


def snapshot_of(table: Any) -> pa.Table:
    """hudi-rs's own snapshot read of the whole table."""
    return pa.Table.from_batches(table.read())


def test_the_merge_on_read_fixtures_are_present() -> None:
    if not MOR_FIXTURES:
        pytest.skip(f"no merge-on-read Hudi fixtures at {FIXTURES}: the snapshot read comparisons did not run")
    assert len(MOR_FIXTURES) == 4


@pytest.mark.parametrize("archive", MOR_FIXTURES, ids=lambda p: p.stem)
def test_snapshot_reads_equal_hudi_rs(spark: Any, archive: Path, admin: Admin, unique_name: str, home: Path,  # noqa: F811
                                      tmp_path: Path) -> None:
    root = unzip_table(archive, tmp_path)
    table = hudi_table(root)
    register_snapshot_table(admin, unique_name, root, table)
    ours = spark.read.format("hms").option("home", str(home)).load(f"hive.{unique_name}.t_rt")
    theirs = snapshot_of(table)
    assert sorted(ours.columns) == sorted(theirs.column_names)
    # Spark turns both sides into rows the same way (structs in field order, maps as dicts).
    assert frame_rows(ours) == frame_rows(spark.createDataFrame(theirs.select(ours.columns)))
    session = open_session(home)
    catalog = session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(unique_name, "t_rt"))
    session.manager.close()
    packed = pack_splits(plan.splits, PackingSettings(min_partitions=spark.sparkContext.defaultParallelism))
    assert ours.rdd.getNumPartitions() == len(packed)
    assert sum(1 for s in plan.splits if s.log_files) == sum(1 for s in table.get_file_slices() if s.has_log_files())


@pytest.fixture
def trips_rt(spark: Any, admin: Admin, unique_name: str, home: Path, tmp_path: Path) -> Iterator[tuple[str, Any]]:  # noqa: F811
    """The trips table registered as ``t_rt``, SELECT attached to the session, and hudi-rs's rows as a view."""
    root = unzip_table(TRIPS, tmp_path)
    table = hudi_table(root)
    register_snapshot_table(admin, unique_name, root, table)
    spark.createDataFrame(snapshot_of(table)).createOrReplaceTempView(f"{unique_name}_theirs")
    original = spark.sql
    runner = attach_catalogs(spark, str(home))
    yield unique_name, original
    spark.sql = original
    runner.session.manager.close()
    original(f"DROP VIEW IF EXISTS {unique_name}_theirs")


@pytest.mark.parametrize("query", [
    "SELECT rider, fare, city FROM {t} WHERE city = 'san_francisco'",
    "SELECT city, count(*) AS n FROM {t} GROUP BY city",
    "SELECT count(*) AS n FROM {t}",
    "SELECT * FROM {t}",
])
def test_select_reads_the_merged_rows(spark: Any, trips_rt: tuple[str, Any], query: str) -> None:
    database, unattached = trips_rt
    ours = spark.sql(query.format(t=f"hive.{database}.t_rt"))
    theirs = unattached(query.format(t=f"{database}_theirs"))
    assert rows_of(ours.select(*theirs.columns)) == rows_of(theirs)
    if "WHERE" in query:
        assert 25.0 in {row.fare for row in ours.collect()}  # the trip updated by the log, not its base file value
