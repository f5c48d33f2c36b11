"""The text reader on files written here: codecs, header lines, typed JSON, and column placement."""

from __future__ import annotations

import bz2
import datetime
import gzip
import json
import lzma
import zlib
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from hms_catalog.errors import UnsupportedTableError
from hms_catalog.formats.detect import TextFormat
from hms_catalog.formats.schema import Column, TableSchema
from hms_catalog.types import parse_hive_type
from planner.plan import Split
from planner.readers import read_split

SCHEMA = TableSchema(tuple(Column(name, parse_hive_type(kind), kind) for name, kind in
                           (("id", "int"), ("name", "string"), ("amount", "decimal(10,2)"), ("day", "date"))), source="test")
LINES = "1|a|1.005|2024-01-02\n2|b|\\N|2024-02-03\n"


def rows(path: Path, *, file_format: str = "text", text: TextFormat | None = None,
         columns: list[str] | None = None) -> list[tuple[object, ...]]:
    size = path.stat().st_size
    split = Split(f"file://{path}", 0, size, size, int(path.stat().st_mtime_ns // 1_000_000), (), (), file_format)
    wanted = [SCHEMA.column(name) for name in (columns or [c.name for c in SCHEMA.columns])]
    target = SCHEMA.arrow_schema([c.name for c in wanted])
    batches = list(read_split(split, wanted, target, text=text or TextFormat(field_delimiter="|"), table_columns=SCHEMA.data_columns))
    return [tuple(row.values()) for row in pa.Table.from_batches(batches, schema=target).to_pylist()]


EXPECTED = [(1, "a", Decimal("1.01"), datetime.date(2024, 1, 2)), (2, "b", None, datetime.date(2024, 2, 3))]


@pytest.mark.parametrize(("suffix", "compress"), [
    ("", lambda data: data), (".gz", gzip.compress), (".bz2", bz2.compress), (".deflate", zlib.compress), (".xz", lzma.compress),
])
def test_every_hive_text_codec_reads_the_same_rows(tmp_path: Path, suffix: str, compress: object) -> None:
    path = tmp_path / f"part-0{suffix}"
    path.write_bytes(compress(LINES.encode()))  # type: ignore[operator]
    assert rows(path) == EXPECTED  # HALF_UP: 1.005 is 1.01, as Hive rounds


def test_a_codec_we_cannot_read_is_refused_not_misread(tmp_path: Path) -> None:
    path = tmp_path / "part-0.snappy"
    path.write_bytes(b"\x00not really snappy")
    with pytest.raises(UnsupportedTableError, match="compressed as .snappy"):
        rows(path)


def test_header_lines_are_skipped_once_per_file(tmp_path: Path) -> None:
    path = tmp_path / "with-header"
    path.write_text("id|name|amount|day\n" + LINES)
    assert rows(path, text=TextFormat(field_delimiter="|", header_lines=1)) == EXPECTED


def test_wanted_columns_are_placed_by_the_tables_columns(tmp_path: Path) -> None:
    path = tmp_path / "part-0"
    path.write_text(LINES)
    assert rows(path, columns=["day", "name"]) == [(datetime.date(2024, 1, 2), "a"), (datetime.date(2024, 2, 3), "b")]


def test_json_values_are_typed(tmp_path: Path) -> None:
    path = tmp_path / "part-0.json"
    path.write_text("\n".join(json.dumps(r) for r in (
        {"id": 1, "name": "a", "amount": 1.005, "day": "2024-01-02"}, {"ID": 2, "Name": "b", "amount": None, "day": "2024-02-03"})))
    assert rows(path, file_format="json") == EXPECTED
