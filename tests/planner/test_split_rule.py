"""The split rule against a plain reading of it, with hypothesis and at the boundaries."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.split_rule import DEFAULT_MIN_SPLIT_SIZE, effective_split_size, hosts_at, split_count, split_ranges

MiB = 1024 * 1024


def plain_reading(length: int, size: int) -> list[tuple[int, int]]:
    """The rule as written: while remaining / size > 1.1 cut size bytes; the remainder is the last split."""
    splits = []
    offset, remaining = 0, length
    while remaining / size > 1.1:
        splits.append((offset, size))
        offset += size
        remaining -= size
    if remaining > 0:
        splits.append((offset, remaining))
    return splits


@settings(max_examples=3000, deadline=None)
@given(length=st.integers(min_value=0, max_value=10**13), size=st.integers(min_value=1, max_value=10**11))
def test_matches_the_plain_reading(length: int, size: int) -> None:
    if length // size > 5_000:  # keep the reference loop short
        size = max(size, length // 5_000)
    assert split_ranges(length, size) == plain_reading(length, size)


@settings(max_examples=1000, deadline=None)
@given(length=st.integers(min_value=1, max_value=10**12), size=st.integers(min_value=1, max_value=10**10))
def test_every_byte_is_covered_exactly_once(length: int, size: int) -> None:
    if length // size > 5_000:
        size = max(size, length // 5_000)
    ranges = split_ranges(length, size)
    assert ranges[0][0] == 0
    for (start, span), (next_start, _) in zip(ranges, ranges[1:]):
        assert start + span == next_start and span == size
    last_start, last_span = ranges[-1]
    assert last_start + last_span == length
    assert last_span > 0 and last_span / size <= 1.1


@pytest.mark.parametrize(
    ("length", "size", "expected"),
    [
        (0, 10, []),
        (1, 10, [(0, 1)]),
        (10, 10, [(0, 10)]),
        (11, 10, [(0, 11)]),  # exactly 1.1 sizes: one split
        (12, 10, [(0, 10), (10, 2)]),  # one byte over... of slop: two
        (110, 100, [(0, 110)]),
        (111, 100, [(0, 100), (100, 11)]),
        (int(1.1 * 128 * MiB), 128 * MiB, [(0, int(1.1 * 128 * MiB))]),
        (int(1.1 * 128 * MiB) + 1, 128 * MiB, [(0, 128 * MiB), (128 * MiB, int(0.1 * 128 * MiB) + 1)]),
    ],
)
def test_boundaries(length: int, size: int, expected: list[tuple[int, int]]) -> None:
    assert split_ranges(length, size) == expected


def test_a_huge_sparse_file_is_planned_arithmetically() -> None:
    length = 2**50 + 12345  # a petabyte-sized sparse file
    size = 128 * MiB
    count = split_count(length, size)
    ranges = split_ranges(length, size)
    assert len(ranges) == count + 1
    assert ranges[-1][0] + ranges[-1][1] == length


def test_effective_split_size_takes_the_configured_size_or_the_block_size_with_a_floor() -> None:
    assert effective_split_size(block_size=32 * MiB) == DEFAULT_MIN_SPLIT_SIZE
    assert effective_split_size(block_size=256 * MiB) == 256 * MiB
    assert effective_split_size(block_size=32 * MiB, configured=512 * MiB) == 512 * MiB
    assert effective_split_size(block_size=256 * MiB, configured=64 * MiB) == DEFAULT_MIN_SPLIT_SIZE
    assert effective_split_size(block_size=32, configured=0, floor=100) == 100
    assert effective_split_size(block_size=32, configured=10, floor=1) == 10
    with pytest.raises(ValueError, match="must be positive"):
        effective_split_size(block_size=0, configured=0, floor=0)


def test_hosts_come_from_the_block_holding_the_start() -> None:
    offsets = [0, 100, 200]
    hosts = [("a", "b"), ("c",), ("d", "e")]
    assert hosts_at(0, offsets, hosts) == ("a", "b")
    assert hosts_at(99, offsets, hosts) == ("a", "b")
    assert hosts_at(100, offsets, hosts) == ("c",)
    assert hosts_at(250, offsets, hosts) == ("d", "e")
    assert hosts_at(5, [], []) == ()


def test_ranges_pickle() -> None:
    assert pickle.loads(pickle.dumps(split_ranges(1000, 300))) == split_ranges(1000, 300)


def test_only_local_files_are_placed_on_a_host() -> None:
    from planner import LocalBlockLocator

    locator = LocalBlockLocator(host="here")
    local = locator.locate("file:///w/t/f.parquet", 300, 100)
    assert local.offsets == (0, 100, 200) and local.hosts == (("here",),) * 3
    remote = locator.locate("s3://bucket/t/f.parquet", 300, 100)
    assert remote.hosts == ((),) * 3
