"""Block hosts from Hadoop's own client, through the catalog's Java helper: HDFS knows where each block of
a file lives, and the split plan's host affinity needs it.

Files on a Hadoop filesystem (``hdfs://``, ``viewfs://``, and any other the helper serves) are asked of the
helper, all files of one listing chunk in one request; others (local disk, object stores) go to the
fallback locator. A file the helper no longer finds gets the fallback's answer: the listing already has it,
and the reader will find out it is gone.
"""

from __future__ import annotations

from collections.abc import Sequence

from hms_catalog.storage.resolver import StorageResolver
from planner.listing import BlockLocator, Blocks, LocalBlockLocator

__all__ = ["StorageBlockLocator"]


class StorageBlockLocator(BlockLocator):
    """Blocks from the catalog's Hadoop helper for Hadoop filesystems, from ``fallback`` for the rest."""

    def __init__(self, storage: StorageResolver, fallback: BlockLocator | None = None) -> None:
        self._storage = storage
        self._fallback = fallback or LocalBlockLocator()
        self.calls = 0  # requests made to the helper

    def locate(self, path: str, size: int, block_size: int) -> Blocks:
        return self.locate_all([(path, size)], block_size)[0]

    def asks(self, path: str) -> bool:
        return self._storage.is_hadoop(path) or self._fallback.asks(path)

    def make_up(self, files: Sequence[tuple[str, int]], block_size: int) -> list[Blocks]:
        return self._fallback.make_up(files, block_size)  # none is on a Hadoop filesystem: asks() said so

    def locate_all(self, files: Sequence[tuple[str, int]], block_size: int) -> list[Blocks]:
        hadoop = [index for index, (path, _) in enumerate(files) if self._storage.is_hadoop(path)]
        if not hadoop:
            return self._fallback.locate_all(files, block_size)
        found: list[Blocks | None] = [None] * len(files)
        self.calls += 1
        answers = self._storage.hadoop_helper().blocks([files[index][0] for index in hadoop])
        for index, answer in zip(hadoop, answers):
            if answer is not None:
                found[index] = Blocks(answer.offsets, answer.hosts, answer.block_size or block_size)
        rest = [index for index, blocks in enumerate(found) if blocks is None]
        for index, blocks in zip(rest, self._fallback.locate_all([files[index] for index in rest], block_size)):
            found[index] = blocks
        return [blocks for blocks in found if blocks is not None]
