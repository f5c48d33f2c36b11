"""Hudi merge-on-read snapshot reads: planning file slices with their logs, and merging one slice (hudi-rs).

The tables are the shared Spark-written fixtures; the merged rows are compared with hudi-rs's own reads.
"""

from __future__ import annotations

import shutil
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hms_catalog.errors import PlanningError, UnsupportedTableError
from hms_catalog.execution import Session
from hms_catalog.formats.schema import Column, TableSchema
from hms_catalog.types import DoubleType, StringType, from_arrow_schema
from planner import Split, SplitPlan, plan_table
from planner.hudi_planner import LOG_ONLY
from planner.readers import FileChangedError, read_split
from tests.formats.test_hudi_tables import FIXTURES
from tests.support.hms import Admin
from tests.support.hudi_tables import hive_sync_table

TRIPS = FIXTURES / "quickstart_trips_table_mor_avro_v6_trips_8i1u.zip"
FIRST_COMMIT, SECOND_COMMIT = "20250331030642808", "20250331030645735"  # the second one updates one trip via a log


def unzip_table(archive: Path, into: Path) -> Path:
    """The root of the one Hudi table in ``archive`` (not v9's metadata table under ``.hoodie``)."""
    if not archive.exists():
        pytest.skip(f"shared Hudi fixture {archive} not found: the merge-on-read snapshot tests did not run")
    with zipfile.ZipFile(archive) as bundle:
        bundle.extractall(into)
    return next(p.parent.parent for p in into.rglob(".hoodie/hoodie.properties")
                if "__MACOSX" not in p.parts and ".hoodie" not in p.parent.parent.parts)


def hudi_table(root: Path) -> Any:
    import hudi

    return hudi.HudiTableBuilder.from_base_uri(str(root)).build()


def logged_split(table: Any, snapshot: str) -> tuple[Split, Any]:
    """A split of the table's slice with log files, as the planner makes it, and that slice."""
    piece = next(s for s in table.get_file_slices() if s.has_log_files())
    base = table.base_url.rstrip("/")
    values = tuple(part.split("=", 1) for part in piece.partition_path.split("/"))
    split = Split(f"{base}/{piece.base_file_relative_path()}", 0, piece.base_file_size, piece.base_file_size, 0, (),
                  tuple((k, v) for k, v in values), "parquet",
                  log_files=tuple(f"{base}/{log}" for log in piece.log_files_relative_paths()),
                  table_root=base, snapshot=snapshot)
    return split, piece


def table_schema(table: Any) -> TableSchema:
    """The schema the catalog gives a hive-synced table: Hudi's fields, partition fields last."""
    partitions = {f.name for f in table.get_partition_schema()}
    arrow = table.get_schema_with_meta_fields()
    return TableSchema(tuple(Column(f.name, f.type, str(arrow.field(f.name).type), partition=f.name in partitions)
                             for f in from_arrow_schema(arrow).fields), source="test")


def rows(batches: list[pa.RecordBatch] | pa.Table, schema: pa.Schema) -> Counter[Any]:
    table = batches if isinstance(batches, pa.Table) else pa.Table.from_batches(batches, schema=schema)
    return Counter(tuple(sorted(row.items())) for row in table.cast(schema).to_pylist())


@pytest.fixture
def trips(tmp_path: Path) -> Path:
    return unzip_table(TRIPS, tmp_path)


def test_a_slice_with_logs_reads_as_hudi_rs_merges_it(trips: Path) -> None:
    table = hudi_table(trips)
    split, piece = logged_split(table, SECOND_COMMIT)
    schema = table_schema(table)
    target = schema.arrow_schema()
    ours = list(read_split(split, schema.columns, target))
    assert all(batch.schema.equals(target) for batch in ours)
    theirs = table.create_file_group_reader_with_options().read_file_slice(piece)
    assert rows(ours, target) == rows(pa.Table.from_batches([theirs]), target)
    fares = {row["fare"] for row in pa.Table.from_batches(ours).to_pylist()}
    assert 25.0 in fares and 33.9 not in fares  # the log's update replaced the base file's row


def test_the_merge_is_as_of_the_planned_commit(trips: Path) -> None:
    table = hudi_table(trips)
    split, _ = logged_split(table, FIRST_COMMIT)  # planned before the second commit wrote its log block
    schema = table_schema(table)
    merged = pa.Table.from_batches(list(read_split(split, schema.columns, schema.arrow_schema())))
    assert {row["fare"] for row in merged.to_pylist()} == {19.1, 27.7, 33.9, 93.5}
    assert set(merged.column("_hoodie_commit_time").to_pylist()) == {FIRST_COMMIT}


def test_selected_partition_and_absent_columns_are_shaped_like_every_reader(trips: Path) -> None:
    table = hudi_table(trips)
    split, _ = logged_split(table, SECOND_COMMIT)
    columns = [Column("FARE", DoubleType(), "double"), table_schema(table).column("city"),
               Column("added_later", StringType(), "string")]
    target = pa.schema([("FARE", pa.float64()), ("city", pa.string()), ("added_later", pa.string())])
    batches = list(read_split(split, columns, target))
    assert all(batch.schema.equals(target) for batch in batches)
    merged = pa.Table.from_batches(batches).to_pylist()
    assert sorted(row["FARE"] for row in merged) == [19.1, 25.0, 27.7, 93.5]
    assert {row["city"] for row in merged} == {"san_francisco"} and {row["added_later"] for row in merged} == {None}
    counted = list(read_split(split, [], pa.schema([])))  # count(*): no column decoded, the merged rows counted
    assert sum(batch.num_rows for batch in counted) == 4 and all(batch.num_columns == 0 for batch in counted)


def test_a_changed_or_vanished_file_is_a_stale_plan(trips: Path) -> None:
    table = hudi_table(trips)
    split, _ = logged_split(table, SECOND_COMMIT)
    schema = table_schema(table)
    grown = split._replace(file_length=split.file_length + 1)
    with pytest.raises(FileChangedError, match="changed since it was planned.*REFRESH TABLE"):
        list(read_split(grown, schema.columns, schema.arrow_schema()))
    log = Path(split.log_files[0].removeprefix("file://"))
    log.unlink()
    with pytest.raises(FileChangedError, match=f"{log.name} no longer exists.*REFRESH TABLE"):
        list(read_split(split, schema.columns, schema.arrow_schema()))


def test_old_plans_load_and_ask_to_plan_again(trips: Path) -> None:
    table = hudi_table(trips)
    split, _ = logged_split(table, SECOND_COMMIT)
    assert Split.from_json(split.to_json()) == split
    old = {key: value for key, value in split.to_json().items() if key not in ("table_root", "snapshot")}
    loaded = Split.from_json(old)
    assert (loaded.table_root, loaded.snapshot, loaded.log_files) == (None, None, split.log_files)
    schema = table_schema(table)
    with pytest.raises(PlanningError, match="plan again"):
        list(read_split(loaded, schema.columns, schema.arrow_schema()))


def _register(admin: Admin, database: str, root: Path, table: Any) -> None:
    admin.create_database(database)
    keys = [(f.name, "string") for f in table.get_partition_schema()]
    for suffix, realtime in (("ro", False), ("rt", True)):
        admin.pool.call("create_table", hive_sync_table(database, f"t_{suffix}", root, [], partition_keys=keys,
                                                        realtime=realtime))


def test_snapshot_plans_name_the_commit_and_the_table_root(trips: Path, admin: Admin, unique_name: str,
                                                           session: Session) -> None:
    table = hudi_table(trips)
    _register(admin, unique_name, trips, table)
    catalog = session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(unique_name, "t_rt"))
    logged = [s for s in plan.splits if s.log_files]
    assert len(logged) == 1
    assert (logged[0].table_root, logged[0].snapshot) == (table.base_url.rstrip("/"), SECOND_COMMIT)
    assert all(s.table_root is None and s.snapshot is None for s in plan.splits if not s.log_files)
    assert any(f"as of commit {SECOND_COMMIT}" in note for note in plan.summary.notes)
    assert plan.summary.files == 4  # three base files and one log file
    assert SplitPlan.loads(plan.dumps()) == plan


def test_a_slice_with_only_log_files_is_planned_and_refused_clearly(trips: Path, admin: Admin, unique_name: str,
                                                                    session: Session) -> None:
    table = hudi_table(trips)
    _, piece = logged_split(table, SECOND_COMMIT)
    (trips / piece.base_file_relative_path()).unlink()  # the file group now has a log file and no base file
    table = hudi_table(trips)
    assert any(not s.base_file_name and s.has_log_files() for s in table.get_file_slices())
    _register(admin, unique_name, trips, table)
    catalog = session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(unique_name, "t_rt"))
    (log_only,) = [s for s in plan.splits if s.file_format == LOG_ONLY]
    assert log_only.path == log_only.log_files[0] and log_only.path.endswith(piece.log_files_relative_paths()[0])
    assert any("no base file" in note for note in plan.summary.notes)
    schema = catalog.table(unique_name, "t_rt").schema
    with pytest.raises(UnsupportedTableError, match="log files and no base file"):
        list(read_split(log_only, schema.columns, schema.arrow_schema()))
    read_optimized = plan_table(catalog, catalog.table(unique_name, "t_ro"))
    assert len(read_optimized.splits) == 2 and not any(s.log_files for s in read_optimized.splits)


def test_a_split_outside_its_table_root_is_refused(trips: Path, tmp_path: Path) -> None:
    """hudi-rs takes paths relative to the root: a split naming another root would read the wrong files."""
    table = hudi_table(trips)
    split, _ = logged_split(table, SECOND_COMMIT)
    copy = tmp_path / "copy"
    shutil.copytree(trips, copy)
    moved = split._replace(table_root=hudi_table(copy).base_url.rstrip("/"))
    schema = table_schema(table)
    with pytest.raises(PlanningError, match="not under the Hudi table root"):
        list(read_split(moved, schema.columns, schema.arrow_schema()))
