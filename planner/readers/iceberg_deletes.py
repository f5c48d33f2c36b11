"""Applying an Iceberg split's delete files (position and equality deletes) to the rows read from it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa

from hms_catalog.errors import UnsupportedTableError
from hms_catalog.formats.schema import Column
from planner.plan import Split

__all__ = ["read_with_deletes"]


def read_with_deletes(split: Split, columns: Sequence[Column], target: pa.Schema,
                      table_columns: Sequence[Column] | None) -> Iterator[pa.RecordBatch]:
    """The split's rows minus those its delete files remove, as batches of exactly ``target``."""
    raise UnsupportedTableError(
        f"{split.path} has {len(split.delete_files)} Iceberg delete file(s); reading deletes is not supported yet"
    )
