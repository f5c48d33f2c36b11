"""One file's format from its bytes: magic numbers, compressed streams opened, JSON lines against CSV."""

from __future__ import annotations

import bz2
import gzip
import io

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from hms_catalog.filesystem.sniff import FileFormat, SniffError, sniff

TABLE = pa.table({"id": [1, 2], "name": ["a", "b"]})


def _sniff(data: bytes, name: str = "part-0") -> FileFormat:
    return sniff(data[:65536], data[-4:], len(data), name)


def _parquet() -> bytes:
    sink = io.BytesIO()
    pq.write_table(TABLE, sink)
    return sink.getvalue()


def test_binary_formats_by_their_magic() -> None:
    assert _sniff(_parquet(), "no-extension").kind == "parquet"
    sink = io.BytesIO()
    orc.write_table(TABLE, sink)
    assert _sniff(sink.getvalue(), "data.parquet").kind == "orc"  # content wins over a misleading name
    fastavro = pytest.importorskip("fastavro")
    sink = io.BytesIO()
    fastavro.writer(sink, {"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"}]}, [{"id": 1}])
    assert _sniff(sink.getvalue()).kind == "avro"


def test_a_parquet_file_cut_short_is_named_so() -> None:
    data = _parquet()
    with pytest.raises(SniffError, match="no Parquet footer"):
        _sniff(data[: len(data) // 2])


def test_delimited_text_with_quotes_and_a_header() -> None:
    found = _sniff(b'id,city,amount\n1,"Paris, FR",2.5\n2,Oslo,3.0\n3,"Rome, IT",1.0\n', "drop.csv")
    assert found == FileFormat("csv", None, {"delimiter": ",", "quote": '"', "escape": "\\", "header": "true"})
    assert _sniff(b"1|x|2024-01-01\n2|y|2024-01-02\n3|z|2024-01-03\n").options["delimiter"] == "|"
    assert _sniff(b"a\tb\n1\t2\n3\t4\n").options == {"delimiter": "\t", "quote": '"', "escape": "\\", "header": "true"}
    doubled = _sniff(b'id,quote\n1,"she said ""hi"""\n2,"plain"\n')
    assert doubled.options["escape"] == '"'


def test_json_lines_against_text() -> None:
    assert _sniff(b'{"a": 1, "b": {"c": [1, 2]}}\n{"a": 2}\n').kind == "json"
    assert _sniff(b'{"a": 1}\nnot json\n').kind == "csv"


@pytest.mark.parametrize(("compress", "name"), [(gzip.compress, "gzip"), (bz2.compress, "bz2")])
def test_compressed_streams_are_opened_to_look_inside(compress: object, name: str) -> None:
    lines = b"".join(b'{"i": %d, "s": "v%d"}\n' % (i, i) for i in range(1000))
    found = _sniff(compress(lines), "events")  # type: ignore[operator]
    assert (found.kind, found.compression) == ("json", name)


def test_zstd_stream() -> None:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as stream:
        stream.write(b"a,b\n1,2\n3,4\n")
    found = _sniff(sink.getvalue().to_pybytes())
    assert (found.kind, found.compression, found.options["delimiter"]) == ("csv", "zstd", ",")


def test_binary_garbage_and_empty_text_are_refused() -> None:
    with pytest.raises(SniffError, match="binary content"):
        _sniff(bytes(range(256)) * 4)
    with pytest.raises(SniffError, match="no lines of text"):
        _sniff(b"\n\n  \n")
