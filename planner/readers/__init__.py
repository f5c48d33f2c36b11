"""Reading one split as Arrow batches of a declared schema, for any file format a plan holds."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa

from hms_catalog.errors import UnsupportedTableError
from hms_catalog.formats.detect import TextFormat
from hms_catalog.formats.schema import Column
from hms_catalog.storage.resolver import StorageResolver
from planner.plan import Split
from planner.readers._common import FileChangedError
from planner.readers.avro import read_avro_split
from planner.readers.columnar import read_orc_split, read_parquet_split
from planner.readers.hudi_merge import read_merged_slice
from planner.readers.iceberg_deletes import read_with_deletes
from planner.readers.text import read_text_split

__all__ = ["read_split", "read_file_split", "FileChangedError"]


def read_split(split: Split, columns: Sequence[Column], target: pa.Schema, *, text: TextFormat | None = None,
               table_columns: Sequence[Column] | None = None,
               storage: StorageResolver | None = None) -> Iterator[pa.RecordBatch]:
    """The rows of ``split`` (those that belong to its byte range) as batches of exactly ``target``.

    ``columns`` are the wanted ones; ``table_columns`` all of the table's, in table order: text lines and
    old positional ORC files place values by position among those, not among the wanted ones. ``storage``
    is the catalog's (its endpoints and credentials); without one, only local files and object stores
    reachable with the environment's credentials are read.
    """
    storage = storage if storage is not None else StorageResolver()
    if split.delete_files:
        return _reading(split, read_with_deletes(split, columns, target, table_columns, storage), storage)
    if split.log_files:
        return _reading(split, read_merged_slice(split, columns, target, storage), storage)
    return read_file_split(split, columns, target, text=text, table_columns=table_columns, storage=storage)


def read_file_split(split: Split, columns: Sequence[Column], target: pa.Schema, *, text: TextFormat | None = None,
                    table_columns: Sequence[Column] | None = None,
                    storage: StorageResolver | None = None) -> Iterator[pa.RecordBatch]:
    """The rows of ``split``'s byte range of its one data file, with no deletes or logs applied."""
    storage = storage if storage is not None else StorageResolver()
    batches: Iterator[pa.RecordBatch]
    if split.file_format == "parquet":
        batches = read_parquet_split(split, columns, target, storage)
    elif split.file_format == "orc":
        batches = read_orc_split(split, columns, target, storage, table_columns)
    elif split.file_format == "avro":
        batches = read_avro_split(split, columns, target, storage)
    elif split.file_format in ("text", "csv", "json"):
        batches = read_text_split(split, columns, target, text, split.file_format, storage, table_columns)
    else:
        raise UnsupportedTableError(f"cannot read {split.file_format} files ({split.path})")
    return _reading(split, batches, storage)


def _reading(split: Split, batches: Iterator[pa.RecordBatch], storage: StorageResolver) -> Iterator[pa.RecordBatch]:
    """``batches``, with a store failing in the middle of a read (a dropped connection, a refused range
    request) reported as a StorageError naming the catalog and the split's file."""
    try:
        yield from batches
    except OSError as error:
        raise storage.error(split.path, error, "read") from error
