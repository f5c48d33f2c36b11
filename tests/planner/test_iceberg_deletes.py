"""Iceberg delete files: which ones the planner attaches to a data file, and reading splits with them.

Position deletes are compared with pyiceberg's own scan, which applies them. pyiceberg 0.12 refuses to
scan a table with equality deletes, so for those the expected rows are computed here from the rows
written and the spec's rule (a delete removes the rows equal to one of its rows, NULL equal to NULL, in
data files of an older sequence number).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hms_catalog.execution import Session
from hms_catalog.storage.resolver import StorageResolver
from planner import SplitPlan, plan_table
from planner.readers import read_split
from planner.readers.columnar import split_row_spans
from tests.support.iceberg_deletes import commit_deletes, equality_delete_file, position_delete_file
from tests.support.sessions import open_catalog

ROW_GROUP = 500
SMALL_SPLITS = {"file.split.min-size": "1", "file_split_size": "8192"}


@dataclass
class Deleted:
    """A table with delete files, the rows it has after them, and what was deleted where."""

    table: Any
    name: str
    expected: list[dict[str, Any]]
    positions: Mapping[str, set[int]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # data files in the order they were written


def _data_files(table: Any) -> list[str]:
    """Data file paths in the order their snapshots added them."""
    snapshots = {s.snapshot_id: s.sequence_number for s in table.metadata.snapshots}
    entries = table.inspect.entries()
    rows = [r for r in entries.to_pylist() if r["data_file"]["content"] == 0]
    return [r["data_file"]["file_path"] for r in sorted(rows, key=lambda r: snapshots[r["snapshot_id"]])]


@pytest.fixture
def positioned(iceberg_catalog: Any, unique_name: str) -> Iterator[Deleted]:
    """Two data files of 8 row groups of 500 rows; position deletes in two delete files, one naming both
    data files, spread over the first file's row groups and taking all of its fourth."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType

    iceberg_catalog.create_namespace(unique_name)
    name = f"{unique_name}.positioned"
    table = iceberg_catalog.create_table(name, schema=Schema(
        NestedField(1, "id", LongType()), NestedField(2, "name", StringType()), NestedField(3, "score", DoubleType())),
        properties={"write.parquet.row-group-limit": str(ROW_GROUP)})
    for first in (0, 4000):
        table.append(pa.Table.from_pylist(
            [{"id": i, "name": f"name-{i}", "score": None if i % 11 == 0 else i / 7} for i in range(first, first + 4000)],
            schema=table.schema().as_arrow()))
    one, two = _data_files(table)
    positions = {one: {0, 1, 499, 500, 1234, 2999, 3999, *range(1500, 2000)}, two: {7, 3998}}
    early = {p for p in positions[one] if p < 1500}
    commit_deletes(table, [position_delete_file(table, {one: early}),
                           position_delete_file(table, {one: positions[one] - early, two: positions[two]})])
    table = iceberg_catalog.load_table(name)
    yield Deleted(table, "positioned", table.scan().to_arrow().to_pylist(), positions, [one, two])
    iceberg_catalog.drop_table(name)
    iceberg_catalog.drop_namespace(unique_name)


def _apply(rows: Sequence[tuple[int, dict[str, Any]]], deletes: Sequence[tuple[int, Sequence[str], Sequence[Mapping[str, Any]]]],
           ) -> list[dict[str, Any]]:
    """The spec's rule, written out: a row of sequence number s is gone when a delete of a higher sequence
    number has a row equal to it on the delete's columns (None equal to None)."""
    kept = []
    for sequence, row in rows:
        if not any(sequence < delete_sequence and tuple(row[c] for c in columns) in {tuple(k[c] for c in columns) for k in keys}
                   for delete_sequence, columns, keys in deletes):
            kept.append(row)
    return kept


@pytest.fixture
def equalities(iceberg_catalog: Any, unique_name: str) -> Iterator[Deleted]:
    """Data at sequence numbers 1 and 3, equality deletes at 2 (on id; on name, with a NULL key) and at
    4 (on region and name together): those of 2 must not touch the rows written at 3."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    iceberg_catalog.create_namespace(unique_name)
    name = f"{unique_name}.equalities"
    table = iceberg_catalog.create_table(name, schema=Schema(
        NestedField(1, "id", LongType()), NestedField(2, "name", StringType()), NestedField(3, "region", StringType())))

    def row(i: int, region: str | None = "") -> dict[str, Any]:
        return {"id": i, "name": None if i % 10 == 0 else f"n{i}", "region": ["eu", "us", "apac"][i % 3] if region == "" else region}

    first = [row(i) for i in range(60)]
    second = [row(i) for i in range(10)] + [row(100, None) | {"name": "n5"}, row(110, "us")]
    deletes: list[tuple[int, list[str], list[dict[str, Any]]]] = [
        (2, ["id"], [{"id": 1}, {"id": 2}, {"id": 33}, {"id": 999}]),
        (2, ["name"], [{"name": None}, {"name": "n7"}]),
        (4, ["region", "name"], [{"region": "eu", "name": None}, {"region": "us", "name": "n4"}, {"region": None, "name": "n5"}]),
    ]
    arrow = table.schema().as_arrow()
    table.append(pa.Table.from_pylist(first, schema=arrow))
    commit_deletes(table, [equality_delete_file(table, columns, keys) for _, columns, keys in deletes[:2]])
    table.append(pa.Table.from_pylist(second, schema=arrow))
    commit_deletes(table, [equality_delete_file(table, deletes[2][1], deletes[2][2])])
    table = iceberg_catalog.load_table(name)
    assert [s.sequence_number for s in table.metadata.snapshots] == [1, 2, 3, 4]
    expected = _apply([(1, r) for r in first] + [(3, r) for r in second], deletes)
    yield Deleted(table, "equalities", expected, files=_data_files(table))
    iceberg_catalog.drop_table(name)
    iceberg_catalog.drop_namespace(unique_name)


@pytest.fixture
def partitioned(iceberg_catalog: Any, unique_name: str) -> Iterator[Deleted]:
    """Identity-partitioned by region, with a position delete in 'eu' and an equality delete on id in 'us'
    that names an id living in 'eu' too (a partition's equality deletes stay in their partition)."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    iceberg_catalog.create_namespace(unique_name)
    name = f"{unique_name}.partitioned"
    table = iceberg_catalog.create_table(name, schema=Schema(
        NestedField(1, "id", LongType()), NestedField(2, "region", StringType()), NestedField(3, "name", StringType())),
        partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region")))
    rows = [{"id": i % 20, "region": ["eu", "us"][i % 2], "name": f"n{i}"} for i in range(40)]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    files = {task.file.partition[0]: task.file for task in table.scan().plan_files()}
    commit_deletes(table, [position_delete_file(table, {files["eu"].file_path: {0, 4}}, partition=files["eu"].partition)])
    after_positions = iceberg_catalog.load_table(name).scan().to_arrow().to_pylist()
    commit_deletes(table, [equality_delete_file(table, ["id"], [{"id": 1}, {"id": 2}, {"id": 3}], partition=files["us"].partition)])
    table = iceberg_catalog.load_table(name)
    expected = [r for r in after_positions if not (r["region"] == "us" and r["id"] in (1, 2, 3))]
    assert len(expected) < len(after_positions) < len(rows)
    yield Deleted(table, "partitioned", expected)
    iceberg_catalog.drop_table(name)
    iceberg_catalog.drop_namespace(unique_name)


@pytest.fixture
def small_splits(home: Path, metastore_uri: str) -> Iterator[Session]:
    session = open_catalog(home, metastore_uri, **SMALL_SPLITS)
    yield session
    session.manager.close()


def _plan(session: Session, namespace: str, deleted: Deleted, where: str | None = None) -> SplitPlan:
    catalog = session.manager.catalog("hive")
    return plan_table(catalog, catalog.table(namespace, deleted.name), where)


def _read(plan: SplitPlan, columns: Sequence[str] | None = None) -> tuple[list[pa.RecordBatch], pa.Schema]:
    schema = plan.schema
    chosen = [c for c in schema.columns if c.readable] if columns is None else [schema.column(n) for n in columns]
    target = schema.arrow_schema([c.name for c in chosen])
    batches = [b for s in plan.splits for b in read_split(s, chosen, target, table_columns=schema.data_columns)]
    assert all(b.schema.equals(target) for b in batches)
    return batches, target


def _rows(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(r.values()) if columns is None else tuple(r[c] for c in columns) for r in rows)


def _read_rows(plan: SplitPlan, columns: Sequence[str] | None = None) -> Counter[tuple[Any, ...]]:
    batches, target = _read(plan, columns)
    return _rows(pa.Table.from_batches(batches, schema=target).to_pylist())


def test_position_deletes_across_splits_equal_pyicebergs_scan(positioned: Deleted, small_splits: Session,
                                                              unique_name: str) -> None:
    plan = _plan(small_splits, unique_name, positioned)
    first = [s for s in plan.splits if s.path == positioned.files[0]]
    assert len(first) >= 3 and all(len(s.delete_files) == 2 for s in first)
    assert {d.content for s in plan.splits for d in s.delete_files} == {"position_deletes"}
    holding = set()  # the splits whose rows hold a deleted position
    for index, split in enumerate(first):
        for start, rows in split_row_spans(split, StorageResolver()):
            if any(start <= p < start + rows for p in positioned.positions[positioned.files[0]]):
                holding.add(index)
    assert len(holding) >= 3
    assert _read_rows(plan) == _rows(positioned.expected)
    assert sum(Counter(_read_rows(plan, ["name"])).values()) == len(positioned.expected)
    assert SplitPlan.loads(plan.dumps()) == plan


def test_counts_subtract_deleted_rows_without_decoding(positioned: Deleted, small_splits: Session, unique_name: str) -> None:
    plan = _plan(small_splits, unique_name, positioned)
    batches, _ = _read(plan, [])
    assert all(b.num_columns == 0 for b in batches)
    assert sum(b.num_rows for b in batches) == len(positioned.expected) == 8000 - 507 - 2


def test_equality_deletes_attach_to_older_data_files_only(equalities: Deleted, session: Session, unique_name: str) -> None:
    plan = _plan(session, unique_name, equalities)
    older, newer = equalities.files
    by_file = {s.path: s.delete_files for s in plan.splits}
    assert {d.content for d in by_file[older]} == {"equality_deletes"}
    assert sorted(d.equality_ids for d in by_file[older]) == [(1,), (2,), (3, 2)]
    assert [d.equality_ids for d in by_file[newer]] == [(3, 2)]
    assert SplitPlan.loads(plan.dumps()) == plan


def test_equality_deletes_remove_equal_rows_with_null_equal_to_null(equalities: Deleted, session: Session,
                                                                    unique_name: str) -> None:
    plan = _plan(session, unique_name, equalities)
    assert _read_rows(plan) == _rows(equalities.expected)
    survivors = {r["id"] for r in equalities.expected}
    assert 110 in survivors and 100 not in survivors and 0 not in survivors
    # The key columns are read to compare and dropped: asked for name alone, one column comes back.
    assert _read_rows(plan, ["name"]) == _rows(equalities.expected, ["name"])
    batches, _ = _read(plan, [])
    assert sum(b.num_rows for b in batches) == len(equalities.expected)


def test_equality_deletes_stay_attached_when_their_metrics_miss_the_filter(equalities: Deleted, session: Session,
                                                                           unique_name: str) -> None:
    """Column metrics prune data files, not equality deletes: a delete's keys outside the filter can still
    remove a row the filter keeps on its other columns."""
    from pyiceberg.expressions import EqualTo
    from pyiceberg.expressions.visitors import _InclusiveMetricsEvaluator

    table = equalities.table
    on_name = next(e.data_file for m in table.current_snapshot().manifests(table.io) for e in m.fetch_manifest_entry(table.io)
                   if list(e.data_file.equality_ids or ()) == [2])
    assert not _InclusiveMetricsEvaluator(table.schema(), EqualTo("name", "n8")).eval(on_name)  # its metrics miss
    plan = _plan(session, unique_name, equalities, "name = 'n8'")
    older = next(s for s in plan.splits if s.path == equalities.files[0])
    assert (2,) in [d.equality_ids for d in older.delete_files]


def test_partitioned_deletes_stay_in_their_partition(partitioned: Deleted, session: Session, unique_name: str) -> None:
    plan = _plan(session, unique_name, partitioned)
    kinds = {dict(s.partition_values)["region"]: {d.content for d in s.delete_files} for s in plan.splits}
    assert kinds == {"eu": {"position_deletes"}, "us": {"equality_deletes"}}
    assert _read_rows(plan) == _rows(partitioned.expected)


def test_equality_deletes_apply_by_sequence_number_and_partition() -> None:
    """The spec's rule on plain values: newer deletes only, same spec and partition, or an unpartitioned spec."""
    from types import SimpleNamespace

    from planner.iceberg_tasks import _EqualityDeletes

    def entry(sequence: int, spec: int, partition: tuple[str, ...], name: str) -> Any:
        return SimpleNamespace(sequence_number=sequence, data_file=SimpleNamespace(spec_id=spec, partition=partition, name=name))

    index = _EqualityDeletes([entry(2, 0, (), "global"), entry(3, 1, ("eu",), "eu@3"), entry(5, 1, ("us",), "us@5"),
                              entry(4, 1, ("eu",), "eu@4")], unpartitioned={0})

    def applied(sequence: int, spec: int, partition: tuple[str, ...]) -> list[str]:
        return sorted(d.name for d in index.for_data_file(sequence, SimpleNamespace(spec_id=spec, partition=partition)))

    assert applied(1, 1, ("eu",)) == ["eu@3", "eu@4", "global"]
    assert applied(3, 1, ("eu",)) == ["eu@4"]  # a delete of the data's own sequence number does not apply
    assert applied(2, 1, ("us",)) == ["us@5"]
    assert applied(5, 1, ("us",)) == []
    assert applied(1, 2, ("eu",)) == ["global"]  # another spec: only the unpartitioned delete


def test_orc_data_files_map_positions_by_stripe(tmp_path: Path) -> None:
    """ORC data files: positions count across stripes, splits take the stripes that start in them; an ORC
    position delete file and a Parquet equality delete file on a column the read does not ask for."""
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    from hms_catalog.formats.schema import Column
    from hms_catalog.types import BigIntType, StringType
    from planner.plan import DeleteFile, Split
    from planner.split_rule import split_ranges

    data = tmp_path / "data.orc"
    orc.write_table(pa.table({"id": pa.array(range(20000), pa.int64()), "name": [f"n{i}" for i in range(20000)]}),
                    str(data), stripe_size=4096, batch_size=1024)
    assert orc.ORCFile(str(data)).nstripes > 10
    path = f"file:{data}"
    positions = tmp_path / "positions.orc"
    orc.write_table(pa.table({"file_path": [path] * 5 + [f"{path}.other"], "pos": pa.array([0, 1023, 1024, 5000, 19999, 3], pa.int64())}),
                    str(positions))
    keys = tmp_path / "keys.parquet"
    pq.write_table(pa.table({"label": pa.array(["n7", "n10000", "none"])},
                            schema=pa.schema([pa.field("label", pa.string(), metadata={b"PARQUET:field_id": b"2"})])), str(keys))
    position_file = DeleteFile(f"file:{positions}", "position_deletes", "orc", positions.stat().st_size)
    key_file = DeleteFile(f"file:{keys}", "equality_deletes", "parquet", keys.stat().st_size, (2,))
    size = data.stat().st_size
    columns = [Column("id", BigIntType(), "bigint", field_id=1), Column("name", StringType(), "string", field_id=2)]
    target = pa.schema([pa.field("id", pa.int64())])

    def read(deletes: tuple[DeleteFile, ...], wanted: list[Column], schema: pa.Schema) -> list[pa.RecordBatch]:
        splits = [Split(path, start, length, size, None, (), (), "orc", deletes) for start, length in split_ranges(size, 16384)]
        assert len(splits) > 3
        return [b for s in splits for b in read_split(s, wanted, schema, table_columns=columns)]

    ids = [i for b in read((position_file, key_file), columns[:1], target) for i in b.column(0).to_pylist()]
    assert sorted(ids) == sorted(set(range(20000)) - {0, 1023, 1024, 5000, 19999, 7, 10000})
    counted = read((position_file,), [], pa.schema([]))
    assert sum(b.num_rows for b in counted) == 20000 - 5 and all(b.num_columns == 0 for b in counted)
