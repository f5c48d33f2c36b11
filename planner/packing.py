"""Spark partitions of whole splits, packed as Spark packs its own files into partitions.

Splits stay the planner's unit (their byte ranges, hosts and partition values); a reader task may read
several. Spark's file sources aim at ``max_split_bytes = min(maxPartitionBytes, max(openCost,
total / minPartitions))`` per partition, where ``total`` charges every file its length plus the open
cost, and fill partitions with the largest files first, closing a partition when the next file would
overflow it (``FilePartition.getFilePartitions``). The same rule here means a table of many small files
is read in about as many tasks as Spark reads it in, and a big split is a task of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from planner.plan import Split

__all__ = ["PackingSettings", "max_split_bytes", "pack_splits", "SPARK_DEFAULTS"]


@dataclass(frozen=True)
class PackingSettings:
    """Spark's settings for packing files: ``spark.sql.files.maxPartitionBytes``,
    ``spark.sql.files.openCostInBytes`` and the minimum number of partitions
    (``spark.sql.files.minPartitionNum``, else the default parallelism)."""

    max_partition_bytes: int = 128 * 1024 * 1024
    open_cost: int = 4 * 1024 * 1024
    min_partitions: int = 1

    def __post_init__(self) -> None:
        if self.max_partition_bytes <= 0 or self.open_cost < 0 or self.min_partitions <= 0:
            raise ValueError(f"packing settings must be positive, got {self}")


SPARK_DEFAULTS = PackingSettings()


def max_split_bytes(lengths: Sequence[int], settings: PackingSettings) -> int:
    """The bytes per partition Spark aims at for files of these lengths."""
    total = sum(length + settings.open_cost for length in lengths)
    per_core = total // settings.min_partitions
    return min(settings.max_partition_bytes, max(settings.open_cost, per_core))


def pack_splits(splits: Sequence[Split], settings: PackingSettings) -> list[list[Split]]:
    """The splits grouped into partitions, largest first, each partition filled up to the target size."""
    if not splits:
        return []
    target = max_split_bytes([split.length for split in splits], settings)
    partitions: list[list[Split]] = []
    current: list[Split] = []
    size = 0
    for split in sorted(splits, key=lambda s: s.length, reverse=True):
        if current and size + split.length > target:
            partitions.append(current)
            current, size = [], 0
        current.append(split)
        size += split.length + settings.open_cost
    if current:
        partitions.append(current)
    return partitions
