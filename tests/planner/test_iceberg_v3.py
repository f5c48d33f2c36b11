"""The planner's refusals of what a v3 table's plan cannot carry to the Spark connector, on plain pyiceberg
metadata (no metastore, no files: a refusal is a pure function of the metadata and the delete files)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from hms_catalog.errors import UnsupportedTableError
from planner.iceberg_v3 import refuse_unreadable


def _metadata(version: int, *fields: Any) -> Any:
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
    from pyiceberg.schema import Schema
    from pyiceberg.table.metadata import new_table_metadata
    from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
    from pyiceberg.types import LongType, NestedField

    schema = Schema(NestedField(1, "id", LongType(), required=True), *fields)
    metadata = new_table_metadata(schema, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, "file:///t",
                                  {"format-version": str(version)})
    return metadata.model_copy(update={"schemas": [schema]})  # the defaults kept (fresh ids drop them)


def _delete(file_format: str) -> Any:
    from pyiceberg.manifest import FileFormat

    return SimpleNamespace(file_format=FileFormat(file_format.upper()))


def test_a_plain_v3_table_and_v2_tables_are_planned() -> None:
    from pyiceberg.types import NestedField, TimestampNanoType

    refuse_unreadable("db.t", _metadata(3), [_delete("parquet"), _delete("avro")])
    refuse_unreadable("db.t", _metadata(2), [_delete("puffin")])  # a v2 table has none: not looked at
    with pytest.raises(ValueError):  # pyiceberg itself keeps nanosecond timestamps out of v2
        _metadata(2, NestedField(2, "at", TimestampNanoType()))


def test_deletion_vectors_are_refused() -> None:
    with pytest.raises(UnsupportedTableError, match=r"db.t has 2 deletion vector\(s\)"):
        refuse_unreadable("db.t", _metadata(3), [_delete("puffin"), _delete("parquet"), _delete("puffin")])


def test_initial_defaults_and_nanosecond_timestamps_are_refused() -> None:
    from pyiceberg.types import IntegerType, NestedField, TimestamptzNanoType

    with pytest.raises(UnsupportedTableError, match=r"initial default \(tier\)"):
        refuse_unreadable("db.t", _metadata(3, NestedField(2, "tier", IntegerType(), initial_default=7)), [])
    refuse_unreadable("db.t", _metadata(3, NestedField(2, "tier", IntegerType(), write_default=7)), [])
    with pytest.raises(UnsupportedTableError, match=r"nanosecond timestamp columns \(at\)"):
        refuse_unreadable("db.t", _metadata(3, NestedField(2, "at", TimestamptzNanoType())), [])
