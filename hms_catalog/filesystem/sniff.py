"""What one file holds, judged from its bytes: magic numbers first, then a decompressed look inside, then
JSON lines against delimited text sniffed from a sample. A name's extension only breaks a tie.

Kept apart from the folder-level decisions (:mod:`.detect`) so each rule can be tried on a single file.
"""

from __future__ import annotations

import bz2
import csv
import json
import zlib
from dataclasses import dataclass, field

import pyarrow as pa

__all__ = ["FileFormat", "SniffError", "sniff", "compression_of", "HEAD_BYTES"]

HEAD_BYTES = 64 * 1024
_PARQUET = b"PAR1"
_ORC = b"ORC"
_AVRO = b"Obj\x01"
_GZIP, _ZSTD, _BZIP2 = b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"BZh"
# Compressed streams by their magic; the names are also pyarrow's codec names.
_COMPRESSIONS = ((_GZIP, "gzip"), (_ZSTD, "zstd"), (_BZIP2, "bz2"))
_DELIMITERS = ",\t|;"
_TEXT_EXTENSIONS = {".csv": ",", ".tsv": "\t", ".psv": "|"}


class SniffError(Exception):
    """The file is unreadable, cut short, or in no format recognised; the message says which."""


@dataclass(frozen=True)
class FileFormat:
    """A file's format and, for text, how it is laid out (``delimiter``, ``quote``, ``escape``, ``header``)."""

    kind: str  # parquet, orc, avro, json or csv
    compression: str | None = None  # gzip, zstd or bz2 for text streams
    options: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """What two files must share to be one table's files (compression may differ)."""
        return self.kind, tuple(sorted(self.options.items()))


def sniff(head: bytes, tail: bytes, size: int, name: str) -> FileFormat:
    """The format of a file of ``size`` bytes named ``name`` from its first bytes and its last 4."""
    if head.startswith(_PARQUET):
        if size < 12 or tail != _PARQUET:
            raise SniffError("starts as Parquet but has no Parquet footer (cut short?)")
        return FileFormat("parquet")
    if head.startswith(_ORC):
        return FileFormat("orc")
    if head.startswith(_AVRO):
        return FileFormat("avro")
    text = head
    compression = compression_of(head)
    if compression is not None:
        text = _decompressed(head, compression)
    return _text_format(text, name, compression, whole=size <= len(head))


def compression_of(head: bytes) -> str | None:
    """gzip, zstd or bz2 when ``head`` starts a stream of that codec, else None."""
    return next((name for magic, name in _COMPRESSIONS if head.startswith(magic)), None)


def _decompressed(head: bytes, compression: str) -> bytes:
    """The start of a ``compression`` stream, decompressed as far as ``head`` reaches."""
    try:
        if compression == "gzip":
            return zlib.decompressobj(wbits=31).decompress(head, HEAD_BYTES)
        if compression == "bz2":
            return bz2.BZ2Decompressor().decompress(head, HEAD_BYTES)
        stream = pa.CompressedInputStream(pa.BufferReader(head), "zstd")
        try:
            return bytes(stream.read(HEAD_BYTES))
        except (OSError, pa.ArrowException):
            return b""
    except (OSError, EOFError, zlib.error, ValueError) as error:
        raise SniffError(f"a compressed stream that cannot be opened: {error}") from None


def _text_format(data: bytes, name: str, compression: str | None, *, whole: bool) -> FileFormat:
    if b"\x00" in data[:4096]:
        raise SniffError("binary content in no format recognised")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        if whole or error.start < len(data) - 4:  # a character cut at the end of the sample is fine
            raise SniffError("neither a known binary format nor UTF-8 text") from None
        text = data[: error.start].decode("utf-8")
    lines = text.splitlines()
    if not whole and len(lines) > 1:
        lines = lines[:-1]  # the sample may end inside a line
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise SniffError("no lines of text")
    if _json_lines(lines):
        return FileFormat("json", compression)
    return FileFormat("csv", compression, _csv_options(lines, name))


def _json_lines(lines: list[str]) -> bool:
    for line in lines[:200]:
        stripped = line.strip()
        if not stripped.startswith("{"):
            return False
        try:
            json.loads(stripped)
        except ValueError:
            return False
    return True


def _csv_options(lines: list[str], name: str) -> dict[str, str]:
    sample = "\n".join(lines[:200])
    extension = "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
        delimiter = dialect.delimiter
        quote = dialect.quotechar or '"'
    except csv.Error:
        # One column, or no delimiter that is consistent: the extension decides, else a comma.
        delimiter = _TEXT_EXTENSIONS.get(extension, ",")
        quote = '"'
    escape = quote if f"{quote}{quote}" in sample else "\\"
    try:
        header = csv.Sniffer().has_header(sample)
    except csv.Error:
        header = False
    return {"delimiter": delimiter, "quote": quote, "escape": escape, "header": "true" if header else "false"}
