"""Packing splits into Spark partitions: Spark's rule for its own files, applied to whole splits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.packing import PackingSettings, max_split_bytes, pack_splits
from planner.plan import Split

MB = 1024 * 1024


def split(length: int, index: int = 0) -> Split:
    return Split(f"file:///t/f{index}", 0, length, length, 0, (), (), "parquet")


def test_the_target_follows_sparks_formula() -> None:
    defaults = PackingSettings(min_partitions=2)
    # 1,824 small files (TPC-DS store_sales at scale 1): the open cost dominates, so about 60 tasks
    assert max_split_bytes([200_000] * 1824, defaults) == 128 * MB
    # few bytes: never below the open cost
    assert max_split_bytes([10, 10], defaults) == 4 * MB + 10
    # one core's share when that is less than maxPartitionBytes
    assert max_split_bytes([100 * MB], defaults) == (100 * MB + 4 * MB) // 2
    assert max_split_bytes([100 * MB], PackingSettings(min_partitions=1)) == 104 * MB


def test_many_small_splits_share_tasks_and_big_ones_are_alone() -> None:
    settings_ = PackingSettings(min_partitions=2)
    small = [split(200_000, i) for i in range(1824)]
    packed = pack_splits(small, settings_)
    # each task takes floor(128 MiB / (200 kB + 4 MiB)) = 31 files, as Spark's reader of the same files
    assert [len(p) for p in packed[:-1]] == [31] * (len(packed) - 1) and len(packed) == 59
    big = [split(300 * MB, 1), split(5 * MB, 2), split(5 * MB, 3)]
    packed = pack_splits(big, settings_)
    assert [[s.path for s in p] for p in packed] == [["file:///t/f1"], ["file:///t/f2", "file:///t/f3"]]
    assert pack_splits([], settings_) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=400 * MB), min_size=1, max_size=60),
       st.integers(min_value=1, max_value=256 * MB), st.integers(min_value=0, max_value=8 * MB), st.integers(min_value=1, max_value=16))
def test_every_split_is_in_one_partition_within_the_target(lengths: list[int], max_bytes: int, open_cost: int, cores: int) -> None:
    rule = PackingSettings(max_bytes, open_cost, cores)
    splits = [split(length, i) for i, length in enumerate(lengths)]
    packed = pack_splits(splits, rule)
    assert sorted(s.path for p in packed for s in p) == sorted(s.path for s in splits)
    target = max_split_bytes(lengths, rule)
    for partition in packed:
        # a partition outgrows the target only by its first split (a big one alone) or by open costs
        assert len(partition) == 1 or sum(s.length for s in partition) + open_cost * (len(partition) - 1) <= target
    # largest first: partitions come in the order of their first split's length
    firsts = [p[0].length for p in packed]
    assert firsts == sorted(firsts, reverse=True)
