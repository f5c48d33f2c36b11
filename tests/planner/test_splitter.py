"""Cutting one listed file: each split gets the hosts of the block holding its first byte."""

from __future__ import annotations

import pytest

from hms_catalog.properties import ScanConfig
from planner.listing import Blocks, FileEntry
from planner.split_rule import hosts_at
from planner.splitter import cut_file

CONFIG = ScanConfig(split_size=100, min_split_size=1)


def _hosts(offsets: tuple[int, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple((f"h{index}",) for index in range(len(offsets)))


@pytest.mark.parametrize(
    "offsets",
    [
        (0, 100, 200, 300),  # uniform: found by division
        (0, 150, 200, 300),  # an appended file: the first and last offsets alone look uniform
        (0, 50, 60, 300),  # concatenated files with short blocks in between
        (0, 100, 250),  # last offset off the grid
    ],
)
def test_every_split_gets_the_hosts_of_its_first_byte(offsets: tuple[int, ...]) -> None:
    entry = FileEntry("file:///t/f.parquet", 400, 0, Blocks(offsets, _hosts(offsets), 100))
    splits = cut_file(entry, CONFIG, file_format="parquet")
    assert [s.start for s in splits] == [0, 100, 200, 300]
    assert [s.hosts for s in splits] == [hosts_at(s.start, offsets, _hosts(offsets)) for s in splits]
