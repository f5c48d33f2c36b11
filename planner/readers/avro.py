"""Avro object container splits: the blocks that start in the split, as Hadoop's Avro input format reads them.

A container is a header (ending with a 16-byte sync marker) and blocks, each followed by the same marker.
A split reads every block whose start lies in its byte range: the first one after the header when the
range holds it, else the one after the first sync marker found from the range's start. Those blocks, put
after the file's header, are a valid container of their own, which fastavro decodes; every block starts
in exactly one split, so across a file's splits each record is read once.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence

import pyarrow as pa

from hms_catalog.errors import UnsupportedTableError
from hms_catalog.formats.schema import Column
from hms_catalog.storage.resolver import StorageResolver
from planner.plan import Split
from planner.readers._common import open_split_file, rows_only, shape_batch

__all__ = ["read_avro_split"]

_MAGIC = b"Obj\x01"
_SYNC_BYTES = 16
_BATCH_ROWS = 65536


def read_avro_split(split: Split, columns: Sequence[Column], target: pa.Schema,
                    storage: StorageResolver) -> Iterator[pa.RecordBatch]:
    import fastavro

    partition_values = {k.lower(): v for k, v in split.partition_values}
    with open_split_file(split, storage) as handle:
        data = handle.read()
    header_end, sync = _header(data, split.path)
    blocks = _blocks_in_range(data, header_end, sync, split.start, split.start + split.length)
    if not blocks:
        return
    container = io.BytesIO(data[:header_end] + b"".join(data[start:end] for start, end in blocks))
    wanted = [c.name.lower() for c in columns if not c.partition]
    records: list[dict[str, object]] = []
    for record in fastavro.reader(container):
        assert isinstance(record, dict)
        records.append({key.lower(): value for key, value in record.items() if key.lower() in wanted})
        if len(records) == _BATCH_ROWS:
            yield _batch(records, columns, target, partition_values)
            records = []
    if records:
        yield _batch(records, columns, target, partition_values)


def _batch(records: list[dict[str, object]], columns: Sequence[Column], target: pa.Schema,
           partition_values: dict[str, str | None]) -> pa.RecordBatch:
    data_fields = [field for column, field in zip(columns, target) if not column.partition]
    if not data_fields:
        return shape_batch(rows_only(len(records)), columns, target, partition_values)
    schema = pa.schema([pa.field(field.name.lower(), field.type) for field in data_fields])
    return shape_batch(pa.Table.from_pylist(records, schema=schema), columns, target, partition_values)


def _header(data: bytes, path: str) -> tuple[int, bytes]:
    """Where the header ends (after its sync marker) and the marker."""
    if not data.startswith(_MAGIC):
        raise UnsupportedTableError(f"{path} is not an Avro object container file")
    position = len(_MAGIC)
    while True:  # the metadata map: blocks of (key, value) pairs, ended by a block of zero
        count, position = _long(data, position)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, position = _long(data, position)
        for _ in range(count * 2):
            length, position = _long(data, position)
            position += length
    sync = data[position : position + _SYNC_BYTES]
    return position + _SYNC_BYTES, sync


def _blocks_in_range(data: bytes, header_end: int, sync: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of each block, its sync marker included, that starts in ``[start, end)``."""
    if start <= header_end:
        position = header_end
    else:
        found = data.find(sync, start - _SYNC_BYTES)
        if found < 0:
            return []
        position = found + _SYNC_BYTES
    blocks = []
    while position < end and position < len(data):
        _, after_count = _long(data, position)
        size, after_size = _long(data, after_count)
        block_end = after_size + size + _SYNC_BYTES
        blocks.append((position, block_end))
        position = block_end
    return blocks


def _long(data: bytes, position: int) -> tuple[int, int]:
    """An Avro long (zig-zag varint) at ``position`` and the position after it."""
    shift = result = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), position
