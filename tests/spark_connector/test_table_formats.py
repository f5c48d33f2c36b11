"""Iceberg and Hudi tables through the native connector: the same rows as their own libraries read, and a
clear error where the JVM side cannot read a table yet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from planner.plan import SplitPlan
from tests.planner.test_iceberg_deletes import positioned  # noqa: F401 - an Iceberg table with position deletes
from tests.planner.test_iceberg_hudi_planning import trips  # noqa: F401 - a Hudi copy-on-write table
from tests.spark.test_table_formats import MOR_FIXTURES, arrow_rows, evolved, frame_rows  # noqa: F401
from tests.support.hudi_tables import hive_sync_table
from tests.support.service import Server


def test_iceberg_reads_follow_renames_by_field_id(spark: Any, connected: str, evolved: Any,  # noqa: F811
                                                  unique_name: str) -> None:
    ours = spark.sql(f"SELECT * FROM {connected}.{unique_name}.evolved")
    assert ours.columns == ["id", "label", "at", "score"]
    assert frame_rows(ours) == arrow_rows(evolved.scan().to_arrow())
    assert "Reader: parquet" in ours._jdf.queryExecution().executedPlan().toString()


def test_iceberg_delete_files_are_refused_with_the_reason(spark: Any, connected: str, positioned: Any,  # noqa: F811
                                                          unique_name: str) -> None:
    with pytest.raises(Exception, match="cannot read .*positioned yet: .*Iceberg delete files"):
        spark.sql(f"SELECT * FROM {connected}.{unique_name}.positioned").collect()


def test_hudi_copy_on_write_equals_hudi_rs(spark: Any, connected: str, trips: str) -> None:  # noqa: F811
    import hudi

    location = spark.sql(f"DESCRIBE FORMATTED spark_catalog.{trips}.trips").where("col_name = 'Location'").collect()[0][1]
    theirs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(location).build().read())
    ours = spark.sql(f"SELECT * FROM {connected}.{trips}.trips")
    assert frame_rows(ours) == arrow_rows(theirs.select(ours.columns))


@pytest.mark.parametrize("archive", MOR_FIXTURES, ids=lambda p: p.stem)
def test_merge_on_read_read_optimized_equals_hudi_rs_and_snapshots_are_refused(
        spark: Any, connected: str, connector_service: Server, archive: Path, admin: Any, unique_name: str,
        tmp_path: Path) -> None:
    import zipfile

    import hudi

    with zipfile.ZipFile(archive) as bundle:
        bundle.extractall(tmp_path)
    root = next(p.parent.parent for p in tmp_path.rglob(".hoodie/hoodie.properties")
                if "__MACOSX" not in p.parts and ".hoodie" not in p.parent.parent.parts)
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
    client = connector_service.client()
    try:
        snapshot = SplitPlan.loads(client.plan(connected, unique_name, "t_rt"))
    finally:
        client.close()
    if any(split.log_files for split in snapshot.splits):
        with pytest.raises(Exception, match="Hudi merge-on-read snapshot"):
            spark.sql(f"SELECT * FROM {connected}.{unique_name}.t_rt").collect()
    else:  # every file slice compacted: the snapshot is its base files
        rt = spark.sql(f"SELECT * FROM {connected}.{unique_name}.t_rt")
        assert frame_rows(rt.select(*data_columns)) == frame_rows(spark.createDataFrame(theirs))
