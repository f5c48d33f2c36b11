"""The CLI writes a streamed result as it comes: the JSON line of SHOW SPLITS is written a piece at a time and
is the line ``json.dumps`` writes of the whole answer; a text table, which must size its columns, holds it."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from hms_catalog.cli.render import JsonRenderer, TextRenderer
from hms_catalog.cli.runner import StatementRunner
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.execution.result import Result
from hms_catalog.sql.parser import StatementSource
from planner import plan_table
from tests.support.hms import Admin
from tests.support.sessions import open_catalog

ROWS = [("file:///w/a é", 0, 10, 10, "h1,h2", "dt=1"), ("file:///w/b", 0, 5, 5, "", "dt=NULL")]


def _rows(count: int) -> Iterator[tuple[object, ...]]:
    for index in range(count):
        yield (f"file:///w/{index}", index, 1, 1, "", f"p={index}")


@pytest.mark.parametrize("count", [0, 1, 2500])
def test_json_pieces_are_the_whole_answers_line(count: int) -> None:
    whole = Result.table(("path", "start", "length", "file_length", "hosts", "partition_values"), list(_rows(count)))
    streamed = Result.streamed(whole.columns, _rows(count))
    pieces = list(JsonRenderer().pieces("SHOW SPLITS FROM t", streamed))
    expected = json.dumps({"statement": "SHOW SPLITS FROM t", "columns": list(whole.columns),
                           "rows": [list(row) for row in whole.rows]}, ensure_ascii=False)
    assert "".join(pieces) == expected == JsonRenderer().result("SHOW SPLITS FROM t", whole)
    assert len(pieces) == count // 1000 + 1


def test_a_message_follows_the_rows_and_text_tables_hold_the_rows() -> None:
    streamed = Result(columns=("a",), message="note", stream=iter([(1,), (2,)]))
    assert json.loads(JsonRenderer().result("s", streamed)) == {"statement": "s", "columns": ["a"], "rows": [[1], [2]],
                                                               "message": "note"}
    table = Result.streamed(("path",), iter([("x",), ("y",)]))
    assert TextRenderer().result("s", table) == TextRenderer().result("s", Result.table(("path",), [("x",), ("y",)]))


def test_show_splits_in_json_is_written_as_the_splits_are_cut(admin: Admin, unique_name: str, home: Path,
                                                              metastore_uri: str) -> None:
    admin.create_database(unique_name)
    struct = admin.create_table(unique_name, "t", [("x", "int")], partition_keys=[("p", "string")])
    root = admin.warehouse / f"{unique_name}.db" / "t"
    added = []
    for index in range(12):
        folder = root / f"p={index}"
        folder.mkdir(parents=True)
        (folder / "part-0.parquet").write_bytes(b"x" * 8)
        sd = ttypes.StorageDescriptor(**{**struct.sd.__dict__, "location": f"file://{folder}"})
        added.append(ttypes.Partition(values=[str(index)], dbName=unique_name, tableName="t", sd=sd, parameters={}))
    admin.pool.call("add_partitions", added)
    session = open_catalog(home, metastore_uri, **{"planner.partition.batch": "5"})
    out, err = io.StringIO(), io.StringIO()
    try:
        runner = StatementRunner(session, JsonRenderer(), out=out, err=err)
        statement = f"SHOW SPLITS FROM hive.{unique_name}.t"
        assert runner.run(StatementSource(statement)), err.getvalue()
        assert session.run_one(statement).stream is not None  # the runner asked the session for streamed rows
        catalog = session.manager.catalog("hive")
        plan = plan_table(catalog, catalog.table(unique_name, "t"))
    finally:
        session.manager.close()
    [line] = out.getvalue().splitlines()
    answer = json.loads(line)
    assert answer["statement"] == statement and len(answer["rows"]) == 12
    assert sorted(row[0] for row in answer["rows"]) == sorted(split.path for split in plan.splits)
