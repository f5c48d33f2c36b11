"""Parquet and ORC splits: the row groups whose first byte, or the stripes whose offset, lies in the split.

Every row group (stripe) starts in exactly one split, so across a file's splits each row is read once.
A read that needs no data column (``count(*)``) takes row counts from the footer and decodes nothing.
``split_row_spans`` says where the rows a split reads sit in their file (Iceberg position deletes count
rows from the file's start).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq

from hms_catalog.errors import UnsupportedTableError
from hms_catalog.formats.schema import Column
from hms_catalog.storage.resolver import StorageResolver
from planner.plan import Split
from planner.readers._common import open_split_file, rows_only, shape_batch

__all__ = ["read_parquet_split", "read_orc_split", "parquet_row_groups", "orc_stripes", "split_row_spans"]


def parquet_row_groups(metadata: pq.FileMetaData, start: int, length: int) -> list[int]:
    """Row groups whose first byte (dictionary page or first data page of the first column) is in range."""
    chosen = []
    for index in range(metadata.num_row_groups):
        column = metadata.row_group(index).column(0)
        first = column.dictionary_page_offset if column.has_dictionary_page and column.dictionary_page_offset else column.data_page_offset
        if start <= first < start + length:
            chosen.append(index)
    return chosen


def _spans(rows: Sequence[int], chosen: Sequence[int]) -> list[tuple[int, int]]:
    firsts, first = [], 0
    for count in rows:
        firsts.append(first)
        first += count
    return [(firsts[index], rows[index]) for index in chosen]


def split_row_spans(split: Split, storage: StorageResolver) -> list[tuple[int, int]]:
    """(first row in the file, rows) of each row group or stripe that reading ``split`` returns, in the
    order it returns them: the rows of a read are these spans one after the other."""
    with open_split_file(split, storage) as handle:
        if split.file_format == "parquet":
            metadata = pq.ParquetFile(handle).metadata
            rows = [metadata.row_group(index).num_rows for index in range(metadata.num_row_groups)]
            return _spans(rows, parquet_row_groups(metadata, split.start, split.length))
        if split.file_format == "orc":
            stripes = orc_stripes(orc.ORCFile(handle).reader.serialized_file_tail())
            return _spans([count for _, count in stripes], orc_split_stripes(stripes, split.start, split.length))
    raise UnsupportedTableError(f"{split.file_format} files have no row groups or stripes ({split.path})")


def _file_columns(names: Sequence[str], wanted: Sequence[Column]) -> list[str]:
    by_lower = {name.lower(): name for name in names}
    return [by_lower[c.name.lower()] for c in wanted if not c.partition and c.name.lower() in by_lower]


def _by_field_id(schema: pa.Schema, wanted: Sequence[Column]) -> dict[str, str] | None:
    """Current column name -> file column name, matched by Iceberg field id (renames keep ids); None when
    the columns or the file carry no ids (then names match)."""
    if not any(c.field_id is not None for c in wanted):
        return None
    ids = {}
    for field in schema:
        raw = (field.metadata or {}).get(b"PARQUET:field_id")
        if raw is not None:
            ids[int(raw)] = field.name
    if not ids:
        return None
    return {c.name.lower(): ids[c.field_id] for c in wanted if not c.partition and c.field_id in ids}


def read_parquet_split(split: Split, columns: Sequence[Column], target: pa.Schema, storage: StorageResolver,
                       batch_rows: int = 262144) -> Iterator[pa.RecordBatch]:
    partition_values = {k.lower(): v for k, v in split.partition_values}
    with open_split_file(split, storage) as handle:
        # INT96 (Spark's default for timestamps) read as nanoseconds overflows past 2262: read microseconds.
        parquet = pq.ParquetFile(handle, coerce_int96_timestamp_unit="us")
        groups = parquet_row_groups(parquet.metadata, split.start, split.length)
        if not groups:
            return
        if not any(not c.partition for c in columns):
            rows = sum(parquet.metadata.row_group(g).num_rows for g in groups)
            yield shape_batch(rows_only(rows), columns, target, partition_values)
            return
        renames = _by_field_id(parquet.schema_arrow, columns)
        if renames is None:
            for batch in parquet.iter_batches(batch_size=batch_rows, row_groups=groups,
                                              columns=_file_columns(parquet.schema_arrow.names, columns)):
                yield shape_batch(batch, columns, target, partition_values)
            return
        if not renames:  # only columns added after this file was written: all NULL, the rows still count
            for group in groups:
                yield shape_batch(rows_only(parquet.metadata.row_group(group).num_rows), columns, target, partition_values)
            return
        current = list(renames)
        for batch in parquet.iter_batches(batch_size=batch_rows, row_groups=groups, columns=list(dict.fromkeys(renames.values()))):
            renamed = pa.RecordBatch.from_arrays([batch.column(renames[name]) for name in current], names=current)
            yield shape_batch(renamed, columns, target, partition_values)


def orc_stripes(tail: bytes) -> list[tuple[int, int]]:
    """(offset, rows) of each stripe, from ORC's serialized FileTail (footer field 3: StripeInformation)."""
    footer = _field(tail, 2)
    stripes = []
    for info in _fields(footer or b"", 3):
        values = dict(_varints(info))
        stripes.append((values.get(1, 0), values.get(5, 0)))
    return stripes


def orc_split_stripes(stripes: Sequence[tuple[int, int]], start: int, length: int) -> list[int]:
    """Stripes whose offset is in range."""
    return [index for index, (offset, _) in enumerate(stripes) if start <= offset < start + length]


def read_orc_split(split: Split, columns: Sequence[Column], target: pa.Schema, storage: StorageResolver,
                   table_columns: Sequence[Column] | None = None) -> Iterator[pa.RecordBatch]:
    partition_values = {k.lower(): v for k, v in split.partition_values}
    with open_split_file(split, storage) as handle:
        reader = orc.ORCFile(handle)
        stripe_rows = orc_stripes(reader.reader.serialized_file_tail())
        stripes = orc_split_stripes(stripe_rows, split.start, split.length)
        if not stripes:
            return
        if not any(not c.partition for c in columns):
            yield shape_batch(rows_only(sum(stripe_rows[i][1] for i in stripes)), columns, target, partition_values)
            return
        names = reader.schema.names
        positional = all(name.startswith("_col") for name in names)  # files written by old Hive: match by position
        data = [c for c in columns if not c.partition]
        table_data = [c for c in (table_columns if table_columns is not None else columns) if not c.partition]
        for index in stripes:
            if positional:
                stripe = reader.read_stripe(index)
                count = min(stripe.num_columns, len(table_data))  # the file's columns are the table's, in order
                renamed = pa.RecordBatch.from_arrays(stripe.columns[:count], names=[c.name for c in table_data[:count]])
                yield shape_batch(renamed, columns, target, partition_values)
            else:
                yield shape_batch(reader.read_stripe(index, columns=_file_columns(names, data)), columns, target, partition_values)


# A minimal reader of protobuf's wire format: enough for ORC's stripe list. -----------------------------


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7


def _entries(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = _varint(data, position)
            yield number, wire, value
        elif wire == 2:
            size, position = _varint(data, position)
            yield number, wire, data[position : position + size]
            position += size
        elif wire == 1:
            yield number, wire, data[position : position + 8]
            position += 8
        elif wire == 5:
            yield number, wire, data[position : position + 4]
            position += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def _field(data: bytes, number: int) -> bytes | None:
    for n, wire, value in _entries(data):
        if n == number and wire == 2 and isinstance(value, bytes):  # wire type 2: length-delimited bytes
            return value
    return None


def _fields(data: bytes, number: int) -> list[bytes]:
    return [value for n, wire, value in _entries(data) if n == number and wire == 2]  # type: ignore[misc]


def _varints(data: bytes) -> Iterator[tuple[int, int]]:
    return ((n, value) for n, wire, value in _entries(data) if wire == 0)  # type: ignore[misc]
