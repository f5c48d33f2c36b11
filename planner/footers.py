"""What a data file's footer says of its rows and columns, read once per file version.

Parquet footers give, per row group and column chunk, the null count and the stored extremes; ORC footers,
as pyarrow exposes them, the row count only. A footer is read by opening the file's tail (pyarrow reads
the footer, not the data) and kept in the catalog's cache under the file's identity (path, size,
modification time), so a file rewritten in place is read again and an unchanged one never twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hms_catalog.cache import CatalogCaches
from hms_catalog.errors import PlanningError
from hms_catalog.storage.resolver import StorageResolver
from planner._parallel import run_all
from planner.aggregates import ColumnFacts, FileFacts

__all__ = ["file_facts", "parquet_facts", "orc_facts", "FileIdentity"]

FileIdentity = tuple[str, int, int]  # path, size, modification time (ms)


def parquet_facts(path: str, storage: StorageResolver) -> FileFacts:
    import pyarrow.parquet as pq

    filesystem, inner = storage.resolve(path)
    with filesystem.open_input_file(inner) as handle:
        metadata = pq.ParquetFile(handle).metadata
    top_level = {metadata.schema.column(i).path.split(".")[0].lower() for i in range(metadata.num_columns)}
    flat: dict[str, int] = {}
    for index in range(metadata.num_columns):
        column_path = metadata.schema.column(index).path
        if "." not in column_path:
            flat[column_path.lower()] = index
    columns: dict[str, ColumnFacts] = {}
    for name, index in flat.items():
        values: int | None = 0
        low: Any = None
        high: Any = None
        known = True
        for group in range(metadata.num_row_groups):
            chunk = metadata.row_group(group).column(index)
            rows = metadata.row_group(group).num_rows
            statistics = chunk.statistics if chunk.is_stats_set else None
            if statistics is None or not statistics.has_null_count:
                values = None
                break
            present = rows - statistics.null_count
            values = (values or 0) + present
            if present <= 0:
                continue
            if not statistics.has_min_max:
                known = False
                continue
            low = statistics.min if low is None or statistics.min < low else low
            high = statistics.max if high is None or statistics.max > high else high
        columns[name] = ColumnFacts(values, low, high, known and values is not None)
    return FileFacts(metadata.num_rows, columns, frozenset(top_level))


def orc_facts(path: str, storage: StorageResolver) -> FileFacts:
    import pyarrow.orc as orc

    filesystem, inner = storage.resolve(path)
    with filesystem.open_input_file(inner) as handle:
        reader = orc.ORCFile(handle)
        rows = int(reader.nrows)
        names = frozenset(name.lower() for name in reader.schema.names)
    return FileFacts(rows, {}, names)  # columns present, statistics unknown


_READERS = {"parquet": parquet_facts, "orc": orc_facts}


def file_facts(files: Sequence[FileIdentity], file_format: str, caches: CatalogCaches, parallelism: int,
               storage: StorageResolver) -> list[FileFacts]:
    """The facts of each file, from the cache or its footer (read in parallel, never twice)."""
    reader = _READERS.get(file_format)
    if reader is None:
        raise PlanningError(f"{file_format} files keep no row counts in a footer")
    found: dict[FileIdentity, FileFacts] = {}
    missing = []
    for identity in files:
        cached = caches.footers.peek(identity, used=True)
        if cached is None:
            missing.append(identity)
        else:
            found[identity] = cached

    def read(identity: FileIdentity) -> tuple[FileIdentity, FileFacts]:
        try:
            return identity, reader(identity[0], storage)
        except (OSError, ValueError) as error:
            raise PlanningError(f"cannot read the footer of {identity[0]}: {error}") from error

    if missing:
        ticket = caches.footers.ticket()
        # the first footer that cannot be read ends the reading: no file waits its turn at a store that is silent
        for identity, facts in run_all(lambda identity, _: read(identity), missing, parallelism):
            caches.footers.put(identity, facts, ticket=ticket)
            found[identity] = facts
    return [found[identity] for identity in files]
