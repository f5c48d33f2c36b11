"""Iceberg and Hudi tables through the native connector: the same rows as their own libraries read, and a
clear error where the JVM side cannot read a table yet."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.planner.test_hudi_merge import unzip_table
from tests.planner.test_iceberg_deletes import equalities, positioned  # noqa: F401 - Iceberg tables with deletes
from tests.planner.test_iceberg_hudi_planning import trips  # noqa: F401 - a Hudi copy-on-write table
from tests.spark.test_table_formats import MOR_FIXTURES, arrow_rows, evolved, frame_rows  # noqa: F401
from tests.spark_connector.conftest import service_plan
from tests.support.hudi_tables import hive_sync_table
from tests.support.service import Server
from tests.support.spark_settings import spark_settings


def test_iceberg_reads_follow_renames_by_field_id(spark: Any, connected: str, evolved: Any,  # noqa: F811
                                                  unique_name: str) -> None:
    ours = spark.sql(f"SELECT * FROM {connected}.{unique_name}.evolved")
    assert ours.columns == ["id", "label", "at", "score"]
    assert frame_rows(ours) == arrow_rows(evolved.scan().to_arrow())
    assert "Reader: parquet" in ours._jdf.queryExecution().executedPlan().toString()


def test_iceberg_position_deletes_are_applied_in_the_jvm(spark: Any, connected: str, positioned: Any,  # noqa: F811
                                                          unique_name: str) -> None:
    frame = spark.sql(f"SELECT * FROM {connected}.{unique_name}.positioned")
    plan = frame._jdf.queryExecution().executedPlan().toString()
    assert "Reader: parquet" in plan and "IcebergDeletes: 2 files" in plan
    assert frame_rows(frame) == arrow_rows(positioned.table.scan().to_arrow())
    counted = spark.sql(f"SELECT count(*) FROM {connected}.{unique_name}.positioned WHERE id >= 4000").collect()[0][0]
    assert counted == sum(1 for row in positioned.expected if row["id"] >= 4000)
    names = spark.sql(f"SELECT name FROM {connected}.{unique_name}.positioned").collect()
    assert sorted(row.name for row in names) == sorted(row["name"] for row in positioned.expected)


def test_iceberg_position_deletes_across_mid_file_splits(spark: Any, tiny_splits: str, positioned: Any,  # noqa: F811
                                                         unique_name: str) -> None:
    with spark_settings(spark, {"spark.sql.files.maxPartitionBytes": "8192", "spark.sql.files.openCostInBytes": "0"}):
        frame = spark.sql(f"SELECT id FROM {tiny_splits}.{unique_name}.positioned")
        assert frame.rdd.getNumPartitions() > 2  # splits of one data file read by several tasks
        assert sorted(row.id for row in frame.collect()) == sorted(row["id"] for row in positioned.expected)
    # packed as Spark packs files, several splits of a data file in one task: each split's deletes apply once
    frame = spark.sql(f"SELECT id FROM {tiny_splits}.{unique_name}.positioned")
    assert frame.rdd.getNumPartitions() <= 2
    assert sorted(row.id for row in frame.collect()) == sorted(row["id"] for row in positioned.expected)


def test_iceberg_equality_deletes_are_applied_in_the_jvm(spark: Any, connected: str, equalities: Any,  # noqa: F811
                                                         unique_name: str) -> None:
    frame = spark.sql(f"SELECT * FROM {connected}.{unique_name}.{equalities.name}")
    assert "Reader: parquet" in frame._jdf.queryExecution().executedPlan().toString()
    # pyiceberg refuses equality deletes: the fixture's rows are the deletes applied by Iceberg's rule
    expected = Counter((row["id"], row["name"], row["region"]) for row in equalities.expected)
    assert Counter((row.id, row.name, row.region) for row in frame.collect()) == expected
    only_id = spark.sql(f"SELECT id FROM {connected}.{unique_name}.{equalities.name}").collect()  # keys read, then dropped
    assert sorted(row.id for row in only_id) == sorted(row["id"] for row in equalities.expected)


def test_hudi_copy_on_write_equals_hudi_rs(spark: Any, connected: str, trips: str) -> None:  # noqa: F811
    import hudi

    location = spark.sql(f"DESCRIBE FORMATTED spark_catalog.{trips}.trips").where("col_name = 'Location'").collect()[0][1]
    theirs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(location).build().read())
    ours = spark.sql(f"SELECT * FROM {connected}.{trips}.trips")
    assert frame_rows(ours) == arrow_rows(theirs.select(ours.columns))


@pytest.mark.parametrize("archive", MOR_FIXTURES, ids=lambda p: p.stem)
def test_merge_on_read_read_optimized_and_snapshot_reads_equal_hudi_rs(
        spark: Any, connected: str, connector_service: Server, archive: Path, admin: Any, unique_name: str,
        tmp_path: Path) -> None:
    import hudi

    root = unzip_table(archive, tmp_path)
    builder = hudi.HudiTableBuilder.from_base_uri(str(root))
    theirs_table = builder.with_hudi_option(str(hudi.HudiReadConfig.USE_READ_OPTIMIZED_MODE.value), "true").build()
    keys = [(f.name, "string") for f in theirs_table.get_partition_schema()]
    admin.create_database(unique_name)
    admin.pool.call("create_table", hive_sync_table(unique_name, "t_ro", root, [], partition_keys=keys))
    admin.pool.call("create_table", hive_sync_table(unique_name, "t_rt", root, [], partition_keys=keys, realtime=True))
    ours = spark.sql(f"SELECT * FROM {connected}.{unique_name}.t_ro")
    data_columns = [c for c in ours.columns if c not in dict(keys)]
    theirs = pa.Table.from_batches(theirs_table.read(), schema=theirs_table.get_schema_with_meta_fields()).select(data_columns)
    assert frame_rows(ours.select(*data_columns)) == frame_rows(spark.createDataFrame(theirs))
    snapshot = service_plan(connector_service, connected, unique_name, "t_rt")
    rt = spark.sql(f"SELECT * FROM {connected}.{unique_name}.t_rt")
    merged = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(str(root)).build().read())
    assert frame_rows(rt.select(*data_columns)) == frame_rows(spark.createDataFrame(merged.select(data_columns)))
    reader = "Reader: python" if any(split.log_files for split in snapshot.splits) else "Reader: parquet"
    assert reader in rt._jdf.queryExecution().executedPlan().toString()
