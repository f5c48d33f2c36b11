"""Reading one split as Arrow batches of a declared schema, for any file format a plan holds."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa

from hms_catalog.errors import UnsupportedTableError
from hms_catalog.formats.detect import TextFormat
from hms_catalog.formats.schema import Column
from planner.plan import Split
from planner.readers._common import FileChangedError
from planner.readers.avro import read_avro_split
from planner.readers.columnar import read_orc_split, read_parquet_split
from planner.readers.hudi_merge import read_merged_slice
from planner.readers.iceberg_deletes import read_with_deletes
from planner.readers.text import read_text_split

__all__ = ["read_split", "read_file_split", "FileChangedError"]


def read_split(split: Split, columns: Sequence[Column], target: pa.Schema, *, text: TextFormat | None = None,
               table_columns: Sequence[Column] | None = None) -> Iterator[pa.RecordBatch]:
    """The rows of ``split`` (those that belong to its byte range) as batches of exactly ``target``.

    ``columns`` are the wanted ones; ``table_columns`` all of the table's, in table order: text lines and
    old positional ORC files place values by position among those, not among the wanted ones.
    """
    if split.delete_files:
        return read_with_deletes(split, columns, target, table_columns)
    if split.log_files:
        return read_merged_slice(split, columns, target)
    return read_file_split(split, columns, target, text=text, table_columns=table_columns)


def read_file_split(split: Split, columns: Sequence[Column], target: pa.Schema, *, text: TextFormat | None = None,
                    table_columns: Sequence[Column] | None = None) -> Iterator[pa.RecordBatch]:
    """The rows of ``split``'s byte range of its one data file, with no deletes or logs applied."""
    if split.file_format == "parquet":
        return read_parquet_split(split, columns, target)
    if split.file_format == "orc":
        return read_orc_split(split, columns, target, table_columns)
    if split.file_format == "avro":
        return read_avro_split(split, columns, target)
    if split.file_format in ("text", "csv", "json"):
        return read_text_split(split, columns, target, text, split.file_format, table_columns)
    raise UnsupportedTableError(f"cannot read {split.file_format} files ({split.path})")
