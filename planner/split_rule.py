"""The split rule, as pure arithmetic.

For a splittable file of ``length`` bytes: ``size = max(configured split size or block size, floor)``;
while ``remaining / size > 1.1`` a split of ``size`` bytes is cut and ``remaining`` shrinks; what is left
(at most 1.1 sizes) is the last split. The comparison is done in floating point exactly as Hadoop's
FileInputFormat and Doris's FileSplitter do (``(double) remaining / size > SPLIT_SLOP``), so boundary
cases agree with them byte for byte. The number of full splits has a closed form, so planning a huge
file costs one list comprehension rather than a Python loop per split.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

__all__ = [
    "SPLIT_SLOP",
    "DEFAULT_MIN_SPLIT_SIZE",
    "effective_split_size",
    "split_count",
    "split_ranges",
    "hosts_at",
]

SPLIT_SLOP = 1.1
DEFAULT_MIN_SPLIT_SIZE = 128 * 1024 * 1024


def effective_split_size(block_size: int, configured: int = 0, floor: int = DEFAULT_MIN_SPLIT_SIZE) -> int:
    """``max(configured split size or the file's block size, floor)``; a zero or negative size means unset."""
    base = configured if configured > 0 else block_size
    size = max(base, floor)
    if size <= 0:
        raise ValueError(f"split size must be positive (block size {block_size}, configured {configured}, floor {floor})")
    return size


def split_count(length: int, size: int) -> int:
    """How many full ``size`` splits the rule cuts before the tail (the tail is one more split)."""
    if length <= 0:
        return 0
    # First guess from exact arithmetic, then settle it with the rule's own floating-point comparison.
    full = max(0, math.ceil((10 * length - 11 * size) / (10 * size)))
    while full > 0 and not (length - (full - 1) * size) / size > SPLIT_SLOP:
        full -= 1
    while (length - full * size) / size > SPLIT_SLOP:
        full += 1
    return full


def split_ranges(length: int, size: int) -> list[tuple[int, int]]:
    """``(start, length)`` of every split of a file of ``length`` bytes; none for an empty file."""
    if length <= 0:
        return []
    full = split_count(length, size)
    ranges = [(index * size, size) for index in range(full)]
    ranges.append((full * size, length - full * size))
    return ranges


def hosts_at(offset: int, block_offsets: Sequence[int], block_hosts: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    """Hosts of the block holding ``offset`` (blocks given by sorted start offsets); empty when unknown."""
    if not block_offsets:
        return ()
    index = bisect.bisect_right(block_offsets, offset) - 1
    return block_hosts[index] if index >= 0 else ()
