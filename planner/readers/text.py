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
import itertools
import json
from collections.abc import Iterator, Sequence
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation

import pyarrow as pa

from hms_catalog.errors import UnsupportedTableError
from hms_catalog.formats.detect import TextFormat
from hms_catalog.formats.partition_values import typed_value
from hms_catalog.formats.schema import Column
from hms_catalog.storage.resolver import StorageResolver
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
from planner.plan import Split
from planner.readers._common import open_split_file, rows_only, shape_batch

__all__ = ["read_text_split", "split_lines", "parse_value"]

_CHUNK = 1 << 20
_CODECS = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".deflate": "zlib", ".zst": "zstd", ".zstd": "zstd",
           ".xz": "xz"}


def split_lines(data: io.RawIOBase | io.BufferedIOBase, start: int, end: int) -> Iterator[bytes]:
    """The lines (without their end) that belong to the split ``[start, end)`` of a seekable stream."""
    data.seek(start)
    buffer = b""
    cursor = 0  # index in buffer of the next unread byte
    position = start  # file offset of buffer[cursor]
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
        newline = buffer.find(b"\n", cursor)
        while newline < 0:
            chunk = data.read(_CHUNK)
            if not chunk:
                if cursor < len(buffer):
                    yield buffer[cursor:].rstrip(b"\r")
                return
            buffer = buffer[cursor:] + chunk  # compact only when refilling: linear in the file size
            cursor = 0
            newline = buffer.find(b"\n")
        yield buffer[cursor:newline].rstrip(b"\r")
        position += newline + 1 - cursor
        cursor = newline + 1


def _split_escaped(text: str, separator: str, escape: str | None) -> list[str]:
    """Split on ``separator`` except where escaped; escapes stay in the parts (removed at the leaves)."""
    if not escape or escape not in text:
        return text.split(separator)
    parts, begin, index = [], 0, 0
    while index < len(text):
        char = text[index]
        if char == escape:
            index += 2
            continue
        if char == separator:
            parts.append(text[begin:index])
            begin = index + 1
        index += 1
    parts.append(text[begin:])
    return parts


_ESCAPED = {"n": "\n", "r": "\r"}


def _unescape(text: str, escape: str | None) -> str:
    """LazySimpleSerDe's unescaping of a leaf value: ``\\n`` and ``\\r`` are newline and CR, others literal."""
    if not escape or escape not in text:
        return text
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char == escape and index + 1 < len(text):
            following = text[index + 1]
            out.append(_ESCAPED.get(following, following))
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


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
            pair = _split_escaped(entry, separators[level + 1], fmt.escape_char)
            key, value = pair[0], separators[level + 1].join(pair[1:]) if len(pair) > 1 else None
            entries.append((parse_value(key, kind.key, separators, level + 2, fmt),
                            parse_value(value, kind.value, separators, level + 2, fmt)))
        return entries
    if isinstance(kind, StructType):
        parts = _split_escaped(text, separators[level], fmt.escape_char)
        return {field.name: parse_value(parts[i] if i < len(parts) else None, field.type, separators, level + 1, fmt)
                for i, field in enumerate(kind.fields)}
    return _primitive(_unescape(text, fmt.escape_char), kind)


def _primitive(text: str, kind: DataType | None) -> object:
    if isinstance(kind, BinaryType):
        try:  # Hive decodes base64 when the bytes are base64, and keeps them as they are otherwise
            return base64.b64decode(text, validate=True)
        except ValueError:
            return text.encode()
    if isinstance(kind, (TimestampType, TimestampNtzType)):
        try:
            value = datetime.datetime.fromisoformat(text.strip().replace(" ", "T", 1))
        except ValueError:
            return None
        return value.replace(tzinfo=datetime.UTC) if isinstance(kind, TimestampType) and value.tzinfo is None else value
    if isinstance(kind, DecimalType):
        return _decimal(text.strip(), kind)
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
    return typed_value(text.strip() if kind is not None and not _is_text(kind) else text, kind)


_DECIMALS = Context(prec=80, rounding=ROUND_HALF_UP)


def _decimal(text: str, kind: DecimalType) -> Decimal | None:
    """Hive's rule: round half up to the scale; NULL when it does not fit the precision or is not finite."""
    try:
        value = _DECIMALS.create_decimal(text)
    except (InvalidOperation, ValueError):
        return None
    if not value.is_finite():
        return None
    quantized = value.quantize(Decimal(1).scaleb(-kind.scale), context=_DECIMALS)
    digits = len(quantized.as_tuple().digits)
    return quantized if max(digits, kind.scale) <= kind.precision else None


def _is_text(kind: DataType) -> bool:
    from hms_catalog.formats.partition_values import is_string_type

    return is_string_type(kind)


def _positions(columns: Sequence[Column], table_columns: Sequence[Column]) -> list[tuple[int, Column]]:
    """Where each wanted data column sits in a line: its place among the table's data columns."""
    index = {c.name.lower(): i for i, c in enumerate(c for c in table_columns if not c.partition)}
    return [(index[c.name.lower()], c) for c in columns if not c.partition]


def _rows_lazy_simple(lines: Iterator[bytes], positions: list[tuple[int, Column]], fmt: TextFormat) -> Iterator[list[object]]:
    separators = [fmt.field_delimiter, fmt.collection_delimiter, fmt.map_key_delimiter] + [chr(c) for c in range(4, 9)]
    for raw in lines:
        fields = _split_escaped(raw.decode("utf-8", errors="replace"), fmt.field_delimiter, fmt.escape_char)
        yield [parse_value(fields[i] if i < len(fields) else None, c.type, separators, 1, fmt) for i, c in positions]


def _rows_csv(lines: Iterator[bytes], positions: list[tuple[int, Column]], fmt: TextFormat, *, typed: bool) -> Iterator[list[object]]:
    for raw in lines:
        reader = csv.reader([raw.decode("utf-8", errors="replace")], delimiter=fmt.field_delimiter,
                            quotechar=fmt.quote_char or '"', escapechar=fmt.escape_char or None)
        fields = next(reader, [])
        row: list[object] = []
        for index, column in positions:
            text = fields[index] if index < len(fields) else None
            if not typed:
                row.append(text)
            else:
                row.append(None if text in (None, "") else _primitive(text, column.type))
        yield row


def _json_value(value: object, kind: DataType | None) -> object:
    if value is None or isinstance(value, (dict, list)):
        return value
    if isinstance(kind, DecimalType):
        return _decimal(str(value), kind)
    if isinstance(value, str) and not (kind is None or _is_text(kind)):
        return _primitive(value, kind)
    return value


def _rows_json(lines: Iterator[bytes], columns: Sequence[Column]) -> Iterator[list[object]]:
    data = [c for c in columns if not c.partition]
    for raw in lines:
        if not raw.strip():
            continue
        record = {str(k).lower(): v for k, v in json.loads(raw).items()}
        yield [_json_value(record.get(c.name.lower()), c.type) for c in data]


def _decompressed(handle: pa.NativeFile, path: str) -> io.BufferedIOBase | None:
    """The whole decompressed file for a compressed one (always a single split); None when not compressed."""
    from planner.splitter import UNSPLITTABLE_SUFFIXES

    lowered = path.lower()
    suffix = next((s for s in UNSPLITTABLE_SUFFIXES if lowered.endswith(s)), None)
    if suffix is None:
        return None
    codec = _CODECS.get(suffix)
    raw = handle.read()
    if codec == "gzip":
        return io.BytesIO(gzip.decompress(raw))
    if codec == "bz2":
        import bz2

        return io.BytesIO(bz2.decompress(raw))
    if codec == "zlib":
        import zlib

        return io.BytesIO(zlib.decompress(raw))
    if codec == "xz":
        import lzma

        return io.BytesIO(lzma.decompress(raw))
    if codec == "zstd":
        with pa.CompressedInputStream(pa.BufferReader(raw), "zstd") as stream:
            return io.BytesIO(stream.read())
    raise UnsupportedTableError(f"cannot read {path}: text compressed as {suffix} is not supported")


def read_text_split(split: Split, columns: Sequence[Column], target: pa.Schema, fmt: TextFormat | None,
                    file_format: str, storage: StorageResolver, table_columns: Sequence[Column] | None = None,
                    batch_rows: int = 8192) -> Iterator[pa.RecordBatch]:
    """Rows of a text split; ``table_columns`` (all data columns in table order) place fields in a line."""
    fmt = fmt or TextFormat()
    positions = _positions(columns, table_columns if table_columns is not None else columns)
    partition_values = {k.lower(): v for k, v in split.partition_values}
    data_columns = [c for c in columns if not c.partition]
    data_target = pa.schema([field for c, field in zip(columns, target) if not c.partition])
    with open_split_file(split, storage) as handle:
        whole = _decompressed(handle, split.path)
        lines = split_lines(whole, 0, 1 << 62) if whole is not None else split_lines(handle, split.start, split.start + split.length)
        if fmt.header_lines and (whole is not None or split.start == 0):
            lines = itertools.islice(lines, fmt.header_lines, None)
        if file_format == "json":
            rows = _rows_json(lines, columns)
        elif file_format == "csv":
            rows = _rows_csv(lines, positions, fmt, typed=not fmt.all_columns_string)
        else:
            rows = _rows_lazy_simple(lines, positions, fmt)
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
    table = rows_only(len(rows)) if not arrays else pa.RecordBatch.from_arrays(arrays, schema=data_target)
    return shape_batch(table, columns, target, partition_values)
