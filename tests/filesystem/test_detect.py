"""A folder's layout from one listing and a sample of files written by pyarrow and fastavro."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.fs as pafs
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from hms_catalog.filesystem.detect import TableLayout, detect_table, format_from_settings, layout_as, list_table
from tests.support.counting_fs import CountingHandler

TABLE = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", None], "amount": [1.5, 2.5, None]})


LOCAL = pafs.LocalFileSystem()


def _detect(path: Path, sample: int = 8) -> TableLayout:
    listing = list_table(LOCAL, str(path))
    assert listing is not None
    return detect_table(LOCAL, listing, sample)


def test_hive_partitions_become_typed_keys(tmp_path: Path) -> None:
    for day, region in (("2024-01-01", 1), ("2024-01-02", 2), ("2024-01-02", 30000000000)):
        folder = tmp_path / f"day={day}" / f"region={region}"
        folder.mkdir(parents=True)
        pq.write_table(TABLE, folder / "part-0.parquet")
    folder = tmp_path / "day=__HIVE_DEFAULT_PARTITION__" / "region=7"
    folder.mkdir(parents=True)
    pq.write_table(TABLE, folder / "part-0.parquet")
    (tmp_path / "_SUCCESS").write_text("")
    layout = _detect(tmp_path)
    assert layout.format == "parquet"
    assert layout.columns == (("id", "bigint"), ("name", "string"), ("amount", "double"))
    assert layout.partition_keys == (("day", "date"), ("region", "bigint"))


def test_text_formats_and_their_schemas(tmp_path: Path) -> None:
    (tmp_path / "csv").mkdir()
    pacsv.write_csv(TABLE, tmp_path / "csv" / "a.csv")
    (tmp_path / "tsv").mkdir()
    (tmp_path / "tsv" / "a.txt").write_text("1\tx\t2024-01-01\n2\ty\t2024-01-02\n")
    (tmp_path / "json").mkdir()
    with gzip.open(tmp_path / "json" / "a.json.gz", "wt") as stream:
        for i in range(3):
            stream.write(json.dumps({"i": i, "tags": ["x", "y"], "inner": {"k": i * 1.5}}) + "\n")
    csv_layout = _detect(tmp_path / "csv")
    assert (csv_layout.format, csv_layout.options["header"]) == ("csv", "true")
    assert csv_layout.columns == (("id", "bigint"), ("name", "string"), ("amount", "double"))
    tsv = _detect(tmp_path / "tsv")
    assert tsv.options["delimiter"] == "\t" and tsv.columns == (("_c0", "bigint"), ("_c1", "string"), ("_c2", "date"))
    json_layout = _detect(tmp_path / "json")
    assert (json_layout.format, json_layout.options) == ("json", {"compression": "gzip"})
    assert json_layout.columns == (("i", "bigint"), ("tags", "array<string>"), ("inner", "struct<k:double>"))


def test_orc_and_avro(tmp_path: Path) -> None:
    fastavro = pytest.importorskip("fastavro")
    (tmp_path / "orc").mkdir()
    orc.write_table(TABLE, tmp_path / "orc" / "a.orc")
    assert _detect(tmp_path / "orc").columns == (("id", "bigint"), ("name", "string"), ("amount", "double"))
    (tmp_path / "avro").mkdir()
    schema = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"},
                                                         {"name": "tags", "type": {"type": "array", "items": "string"}}]}
    with open(tmp_path / "avro" / "a.avro", "wb") as out:
        fastavro.writer(out, schema, [{"id": 1, "tags": ["a"]}])
    layout = _detect(tmp_path / "avro")
    assert (layout.format, layout.columns) == ("avro", (("id", "bigint"), ("tags", "array<string>")))


def test_what_cannot_be_a_table_is_unknown_with_an_example(tmp_path: Path) -> None:
    (tmp_path / "mixed").mkdir()
    pq.write_table(TABLE, tmp_path / "mixed" / "a.parquet")
    pacsv.write_csv(TABLE, tmp_path / "mixed" / "b.csv")
    mixed = _detect(tmp_path / "mixed")
    assert mixed.format == "unknown" and "mixed formats" in mixed.reason
    assert str(tmp_path / "mixed" / "a.parquet") in mixed.reason and str(tmp_path / "mixed" / "b.csv") in mixed.reason
    (tmp_path / "cut").mkdir()
    whole = (tmp_path / "mixed" / "a.parquet").read_bytes()
    (tmp_path / "cut" / "part-0.parquet").write_bytes(whole[: len(whole) // 2])
    cut = _detect(tmp_path / "cut")
    assert cut.format == "unknown" and cut.reason.startswith(f"{tmp_path / 'cut' / 'part-0.parquet'}: ")
    (tmp_path / "empty").mkdir()
    assert _detect(tmp_path / "empty").reason == f"no data files under {tmp_path / 'empty'}"
    (tmp_path / "delta" / "_delta_log").mkdir(parents=True)
    (tmp_path / "delta" / "_delta_log" / "00000000000000000000.json").write_text("{}")
    pq.write_table(TABLE, tmp_path / "delta" / "part-0.parquet")
    assert "Delta Lake table (_delta_log)" in _detect(tmp_path / "delta").reason
    (tmp_path / "loose" / "k=1").mkdir(parents=True)
    pq.write_table(TABLE, tmp_path / "loose" / "k=1" / "a.parquet")
    pq.write_table(TABLE, tmp_path / "loose" / "b.parquet")
    assert "partition folders differ" in _detect(tmp_path / "loose").reason


def test_a_sample_is_opened_not_every_file(tmp_path: Path) -> None:
    for index in range(60):
        folder = tmp_path / f"n={index % 20}"
        folder.mkdir(exist_ok=True)
        pq.write_table(TABLE, folder / f"part-{index}.parquet")
    handler = CountingHandler()
    counting = pafs.PyFileSystem(handler)
    listing = list_table(counting, str(tmp_path))
    assert listing is not None and len(listing.files) == 60
    layout = detect_table(counting, listing, 8)
    assert layout.format == "parquet" and layout.partition_keys == (("n", "int"),)
    assert handler.listings == 1
    opened = set(handler.opened)
    assert len(opened) == 8 and listing.files[0].path in opened and listing.files[-1].path in opened


def test_set_format_reads_the_folder_as_told(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1;x\n2;y\n")
    listing = list_table(LOCAL, str(tmp_path))
    assert listing is not None
    layout = layout_as(LOCAL, listing, {"type": "csv", "delimiter": ";", "header": "false"}, 8)
    assert layout.columns == (("_c0", "bigint"), ("_c1", "string")) and layout.options["delimiter"] == ";"
    with pytest.raises(ValueError, match="'sep' is not a setting of csv"):
        format_from_settings({"type": "csv", "sep": ";"})
    with pytest.raises(ValueError, match="'delimiter' must be one character"):
        format_from_settings({"type": "csv", "delimiter": ";;"})
    assert format_from_settings({"type": "CSV", "delimiter": "\\t"}).options["delimiter"] == "\t"
