"""Writes committed on a real S3 API (moto's server, signatures checked) at ``s3a://`` locations, through the
catalog's own write API as the service's write routes call it.

Spark here has no ``hadoop-aws``, so the writer is simulated as the connector behaves: a job is begun, its
Parquet files are put with pyarrow (through the catalog's storage) where the connector's tasks put them in
the job's staging folder, and the list is committed. On an object store a folder's rename is a copy and a
delete of each object (``hms_catalog.storage.files.move_objects``), so what these tests prove is that the commit's moves,
its clean-up and its undo log work object by object: the plan and a read of its files give exactly the rows
expected, no staging or set-aside object is left, and a commit that fails half-way leaves the table's
objects and partitions as they were.
"""

from __future__ import annotations

import uuid
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hms_catalog.commits.undo import UndoLog
from hms_catalog.ddl.context import DdlContext
from hms_catalog.ddl.iceberg import iceberg_catalog
from hms_catalog.errors import MetastoreError
from hms_catalog.execution import Session
from hms_catalog.execution.ddl_commands import ddl_context
from hms_catalog.formats.partition_names import make_partition_name
from hms_catalog.write.jobs import WriteJob
from hms_catalog.write.jobs_ops import abort_write, begin_write, commit_job
from hms_catalog.write.request import CommitRequest, WriteOutcome, WrittenFile
from planner import plan_table
from tests.support.s3 import Warehouse

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

Row = tuple[int, str, str | None]  # (id, name, region); region None for an unpartitioned table


def _ctx(session: Session) -> DdlContext:
    return ddl_context(session, session.manager.catalog("hive"))


def _put(ctx: DdlContext, location: str, table: pa.Table) -> None:
    filesystem, path = ctx.catalog.storage.resolve(location)
    pq.write_table(table, path, filesystem=filesystem)


def _write(ctx: DdlContext, database: str, table: str, rows: list[Row], mode: str, *,
           static: dict[str, str | None] | None = None, partitioned: bool = True) -> WriteOutcome:
    """A Hive table's write as the connector runs it: begin, one Parquet file per partition in the job's
    staging folder (``region=<escaped>/part-...``, partition column left out of the file), commit."""
    job, request = _staged(ctx, database, table, rows, mode, static=static, partitioned=partitioned)
    return commit_job(ctx, job, request)


def _by_region(rows: list[Row]) -> dict[str | None, list[Row]]:
    """The rows grouped by their partition value, as a writer's tasks write one file per partition."""
    grouped: dict[str | None, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row[2], []).append(row)
    return grouped


def _staged(ctx: DdlContext, database: str, table: str, rows: list[Row], mode: str, *,
            static: dict[str, str | None] | None = None, partitioned: bool = True) -> tuple[WriteJob, CommitRequest]:
    """A job begun and its files written; what its driver sends to commit them."""
    job = begin_write(ctx, database, table)
    files = []
    for region, group in _by_region(rows).items():
        name = f"part-00000-{uuid.uuid4().hex}.c000.snappy.parquet"
        relative = f"{make_partition_name(['region'], [region])}/{name}" if partitioned else name
        _put(ctx, f"{job.staging}/{relative}", pa.table({"id": pa.array([r[0] for r in group], pa.int64()),
                                                         "name": [r[1] for r in group]}))
        files.append(WrittenFile(relative, (region,) if partitioned else (), rows=len(group)))
    return job, CommitRequest(mode, tuple(files), static or {})


def _planned_rows(ctx: DdlContext, database: str, table: str) -> list[Row]:
    """The rows of the catalog's plan of the table, each file read once with pyarrow through its storage."""
    catalog = ctx.catalog
    plan = plan_table(catalog, catalog.table(database, table))
    files = {split.path: dict(split.partition_values).get("region") for split in plan.splits}
    rows: list[Row] = []
    for path, region in files.items():
        filesystem, resolved = catalog.storage.resolve(path)
        rows.extend((r["id"], r["name"], region) for r in pq.read_table(resolved, filesystem=filesystem).to_pylist())
    return sorted(rows, key=repr)


def _objects(warehouse: Warehouse, table: str) -> list[str]:
    """The data objects under the table's folder (pyarrow's empty folder markers, ``.../``, left out)."""
    prefix = f"{warehouse.database}.db/{table}/"
    return [key[len(prefix):] for key in warehouse.server.keys(warehouse.bucket, prefix) if not key.endswith("/")]


def _leftovers(warehouse: Warehouse, table: str) -> list[str]:
    """Any object (a folder marker too) of a staging folder or of something set aside, under the table."""
    prefix = f"{warehouse.database}.db/{table}/"
    return [key for key in warehouse.server.keys(warehouse.bucket, prefix) if ".hms-staging-" in key or ".hms-replaced-" in key]


def _partitions(ctx: DdlContext, database: str, table: str) -> dict[str, str]:
    """Partition name -> location, as the metastore has them."""
    found = ctx.catalog.client.get_partitions_by_filter(database, table, "")
    return {make_partition_name(["region"], list(p.values)): p.sd.location for p in found}


def _check(ctx: DdlContext, warehouse: Warehouse, table: str, expected: list[Row]) -> None:
    database = warehouse.database
    assert _planned_rows(ctx, database, table) == sorted(expected, key=repr)
    assert _leftovers(warehouse, table) == []
    root = f"{warehouse.root}/{table}"
    regions = {row[2] for row in expected}
    assert _partitions(ctx, database, table) == {
        make_partition_name(["region"], [r]): f"{root}/{make_partition_name(['region'], [r])}" for r in regions}


def test_appends_and_overwrites_of_a_partitioned_parquet_table(s3_session: Session, s3_warehouse: Warehouse,
                                                              unique_name: str) -> None:
    ctx, database = _ctx(s3_session), s3_warehouse.database
    s3_session.run_one(f"CREATE TABLE hive.{database}.{unique_name} (id BIGINT, name STRING) PARTITIONED BY (region STRING) "
                       "STORED AS PARQUET")  # managed: in the database's folder on the bucket
    first: list[Row] = [(1, "ada", "north"), (2, "grace", "north"), (3, "alan", "a/b"), (4, "edsger", "south east")]
    outcome = _write(ctx, database, unique_name, first, "append")
    assert (outcome.added, outcome.rows) == (3, 4), outcome
    _check(ctx, s3_warehouse, unique_name, first)
    assert any(key.startswith("region=a%2Fb/part-") for key in _objects(s3_warehouse, unique_name))

    more: list[Row] = [(5, "barbara", "north")]  # an append to a partition that exists: its file moved in beside
    assert _write(ctx, database, unique_name, more, "append").appended == 1
    _check(ctx, s3_warehouse, unique_name, first + more)

    dynamic: list[Row] = [(10, "john", "north"), (11, "frances", "west")]  # north replaced, west added
    outcome = _write(ctx, database, unique_name, dynamic, "dynamic")
    assert (outcome.added, outcome.replaced) == (1, 1), outcome
    after_dynamic = [r for r in first if r[2] != "north"] + dynamic
    _check(ctx, s3_warehouse, unique_name, after_dynamic)
    assert len([key for key in _objects(s3_warehouse, unique_name) if key.startswith("region=north/")]) == 1

    static: list[Row] = [(20, "tony", "a/b"), (21, "leslie", "a/b")]  # INSERT OVERWRITE .. PARTITION (region='a/b')
    outcome = _write(ctx, database, unique_name, static, "overwrite", static={"region": "a/b"})
    assert outcome.replaced == 1, outcome
    after_static = [r for r in after_dynamic if r[2] != "a/b"] + static
    _check(ctx, s3_warehouse, unique_name, after_static)

    # INSERT OVERWRITE .. PARTITION (region='west') of no row: the partition stays, empty, its object gone.
    outcome = _write(ctx, database, unique_name, [], "overwrite", static={"region": "west"})
    assert outcome.replaced == 1, outcome
    after_empty = [r for r in after_static if r[2] != "west"]
    assert _planned_rows(ctx, database, unique_name) == sorted(after_empty, key=repr)
    assert "region=west" in _partitions(ctx, database, unique_name)
    assert not [key for key in _objects(s3_warehouse, unique_name) if key.startswith("region=west/")]
    assert _leftovers(s3_warehouse, unique_name) == []

    s3_session.run_one(f"DROP TABLE hive.{database}.{unique_name}")  # what the commits moved about goes with it
    assert s3_warehouse.server.keys(s3_warehouse.bucket, f"{database}.db/{unique_name}/") == []


def test_an_unpartitioned_table_is_appended_to_and_overwritten(s3_session: Session, s3_warehouse: Warehouse,
                                                               unique_name: str) -> None:
    ctx, database = _ctx(s3_session), s3_warehouse.database
    s3_session.run_one(f"CREATE TABLE hive.{database}.{unique_name} (id BIGINT, name STRING) STORED AS PARQUET")
    first: list[Row] = [(1, "ada", None), (2, "grace", None)]
    _write(ctx, database, unique_name, first, "append", partitioned=False)
    more: list[Row] = [(3, "alan", None)]
    _write(ctx, database, unique_name, more, "append", partitioned=False)
    assert _planned_rows(ctx, database, unique_name) == sorted(first + more, key=repr)
    assert len(_objects(s3_warehouse, unique_name)) == 2

    replacing: list[Row] = [(9, "edsger", None)]
    outcome = _write(ctx, database, unique_name, replacing, "overwrite", partitioned=False)
    assert outcome.replaced == 1, outcome
    assert _planned_rows(ctx, database, unique_name) == replacing
    assert len(_objects(s3_warehouse, unique_name)) == 1 and _leftovers(s3_warehouse, unique_name) == []
    struct = ctx.catalog.client.get_table(database, unique_name)
    assert struct.sd.location == f"{s3_warehouse.root}/{unique_name}"
    s3_session.run_one(f"DROP TABLE hive.{database}.{unique_name}")


def test_a_commit_failing_half_way_leaves_the_table_and_its_objects_as_before(
        s3_session: Session, s3_warehouse: Warehouse, unique_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx, database = _ctx(s3_session), s3_warehouse.database
    s3_session.run_one(f"CREATE TABLE hive.{database}.{unique_name} (id BIGINT, name STRING) PARTITIONED BY (region STRING) "
                       "STORED AS PARQUET")
    before: list[Row] = [(1, "ada", "north"), (2, "grace", "north"), (3, "alan", "a/b")]
    _write(ctx, database, unique_name, before, "append")
    objects, partitions = _objects(s3_warehouse, unique_name), _partitions(ctx, database, unique_name)

    client = ctx.client  # the catalog's client, as its writes see it
    real = client.alter_partitions
    calls: list[int] = []
    mid_commit: list[str] = []  # the table's objects when the metastore call failed

    def fails_once(*args: Any, **kwargs: Any) -> Any:
        """The commit's alter_partitions fails, after its moves and its add_partitions; the undo's goes through."""
        calls.append(1)
        if len(calls) == 1:
            mid_commit.extend(_objects(s3_warehouse, unique_name))
            raise MetastoreError("the metastore went away (injected)")
        return real(*args, **kwargs)

    monkeypatch.setattr(client, "alter_partitions", fails_once)
    # north and a/b replaced (their objects set aside, the job's moved in object by object), east added.
    with pytest.raises(MetastoreError, match="injected"):
        _write(ctx, database, unique_name, [(7, "x", "north"), (8, "y", "a/b"), (9, "z", "east")], "dynamic")
    assert len(calls) == 2  # the commit's, then the undo's restoring the partitions' old definitions
    monkeypatch.undo()
    assert any(key.startswith("region=east/") for key in mid_commit)  # the moves had been taken when it failed
    assert set(objects) - set(mid_commit) == set(objects)  # north's and a/b's objects were all set aside

    assert _objects(s3_warehouse, unique_name) == objects  # every object moved back, each under its own key
    assert _partitions(ctx, database, unique_name) == partitions  # east dropped again
    assert s3_warehouse.server.keys(s3_warehouse.bucket, f"{database}.db/{unique_name}/region=east") == []  # no marker either
    assert _leftovers(s3_warehouse, unique_name) == []  # the aborted job's staging folder deleted
    assert _planned_rows(ctx, database, unique_name) == sorted(before, key=repr)
    commits = ctx.catalog.write_jobs.commits
    assert commits is not None and not list(commits.glob("**/*.jsonl"))  # the undo log removed: nothing left to recover

    after: list[Row] = [(7, "x", "north")]  # and the table takes the next write as usual
    _write(ctx, database, unique_name, after, "dynamic")
    _check(ctx, s3_warehouse, unique_name, [r for r in before if r[2] != "north"] + after)
    s3_session.run_one(f"DROP TABLE hive.{database}.{unique_name}")


def _iceberg_file(rows: list[Row]) -> pa.Table:
    """A data file as the connector's Iceberg writer makes it: partition columns kept, Iceberg's field ids."""
    def field(name: str, kind: Any, field_id: int) -> pa.Field:
        return pa.field(name, kind, metadata={b"PARQUET:field_id": str(field_id).encode()})

    schema = pa.schema([field("id", pa.int64(), 1), field("name", pa.string(), 2), field("region", pa.string(), 3)])
    return pa.Table.from_pylist([{"id": i, "name": n, "region": r} for i, n, r in rows], schema=schema)


def _write_iceberg(ctx: DdlContext, database: str, table: str, rows: list[Row], mode: str) -> WriteOutcome:
    job = begin_write(ctx, database, table)
    assert job.target.iceberg and job.staging.startswith("s3a://"), job
    files = []
    for region, group in _by_region(rows).items():
        relative = f"{make_partition_name(['region'], [region])}/00000-0-{uuid.uuid4().hex}.parquet"
        _put(ctx, f"{job.staging}/{relative}", _iceberg_file(group))
        files.append(WrittenFile(relative, (), rows=len(group)))
    return commit_job(ctx, job, CommitRequest(mode, tuple(files)))


def test_an_iceberg_table_on_s3_is_written_and_read_back_by_pyiceberg(s3_session: Session, s3_warehouse: Warehouse,
                                                                       unique_name: str) -> None:
    ctx, database = _ctx(s3_session), s3_warehouse.database
    location = f"{s3_warehouse.root}/{unique_name}"
    s3_session.run_one(f"CREATE TABLE hive.{database}.{unique_name} (id BIGINT, name STRING, region STRING) USING iceberg "
                       f"PARTITIONED BY (region) LOCATION '{location}'")
    first: list[Row] = [(1, "ada", "north"), (2, "grace", "south"), (3, "alan", "south")]
    _write_iceberg(ctx, database, unique_name, first, "append")
    replacing: list[Row] = [(9, "edsger", "south")]
    outcome = _write_iceberg(ctx, database, unique_name, replacing, "dynamic")
    assert outcome.replaced == 1, outcome
    expected = sorted([first[0], *replacing], key=repr)

    table = iceberg_catalog(ctx.catalog).load_table((database, unique_name))  # pyiceberg with the catalog's settings
    read = table.scan().to_arrow().to_pylist()
    assert sorted(((r["id"], r["name"], r["region"]) for r in read), key=repr) == expected
    data_files = [task.file.file_path for task in table.scan().plan_files()]
    assert data_files and all(path.startswith(f"{location}/data/hms-") for path in data_files), data_files
    catalog = ctx.catalog
    plan = plan_table(catalog, catalog.table(database, unique_name))
    assert sorted(split.path for split in plan.splits) == sorted(data_files)
    # (DROP .. PURGE of an Iceberg table is tests/storage/test_s3_catalog.py's; pyiceberg 0.12 cannot purge yet)
    s3_session.run_one(f"DROP TABLE hive.{database}.{unique_name}")


def test_a_commit_whose_undo_failed_too_is_undone_from_its_log_by_the_next_write(
        s3_session: Session, s3_warehouse: Warehouse, unique_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """As a process killed in the middle of a commit: nothing undone at once, the log on disk, the table's
    objects half moved; the table's next write undoes it from the log, object by object."""
    ctx, database = _ctx(s3_session), s3_warehouse.database
    s3_session.run_one(f"CREATE TABLE hive.{database}.{unique_name} (id BIGINT, name STRING) PARTITIONED BY (region STRING) "
                       "STORED AS PARQUET")
    before: list[Row] = [(1, "ada", "north"), (2, "grace", "north"), (3, "alan", "a/b")]
    _write(ctx, database, unique_name, before, "append")
    objects, partitions = _objects(s3_warehouse, unique_name), _partitions(ctx, database, unique_name)

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise MetastoreError("the metastore went away (injected)")

    def undo_fails(self: UndoLog, client: Any) -> None:
        raise RuntimeError("the undo could not run (injected)")

    monkeypatch.setattr(ctx.catalog.client, "alter_partitions", unreachable)
    monkeypatch.setattr(UndoLog, "undo", undo_fails)
    with pytest.raises(MetastoreError, match="injected"):
        _write(ctx, database, unique_name, [(7, "x", "north"), (9, "z", "east")], "dynamic")
    monkeypatch.undo()
    commits = ctx.catalog.write_jobs.commits
    assert commits is not None and len(list(commits.glob("**/*.jsonl"))) == 1  # kept for recovery
    assert _objects(s3_warehouse, unique_name) != objects and _leftovers(s3_warehouse, unique_name)  # half moved

    job = begin_write(ctx, database, unique_name)  # the table's next write undoes what the log names first
    assert not list(commits.glob("**/*.jsonl"))
    assert _objects(s3_warehouse, unique_name) == objects
    assert _partitions(ctx, database, unique_name) == partitions
    assert _leftovers(s3_warehouse, unique_name) == []  # the dead commit's staging folder deleted
    assert _planned_rows(ctx, database, unique_name) == sorted(before, key=repr)
    abort_write(ctx, job)
    s3_session.run_one(f"DROP TABLE hive.{database}.{unique_name}")


class _FailingMoves:
    """A filesystem whose ``fail_at``-th object move fails (an S3 error half-way through a folder's move);
    everything else goes to the real one."""

    def __init__(self, filesystem: Any, fail_at: int) -> None:
        self._filesystem, self._fail_at, self.moves = filesystem, fail_at, 0

    def move(self, source: str, target: str) -> None:
        self.moves += 1
        if self.moves == self._fail_at:
            raise OSError(f"copying {source} failed (injected)")
        self._filesystem.move(source, target)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._filesystem, name)


def test_a_folder_move_failing_half_way_on_s3_is_undone_object_by_object(
        s3_session: Session, s3_warehouse: Warehouse, unique_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder's move on an object store is one copy and delete per object, not one rename: an error after
    some of them leaves the folder's objects split between its old and new place, and the undo must put
    every one back (none may stay in the staging folder its abort deletes)."""
    ctx, database = _ctx(s3_session), s3_warehouse.database
    s3_session.run_one(f"CREATE TABLE hive.{database}.{unique_name} (id BIGINT, name STRING) PARTITIONED BY (region STRING) "
                       "STORED AS PARQUET")
    before: list[Row] = [(1, "ada", "north"), (2, "grace", "north"), (3, "alan", "north")]
    for row in before:  # three objects in north's folder
        _write(ctx, database, unique_name, [row], "append")
    objects = _objects(s3_warehouse, unique_name)
    assert len(objects) == 3

    job, request = _staged(ctx, database, unique_name, [(7, "x", "north")], "dynamic")
    resolve = ctx.catalog.storage.resolve
    failing = _FailingMoves(None, fail_at=2)  # north's second object, as the commit sets the folder aside

    def resolve_failing(location: str) -> tuple[Any, str]:
        filesystem, path = resolve(location)
        failing._filesystem = filesystem
        return failing, path

    monkeypatch.setattr(ctx.catalog.storage, "resolve", resolve_failing)
    with pytest.raises(OSError, match="injected"):
        commit_job(ctx, job, request)
    monkeypatch.undo()
    assert failing.moves > 2  # the undo moved the first back
    assert _objects(s3_warehouse, unique_name) == objects
    assert _leftovers(s3_warehouse, unique_name) == []
    assert _planned_rows(ctx, database, unique_name) == sorted(before, key=repr)
    s3_session.run_one(f"DROP TABLE hive.{database}.{unique_name}")


def test_a_partition_with_a_location_of_its_own_elsewhere_on_the_bucket_is_overwritten_in_place(
        s3_session: Session, s3_warehouse: Warehouse, unique_name: str) -> None:
    """What it held is set aside beside it (``.hms-replaced-*``, outside the table's folder) and deleted once done."""
    ctx, database = _ctx(s3_session), s3_warehouse.database
    table = f"hive.{database}.{unique_name}"
    s3_session.run_one(f"CREATE TABLE {table} (id BIGINT, name STRING) PARTITIONED BY (region STRING) STORED AS PARQUET")
    elsewhere = f"s3a://{s3_warehouse.bucket}/elsewhere/{unique_name}/far"
    s3_session.run_one(f"ALTER TABLE {table} ADD PARTITION (region='far') LOCATION '{elsewhere}'")
    _write(ctx, database, unique_name, [(1, "ada", "far"), (2, "grace", "near")], "append")  # far's file into its folder
    far_prefix = f"elsewhere/{unique_name}/"
    assert len([key for key in s3_warehouse.server.keys(s3_warehouse.bucket, far_prefix + "far/") if not key.endswith("/")]) == 1

    outcome = _write(ctx, database, unique_name, [(5, "edsger", "far")], "dynamic")
    assert outcome.replaced == 1, outcome
    assert _planned_rows(ctx, database, unique_name) == sorted([(5, "edsger", "far"), (2, "grace", "near")], key=repr)
    assert _partitions(ctx, database, unique_name)["region=far"] == elsewhere
    beside = s3_warehouse.server.keys(s3_warehouse.bucket, far_prefix)
    assert [key for key in beside if not key.endswith("/")] == [key for key in beside if key.startswith(far_prefix + "far/")]
    assert len([key for key in beside if not key.endswith("/")]) == 1
    assert not [key for key in beside if ".hms-" in key] and _leftovers(s3_warehouse, unique_name) == []
    s3_session.run_one(f"DROP TABLE {table}")
