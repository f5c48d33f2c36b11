"""Reading a Hudi merge-on-read file slice (base file plus log files) as one merged snapshot."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa

from hms_catalog.errors import UnsupportedTableError
from hms_catalog.formats.schema import Column
from planner.plan import Split

__all__ = ["read_merged_slice"]


def read_merged_slice(split: Split, columns: Sequence[Column], target: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The slice's rows with its log files merged over its base file, as batches of exactly ``target``."""
    raise UnsupportedTableError(
        f"{split.path} has Hudi log files; merging them (a snapshot read) is not supported: read the _ro table"
    )
