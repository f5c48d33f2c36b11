"""Cutting listed files into splits by the rule, with the hosts of each split's first byte."""

from __future__ import annotations

from collections.abc import Iterable

from hms_catalog.properties import ScanConfig
from planner.listing import FileEntry
from planner.plan import DeleteFile, Split
from planner.split_rule import effective_split_size, hosts_at, split_ranges

__all__ = ["cut_file", "is_splittable", "UNSPLITTABLE_SUFFIXES"]

# Compressed text our readers (and Hadoop without a splittable codec) must read from its start.
UNSPLITTABLE_SUFFIXES = (".gz", ".gzip", ".bz2", ".zst", ".zstd", ".lz4", ".snappy", ".deflate", ".lzo", ".xz", ".zip", ".br")
_COLUMNAR = ("parquet", "orc")


def is_splittable(path: str, file_format: str) -> bool:
    """Parquet and ORC always (readers align on row groups / stripes); text unless compressed."""
    if file_format in _COLUMNAR:
        return True
    return not path.lower().endswith(UNSPLITTABLE_SUFFIXES)


def cut_file(
    entry: FileEntry,
    config: ScanConfig,
    *,
    file_format: str,
    partition_values: tuple[tuple[str, str | None], ...] = (),
    delete_files: tuple[DeleteFile, ...] = (),
    log_files: tuple[str, ...] = (),
    splittable: bool | None = None,
) -> list[Split]:
    """The splits of one file (none for an empty file)."""
    if entry.size <= 0 and not log_files:
        return []
    blocks = entry.blocks
    if splittable is None:
        splittable = is_splittable(entry.path, file_format)
    if splittable:
        size = effective_split_size(blocks.block_size, config.split_size, config.min_split_size)
        ranges: Iterable[tuple[int, int]] = split_ranges(entry.size, size)
    else:
        ranges = [(0, entry.size)]
    path, size_, mtime = entry.path, entry.size, entry.modification_time
    offsets, block_hosts, block_size = blocks.offsets, blocks.hosts, blocks.block_size
    make = tuple.__new__  # NamedTuple construction without keyword handling: planning makes millions
    if _uniform(offsets, block_size):
        last = len(offsets) - 1
        return [
            make(Split, (path, start, length, size_, mtime, block_hosts[min(start // block_size, last)],
                         partition_values, file_format, delete_files, log_files, None, None))
            for start, length in ranges
        ]
    return [
        make(Split, (path, start, length, size_, mtime, hosts_at(start, offsets, block_hosts),
                     partition_values, file_format, delete_files, log_files, None, None))
        for start, length in ranges
    ]


def _uniform(offsets: tuple[int, ...], block_size: int) -> bool:
    """Blocks at 0, b, 2b, ... exactly: a split's block is then found by division, not by search.

    Every offset is checked, not only the first and last: files grown by appends or made by
    ``hdfs dfs -concat`` have blocks of several lengths in between, and indexing them by division would
    give splits another block's hosts. The comparison is one C-level tuple compare per file.
    """
    if not offsets or block_size <= 0:
        return False
    return offsets == tuple(range(0, len(offsets) * block_size, block_size))
