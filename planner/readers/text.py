"""Text splits: Hadoop's line-record rule, then the table's serde.

Line rule (LineRecordReader): a split that does not start at byte 0 skips to the first line that starts
after its start; every split reads the lines that start at or before its end, so it finishes the line
it is in. Each line of a file is therefore read by exactly one split. Compressed files are one split.

Serdes: LazySimpleSerDe (field, collection and map-key delimiters, then \\x04.. for deeper nesting;
escape character; null format, ``\\N`` by default; values a type cannot hold are NULL), OpenCSVSerde
(every column a string), JSON lines, and Spark's CSV data source tables.
"""

from __future__ import annotations

import base64
import csv
import datetime
import gzip
import io
import json
from collections.abc import Iterator, Sequence
from decimal import Decimal, InvalidOperation

import pyarrow as pa

from hms_catalog.formats.detect import TextFormat
from hms_catalog.formats.schema import Column
from hms_catalog.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    MapType,
    StructType,
    TimestampNtzType,
    TimestampType,
)
from planner.partition_values import typed_value
from planner.plan import Split
from planner.readers._common import open_split_file, shape_batch

__all__ = ["read_text_split", "split_lines", "parse_value"]

_CHUNK = 1 << 20
_COMPRESSED = (".gz", ".gzip")


def split_lines(data: io.RawIOBase | io.BufferedIOBase, start: int, end: int) -> Iterator[bytes]:
    """The lines (without their end) that belong to the split ``[start, end)`` of a seekable stream."""
    data.seek(start)
    buffer = b""
    position = start  # file offset of buffer[0]
    if start != 0:
        while True:  # discard through the first newline at or after start
            chunk = data.read(_CHUNK)
            if not chunk:
                return
            newline = chunk.find(b"\n")
            if newline >= 0:
                buffer = chunk[newline + 1 :]
                position += newline + 1
                break
            position += len(chunk)
    while position <= end:
        newline = buffer.find(b"\n")
        while newline < 0:
            chunk = data.read(_CHUNK)
            if not chunk:
                if buffer:
                    yield buffer.rstrip(b"\r")
                return
            buffer += chunk
            newline = buffer.find(b"\n")
        yield buffer[:newline].rstrip(b"\r")
        buffer = buffer[newline + 1 :]
        position += newline + 1


def _split_escaped(text: str, separator: str, escape: str | None) -> list[str]:
    if not escape or escape not in text:
        return text.split(separator)
    parts, current, index = [], [], 0
    while index < len(text):
        char = text[index]
        if char == escape and index + 1 < len(text):
            current.append(text[index + 1])
            index += 2
            continue
        if char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    return parts


def parse_value(text: str | None, kind: DataType | None, separators: Sequence[str], level: int, fmt: TextFormat) -> object:
    """A LazySimpleSerDe field as a Python value of ``kind`` (None when NULL or unreadable)."""
    if text is None or text == fmt.null_format:
        return None
    if isinstance(kind, ArrayType):
        if text == "":
            return []
        return [parse_value(item, kind.element, separators, level + 1, fmt)
                for item in _split_escaped(text, separators[level], fmt.escape_char)]
    if isinstance(kind, MapType):
        if text == "":
            return []
        entries = []
        for entry in _split_escaped(text, separators[level], fmt.escape_char):
            key, _, value = entry.partition(separators[level + 1])
            entries.append((parse_value(key, kind.key, separators, level + 2, fmt),
                            parse_value(value, kind.value, separators, level + 2, fmt)))
        return entries
    if isinstance(kind, StructType):
        parts = _split_escaped(text, separators[level], fmt.escape_char)
        return {field.name: parse_value(parts[i] if i < len(parts) else None, field.type, separators, level + 1, fmt)
                for i, field in enumerate(kind.fields)}
    return _primitive(text, kind)


def _primitive(text: str, kind: DataType | None) -> object:
    if isinstance(kind, BinaryType):
        try:
            return base64.b64decode(text, validate=False)
        except ValueError:
            return text.encode()
    if isinstance(kind, (TimestampType, TimestampNtzType)):
        try:
            value = datetime.datetime.fromisoformat(text.strip().replace(" ", "T", 1))
        except ValueError:
            return None
        return value.replace(tzinfo=datetime.timezone.utc) if isinstance(kind, TimestampType) and value.tzinfo is None else value
    if isinstance(kind, DecimalType):
        try:
            value = Decimal(text.strip())
        except InvalidOperation:
            return None
        quantized = value.quantize(Decimal(1).scaleb(-kind.scale))
        return quantized if len(quantized.as_tuple().digits) <= kind.precision else None
    if isinstance(kind, (FloatType, DoubleType)):
        try:
            return float(text)
        except ValueError:
            return None
    if isinstance(kind, BooleanType):
        lowered = text.strip().lower()
        return True if lowered == "true" else False if lowered == "false" else None
    if isinstance(kind, DateType):
        try:
            return datetime.date.fromisoformat(text.strip()[:10])
        except ValueError:
            return None
    value = typed_value(text.strip() if kind is not None and not _is_text(kind) else text, kind)
    return value


def _is_text(kind: DataType) -> bool:
    from planner.partition_values import is_string_type

    return is_string_type(kind)


def _rows_lazy_simple(lines: Iterator[bytes], columns: Sequence[Column], fmt: TextFormat) -> Iterator[list[object]]:
    separators = [fmt.field_delimiter, fmt.collection_delimiter, fmt.map_key_delimiter] + [chr(c) for c in range(4, 9)]
    data = [c for c in columns if not c.partition]
    for raw in lines:
        fields = _split_escaped(raw.decode("utf-8", errors="replace"), fmt.field_delimiter, fmt.escape_char)
        yield [parse_value(fields[i] if i < len(fields) else None, c.type, separators, 1, fmt) for i, c in enumerate(data)]


def _rows_csv(lines: Iterator[bytes], columns: Sequence[Column], fmt: TextFormat, *, typed: bool) -> Iterator[list[object]]:
    data = [c for c in columns if not c.partition]
    for raw in lines:
        reader = csv.reader([raw.decode("utf-8", errors="replace")], delimiter=fmt.field_delimiter,
                            quotechar=fmt.quote_char or '"', escapechar=fmt.escape_char or None)
        fields = next(reader, [])
        row: list[object] = []
        for index, column in enumerate(data):
            text = fields[index] if index < len(fields) else None
            if not typed:
                row.append(text)
            else:
                row.append(None if text in (None, "") else _primitive(text, column.type))
        yield row


def _rows_json(lines: Iterator[bytes], columns: Sequence[Column]) -> Iterator[list[object]]:
    data = [c for c in columns if not c.partition]
    for raw in lines:
        if not raw.strip():
            continue
        record = {str(k).lower(): v for k, v in json.loads(raw).items()}
        yield [record.get(c.name.lower()) for c in data]


def read_text_split(split: Split, columns: Sequence[Column], target: pa.Schema, fmt: TextFormat | None,
                    file_format: str, batch_rows: int = 8192) -> Iterator[pa.RecordBatch]:
    fmt = fmt or TextFormat()
    partition_values = {k.lower(): v for k, v in split.partition_values}
    data_columns = [c for c in columns if not c.partition]
    data_target = pa.schema([field for c, field in zip(columns, target) if not c.partition])
    with open_split_file(split) as handle:
        if split.path.lower().endswith(_COMPRESSED):
            stream: io.BufferedIOBase = io.BytesIO(gzip.decompress(handle.read()))
            lines = split_lines(stream, 0, 1 << 62)
        else:
            lines = split_lines(handle, split.start, split.start + split.length)  # type: ignore[arg-type]
        if file_format == "json":
            rows = _rows_json(lines, columns)
        elif file_format == "csv":
            rows = _rows_csv(lines, columns, fmt, typed=not fmt.all_columns_string)
        else:
            rows = _rows_lazy_simple(lines, columns, fmt)
        batch: list[list[object]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= batch_rows:
                yield _to_batch(batch, data_columns, data_target, columns, target, partition_values)
                batch = []
        if batch:
            yield _to_batch(batch, data_columns, data_target, columns, target, partition_values)


def _to_batch(rows: list[list[object]], data_columns: Sequence[Column], data_target: pa.Schema,
              columns: Sequence[Column], target: pa.Schema, partition_values: dict[str, str | None]) -> pa.RecordBatch:
    arrays = [pa.array([row[i] for row in rows], type=field.type) for i, field in enumerate(data_target)]
    if not arrays:
        table = pa.RecordBatch.from_arrays([pa.nulls(len(rows))], names=["rows"]).select([])
    else:
        table = pa.RecordBatch.from_arrays(arrays, schema=data_target)
    return shape_batch(table, columns, target, partition_values)
