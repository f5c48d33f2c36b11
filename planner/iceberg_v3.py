"""What of Iceberg format version 3 a plan cannot carry to its readers, refused at planning with the reason.

A plan's splits name data files and the delete files that apply to them; the Spark connector reads Parquet data
and Parquet/Avro position and equality deletes. Three things of v3 it would read wrong, or fail on half-way
through a job, so the planner refuses them up front, naming the table and what to do:

- deletion vectors (position deletes in Puffin files): read as a Parquet delete file they would delete nothing;
- a column with an ``initial-default``: the value of rows in files written before the column was added, which
  a reader that fills missing columns with nulls would answer as null;
- ``timestamp_ns`` / ``timestamptz_ns`` columns: Spark has no nanosecond timestamp, and its Parquet reader
  refuses the files.

Everything else of v3 (row lineage ids, write defaults, a v2 table upgraded to v3) changes nothing a reader
reads, and is planned as v2 is. REST scan planning (:mod:`service.iceberg_rest.scans`) hands tasks to Iceberg
clients, which read these themselves, and is not held to this.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hms_catalog.errors import UnsupportedTableError

__all__ = ["refuse_unreadable"]

_NANO_TIMESTAMPS = ("timestamp_ns", "timestamptz_ns")


def _deletion_vectors(delete_files: Iterable[Any]) -> int:
    return sum(1 for d in delete_files if d.file_format.name.lower() == "puffin")


def refuse_unreadable(name: str, metadata: Any, delete_files: Iterable[Any]) -> None:
    """UnsupportedTableError if the table ``name`` (its pyiceberg ``metadata``, the delete files its scan
    tasks carry) has any of the module's three; nothing for a table below v3, which has none."""
    if metadata.format_version < 3:
        return
    fields = list(metadata.schema()._lazy_id_to_field.values())
    vectors = _deletion_vectors(delete_files)
    if vectors:
        raise UnsupportedTableError(f"Iceberg table {name} has {vectors} deletion vector(s) (format version 3 position "
                                    "deletes in Puffin files), which the Spark connector does not read: read it with "
                                    "an Iceberg client (Spark's Iceberg REST catalog on this service), or rewrite its "
                                    "deletes")
    defaulted = [f.name for f in fields if f.initial_default is not None]
    if defaulted:
        raise UnsupportedTableError(f"Iceberg table {name} has columns with an initial default ({', '.join(defaulted)}), "
                                    "which the Spark connector would read as null in files written before the column "
                                    "was added: read it with an Iceberg client (Spark's Iceberg REST catalog on this "
                                    "service)")
    nanos = [f.name for f in fields if str(f.field_type) in _NANO_TIMESTAMPS]
    if nanos:
        raise UnsupportedTableError(f"Iceberg table {name} has nanosecond timestamp columns ({', '.join(nanos)}), which "
                                    "Spark has no type for: read it with an Iceberg client")
