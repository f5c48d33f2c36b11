"""An Iceberg data file's partition tuple, computed with pyiceberg's transforms from the file itself:
files of one partition get it, files whose rows span two partitions are refused, naming them."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.errors import ConfigurationError
from hms_catalog.write.iceberg_files import data_file


def _metadata(tmp_path: Path, transform: str, column: str) -> Any:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.table.metadata import new_table_metadata
    from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
    from pyiceberg.transforms import parse_transform
    from pyiceberg.types import LongType, NestedField, StringType, TimestampType

    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "s", StringType()), NestedField(3, "ts", TimestampType()))
    source = {"id": 1, "s": 2, "ts": 3}[column]
    spec = PartitionSpec(PartitionField(source, 1000, parse_transform(transform), "p"))
    return new_table_metadata(schema, spec, UNSORTED_SORT_ORDER, str(tmp_path), {})


def _file(tmp_path: Path, rows: list[tuple[int, str | None, datetime.datetime | None]]) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    def field(name: str, kind: Any, field_id: int) -> Any:
        return pa.field(name, kind, metadata={b"PARQUET:field_id": str(field_id).encode()})

    schema = pa.schema([field("id", pa.int64(), 1), field("s", pa.string(), 2), field("ts", pa.timestamp("us"), 3)])
    table = pa.Table.from_pylist([{"id": i, "s": s, "ts": ts} for i, s, ts in rows], schema=schema)
    path = tmp_path / f"f{len(list(tmp_path.iterdir()))}.parquet"
    pq.write_table(table, path)
    return str(path)


def _partition(tmp_path: Path, transform: str, column: str, rows: list[Any]) -> Any:
    from pyiceberg.io.pyarrow import PyArrowFileIO

    return data_file(PyArrowFileIO(), _metadata(tmp_path, transform, column), _file(tmp_path, rows)).partition[0]


NOON = datetime.datetime(2024, 3, 1, 12, 0)


def test_a_file_of_one_partition_gets_pyicebergs_value(tmp_path: Path) -> None:
    assert _partition(tmp_path, "day", "ts", [(1, "a", NOON), (2, "b", NOON + datetime.timedelta(hours=11))]) == 19783
    assert _partition(tmp_path, "truncate[2]", "s", [(1, "abc", NOON), (2, "abz", NOON)]) == "ab"
    assert _partition(tmp_path, "bucket[4]", "id", [(7, "a", NOON), (7, "b", NOON)]) == 3
    assert _partition(tmp_path, "bucket[2]", "id", [(0, "a", NOON), (4, "b", NOON)]) == 0  # both in bucket 0: read, not bounds
    assert _partition(tmp_path, "identity", "s", [(1, None, NOON)]) is None
    assert _partition(tmp_path, "void", "id", [(1, "a", NOON), (2, "b", NOON)]) is None


@pytest.mark.parametrize(("transform", "column", "rows"), [
    ("day", "ts", [(1, "a", NOON), (2, "b", NOON + datetime.timedelta(hours=12))]),
    ("bucket[4]", "id", [(1, "a", NOON), (7, "a", NOON)]),
    ("truncate[1]", "s", [(1, "a", NOON), (2, None, NOON)]),
    ("hour", "ts", [(1, "a", NOON), (2, "a", None)]),
])
def test_a_file_spanning_two_partitions_is_refused_naming_it(tmp_path: Path, transform: str, column: str, rows: list[Any]) -> None:
    with pytest.raises(ConfigurationError, match=r"data file .*\.parquet holds rows of two partitions"):
        _partition(tmp_path, transform, column, rows)
