"""What each write mode does to a partitioned table's partitions, in Spark's words, one class a mode.

Every mode answers one question: which existing partitions lose their rows (``matching``). The commit
then works out the rest the same way for all of them:

- a written partition that does not exist is added;
- an existing one that the mode matches is replaced by what was written (emptied, when nothing was);
- an existing one that it does not match gets the written files appended;
- a matched one that was not written is dropped with its files, where Spark drops it (a data source
  table's overwrite by filter), and kept as it is for a Hive table (Spark overwrites a STORED AS table's
  partitions only where the query wrote rows).

So an overwrite by filter means what Spark's ``OverwriteByExpression`` means: the rows the filter matches
are deleted, then every new row is appended, whether or not it matches the filter.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import ConfigurationError
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name
from hms_catalog.write.request import CommitRequest, WrittenPartition

__all__ = ["WriteMode", "Append", "OverwriteByFilter", "DynamicOverwrite", "write_mode", "PartitionNames", "PartitionChanges"]


@dataclass(frozen=True)
class PartitionNames:
    """The metastore reads a mode may need: the names of all partitions, or of those a partial spec matches."""

    client: MetastoreCalls
    database: str
    table: str

    def all(self) -> list[str]:
        return self.client.get_partition_names(self.database, self.table)

    def matching(self, values: list[str]) -> list[str]:
        return self.client.get_partition_names_ps(self.database, self.table, values)


class WriteMode(ABC):
    """A write mode: its name in answers, whether it replaces rows (and so conflicts with another writer
    of the same partitions), and which partitions it matches."""

    verb = "overwrote"
    replaces = True

    def spec_partition(self, keys: Sequence[str]) -> WrittenPartition | None:
        """A partition the write makes even when no row goes to it (INSERT OVERWRITE .. PARTITION (all keys))."""
        return None

    @abstractmethod
    def matching(self, names: PartitionNames, written: dict[str, WrittenPartition], existing: set[str]) -> set[str]:
        """The existing partitions whose rows this write deletes."""

    def drops_unwritten(self) -> bool:
        """Whether a matched partition that was not written is dropped (else kept as it was)."""
        return False


class Append(WriteMode):
    verb = "appended to"
    replaces = False

    def matching(self, names: PartitionNames, written: dict[str, WrittenPartition], existing: set[str]) -> set[str]:
        return set()


class DynamicOverwrite(WriteMode):
    """``overwritePartitions()``, INSERT OVERWRITE in DYNAMIC mode: the partitions written are replaced."""

    def matching(self, names: PartitionNames, written: dict[str, WrittenPartition], existing: set[str]) -> set[str]:
        return set(written) & existing


@dataclass
class OverwriteByFilter(WriteMode):
    """``overwrite(filter)``, INSERT OVERWRITE in STATIC mode (the filter is its spec; none matches all).

    ``hive_table``: Spark's rule for a STORED AS table, whose overwrite never drops a partition it wrote
    no row to (but a full spec's partition is left present and empty, as Spark leaves its own)."""

    static: dict[str, str | None]
    keys: tuple[str, ...]
    hive_table: bool

    def __post_init__(self) -> None:
        self.static = {k.lower(): v for k, v in self.static.items()}
        unknown = sorted(set(self.static) - set(self.keys))
        if unknown:
            raise ConfigurationError(f"'{unknown[0]}' is not a partition column (partition columns: {', '.join(self.keys)})")

    def spec_partition(self, keys: Sequence[str]) -> WrittenPartition | None:
        if not self.static or set(self.static) != set(keys):
            return None
        values = tuple(self.static[k] for k in keys)
        return WrittenPartition(values, make_partition_name(keys, list(values)))

    def matching(self, names: PartitionNames, written: dict[str, WrittenPartition], existing: set[str]) -> set[str]:
        if not self.static:
            found = names.all()
        elif set(self.static) == set(self.keys):
            found = [make_partition_name(self.keys, [self.static[k] for k in self.keys])]
        else:
            found = names.matching([(self.static[k] or DEFAULT_PARTITION) if k in self.static else "" for k in self.keys])
        matched = set(found)
        return matched if not self.hive_table else matched & (set(written) | self._spec_name())

    def _spec_name(self) -> set[str]:
        spec = self.spec_partition(self.keys)
        return {spec.folder} if spec is not None else set()

    def drops_unwritten(self) -> bool:
        return not self.hive_table


def write_mode(request: CommitRequest, keys: Sequence[str], hive_table: bool) -> WriteMode:
    """The mode a commit request names, for a table with partition columns ``keys``."""
    if request.mode == "append":
        return Append()
    if request.mode == "dynamic":
        return DynamicOverwrite()
    return OverwriteByFilter(dict(request.static), tuple(keys), hive_table)


@dataclass
class PartitionChanges:
    """What a commit does to a partitioned table's partitions, by partition name."""

    new: dict[str, WrittenPartition]
    replaced: dict[str, WrittenPartition]
    appended: dict[str, WrittenPartition]
    dropped: list[str]

    @classmethod
    def of(cls, mode: WriteMode, written: dict[str, WrittenPartition], existing: dict[str, ttypes.Partition],
           matched: set[str]) -> PartitionChanges:
        return cls(new={n: g for n, g in written.items() if n not in existing},
                   replaced={n: g for n, g in written.items() if n in existing and n in matched},
                   appended={n: g for n, g in written.items() if n in existing and n not in matched},
                   dropped=sorted(matched - set(written)) if mode.drops_unwritten() else [])
