"""Tables with real parquet files in the faults metastore."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.support import hms

__all__ = ["partitioned_table", "write_parquet"]

_files = itertools.count(1)


def write_parquet(directory: Path, ids: range) -> Path:
    """A parquet file of ``ids`` in ``directory``, written under a hidden name then renamed, as writers
    commit files: a listing never sees half of one."""
    directory.mkdir(parents=True, exist_ok=True)
    name = f"part-{os.getpid()}-{next(_files):05d}.parquet"
    temporary = directory / f".{name}.inprogress"
    pq.write_table(pa.table({"id": pa.array(list(ids), pa.int64())}), temporary)
    final = directory / name
    os.replace(temporary, final)
    return final


def partitioned_table(admin: hms.Admin, database: str, table: str, partitions: list[str]) -> Path:
    """``database.table`` (id BIGINT) partitioned by ``p``, one parquet file per partition; returns its root."""
    admin.create_database(database)
    admin.create_table(database, table, [("id", "bigint")], partition_keys=[("p", "string")])
    root = admin.warehouse / f"{database}.db" / table
    for value in partitions:
        admin.add_partition(database, table, [value], root / f"p={value}")
        write_parquet(root / f"p={value}", range(10))
    return root
