"""What every file reader shares: opening a split's file safely, and shaping batches to the schema.

Readers return Arrow batches of exactly the declared schema (Spark's Python data source requires it):
columns matched by name case-insensitively (the metastore lower-cases names, writers may not), absent
columns as nulls, types cast to the declared ones (timestamps to microseconds in UTC), and partition
columns filled from the split's partition values in their declared types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from hms_catalog.errors import ErrorKind, PlanningError
from hms_catalog.formats.partition_values import typed_value
from hms_catalog.formats.schema import Column
from hms_catalog.storage.resolver import StorageResolver
from planner.plan import Split

if TYPE_CHECKING:
    import pyarrow.fs as pafs

__all__ = ["FileChangedError", "open_split_file", "open_found", "shape_batch", "partition_array", "rows_only"]


class FileChangedError(PlanningError):
    """A file vanished or changed between planning and reading: the plan is stale."""

    error_kind = ErrorKind.STALE


def open_split_file(split: Split, storage: StorageResolver) -> pa.NativeFile:
    """Open the split's file with the catalog's storage settings, checking it is the file that was planned
    (same length, same mtime)."""
    import pyarrow.fs as pafs

    filesystem, path = storage.resolve(split.path)
    gone = f"{split.path} no longer exists; the plan is stale: run REFRESH TABLE and plan again"
    try:
        info = filesystem.get_file_info(path)
    except OSError as error:  # refused (credentials, bucket) or unreachable: say which catalog and file
        raise storage.error(split.path, error, "read") from error
    if info.type == pafs.FileType.NotFound:
        raise FileChangedError(gone)
    mtime = int(info.mtime_ns // 1_000_000) if info.mtime_ns is not None else None
    changed_time = split.modification_time not in (None, 0) and mtime is not None and mtime != split.modification_time
    if info.size != split.file_length or changed_time:
        raise FileChangedError(
            f"{split.path} changed since it was planned (length {split.file_length} -> {info.size}); "
            "run REFRESH TABLE and plan again"
        )
    return open_found(filesystem, path, gone, storage, split.path)


def open_found(filesystem: pafs.FileSystem, path: str, gone: str, storage: StorageResolver,
               location: str) -> pa.NativeFile:
    """Open a file that was there a moment ago; one removed since (a cleaner, a concurrent overwrite) is
    the stale plan ``gone`` describes, not a bare FileNotFoundError from deep inside Arrow, and a store's
    refusal names the catalog and ``location``."""
    try:
        return filesystem.open_input_file(path)
    except FileNotFoundError as error:
        raise FileChangedError(gone) from error
    except OSError as error:
        raise storage.error(location, error, "read") from error


def rows_only(rows: int) -> pa.RecordBatch:
    """A batch of ``rows`` rows and no column (a null column dropped keeps the count; no memory used)."""
    return pa.RecordBatch.from_arrays([pa.nulls(rows)], names=["rows"]).select([])


def partition_array(column: Column, value: str | None, rows: int, target: pa.DataType) -> pa.Array:
    typed = typed_value(value, column.type)
    return pa.array([typed] * rows, type=target) if typed is not None else pa.nulls(rows, type=target)


def _cast(array: pa.Array | pa.ChunkedArray, target: pa.DataType) -> pa.Array:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.type.equals(target):
        return array
    if pa.types.is_timestamp(array.type) and pa.types.is_timestamp(target) and array.type.tz is None and target.tz is not None:
        array = pc.assume_timezone(array, "UTC") if array.type.unit == target.unit else pc.assume_timezone(
            array.cast(pa.timestamp(array.type.unit)), "UTC")
    return array.cast(target, safe=False)


def shape_batch(
    table: pa.Table | pa.RecordBatch,
    columns: Sequence[Column],
    target: pa.Schema,
    partition_values: dict[str, str | None],
) -> pa.RecordBatch:
    """``table`` (as read from a file) turned into a batch of exactly ``target``'s fields."""
    rows = table.num_rows
    by_name = {name.lower(): index for index, name in enumerate(table.schema.names)}
    arrays = []
    for column, field in zip(columns, target):
        if column.partition:
            arrays.append(partition_array(column, partition_values.get(column.name.lower()), rows, field.type))
            continue
        index = by_name.get(column.name.lower())
        if index is None:
            arrays.append(pa.nulls(rows, type=field.type))
        else:
            arrays.append(_cast(table.column(index), field.type))
    if not arrays:
        return rows_only(rows)
    return pa.RecordBatch.from_arrays(arrays, schema=target)
