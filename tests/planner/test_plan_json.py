"""A plan's JSON text written a piece at a time is ``dumps``'s text byte for byte, and read a piece at a time
it is the plan again, however the text is cut (plain values: no metastore)."""

from __future__ import annotations

import pytest

from hms_catalog.formats.detect import TextFormat
from hms_catalog.formats.schema import Column, TableSchema
from hms_catalog.types import parse_hive_type
from planner.plan import DeleteFile, PartitionField, PlanSummary, Split, SplitPlan
from planner.plan_json import PlanReader, plan_json_pieces
from planner.streaming import PlanStream


def _plan(splits: int) -> SplitPlan:
    schema = TableSchema((Column("id", parse_hive_type("bigint"), "bigint", comment='say "splits":[ here'),
                          Column("dt", parse_hive_type("string"), "string", partition=True)), source="hive")
    made = tuple(
        Split(f"file:///w/t/dt={i % 3}/part-{i}.parquet", 0, 100 + i, 100 + i, 1700000000000 + i, ("h1", "h2")[: i % 3],
              (("dt", str(i % 3) if i % 5 else None),), "parquet",
              delete_files=(DeleteFile("file:///w/d.parquet", "position_deletes", "parquet", 9, (1, 2)),) if i == 1 else ())
        for i in range(splits)
    )
    return SplitPlan(
        catalog="c", database="d", table="t", table_format="HIVE", file_format="parquet", schema=schema, splits=made,
        summary=PlanSummary(files=splits, bytes=123, splits=splits, partitions_total=3, partitions_scanned=3,
                            hosts={"h1": 2}, metastore_calls={"get_partition_names": 1}, notes=("é note",)),
        predicate="dt > 'ä'", options={"planning_seconds": 0.5, "columns": "id"},
        text=TextFormat() if splits % 2 else None, partition_fields=(PartitionField("dt", "dt", "identity"),),
    )


def _stream(plan: SplitPlan) -> PlanStream:
    header = SplitPlan(**{**plan.__dict__, "splits": (), "summary": PlanSummary(), "options": {}})
    return PlanStream(header, iter(plan.splits), lambda: SplitPlan(**{**plan.__dict__, "splits": ()}))


@pytest.mark.parametrize("splits", [0, 1, 7, 25])
@pytest.mark.parametrize("per_piece", [1, 3, 1000])
def test_the_pieces_are_dumps_text(splits: int, per_piece: int) -> None:
    plan = _plan(splits)
    pieces = list(plan_json_pieces(_stream(plan), splits_per_piece=per_piece))
    assert "".join(pieces) == plan.dumps()
    assert len(pieces) == splits // per_piece + 1  # the last piece carries the summary


@pytest.mark.parametrize("cut", [1, 2, 7, 64, 10**6])
def test_a_plan_read_in_pieces_is_the_plan(cut: int) -> None:
    plan = _plan(25)
    data = plan.dumps().encode("utf-8")
    reader = PlanReader()
    for start in range(0, len(data), cut):
        reader.feed(data[start : start + cut])  # cuts fall inside numbers, strings and multi-byte characters
    assert reader.plan() == SplitPlan.loads(plan.dumps())


def test_a_text_cut_short_is_an_error() -> None:
    text = _plan(5).dumps()
    reader = PlanReader()
    reader.feed(text[: len(text) // 2])
    with pytest.raises(ValueError, match="ended early"):
        reader.plan()


def test_the_summary_comes_after_the_splits_and_they_are_read_once() -> None:
    plan = _plan(3)
    stream = _stream(plan)
    assert list(stream) == list(plan.splits)
    with pytest.raises(RuntimeError, match="already read"):
        iter(stream)
    assert stream.with_options(columns="x").finished().options["columns"] == "x"
    drained = _stream(plan)
    assert drained.finished().summary == plan.summary  # the splits not read are read and dropped
    assert _stream(plan).collect() == plan
