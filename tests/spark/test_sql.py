"""SELECT through catalogs: from PySpark (attach_catalogs) and from the CLI, against Spark's own answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planner.spark import attach_catalogs
from tests.spark.test_datasource import DB, home, rows_of, tables  # noqa: F401 - the fixtures of that module


@pytest.fixture
def catalogs(spark: Any, tables: str, home: Path) -> Iterator[Any]:  # noqa: F811
    original = spark.sql
    runner = attach_catalogs(spark, str(home))
    yield runner
    spark.sql = original
    runner.session.manager.close()


QUERIES = [
    "SELECT i, s, part FROM {p}parquet_all WHERE part = 'b'",
    "SELECT count(*) AS n FROM {p}lines",
    "SELECT l.n, o.s FROM {p}lines l JOIN {p}orc_all o ON l.n = o.i WHERE l.n < 10",
    "SELECT part, count(*) AS n, max(dec) AS top FROM {p}parquet_all GROUP BY part",
    "WITH small AS (SELECT n FROM {p}lines WHERE n < 5) SELECT sum(n) AS total FROM small",
    "SELECT * FROM {p}text_all",
    "SELECT word FROM {p}lines WHERE n < 5",  # a text table read with only some of its columns
    "SELECT st.a, st.nested.x FROM {p}parquet_all",  # struct fields: the struct column is read
    "SELECT a.n, b.word FROM {p}lines a JOIN {p}lines b USING (n) WHERE a.n < 3",
    "SELECT count(*) AS n FROM {p}lines a NATURAL JOIN {p}lines b",
]


@pytest.mark.parametrize("query", QUERIES)
def test_three_part_names_give_sparks_own_answer(spark: Any, catalogs: Any, query: str) -> None:
    ours = spark.sql(query.format(p=f"hive.{DB}."))
    theirs = spark.sql(query.format(p=f"{DB}."))  # no catalog of ours: runs unchanged on Spark's tables
    assert rows_of(ours) == rows_of(theirs)


def test_views_declare_only_the_columns_a_query_needs(catalogs: Any) -> None:
    _, views = catalogs.rewrite(f"SELECT count(*) FROM hive.{DB}.lines")
    assert [columns for _, columns in views.values()] == [[]]
    _, views = catalogs.rewrite(f"SELECT t.i FROM hive.{DB}.parquet_all t WHERE part = 'a'")
    assert [columns for _, columns in views.values()] == [["i", "part"]]
    _, views = catalogs.rewrite(f"SELECT * FROM hive.{DB}.orc_all")
    assert [columns for _, columns in views.values()] == [None]


def test_switch_and_use_resolve_short_names(spark: Any, catalogs: Any) -> None:
    catalogs.session.run_one("SWITCH hive")
    catalogs.session.run_one(f"USE {DB}")
    assert rows_of(spark.sql("SELECT count(*) FROM lines")) == rows_of(spark.sql(f"SELECT count(*) FROM hive.{DB}.lines"))


def test_select_in_the_cli_prints_json_rows(tables: str, home: Path) -> None:  # noqa: F811
    query = f"SELECT i, dec, ts, arr FROM hive.{DB}.parquet_all WHERE part = 'b'"
    run = subprocess.run(
        [sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "--format", "json", "-e", query],
        capture_output=True, text=True, timeout=300, env={**os.environ}, check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    assert answer["columns"] == ["i", "dec", "ts", "arr"]
    assert answer["rows"] == [[3, "12.34", "2024-01-01T10:11:12.123456", [1, None, 3]]]


def test_the_rewrite_keeps_everything_but_the_name(catalogs: Any) -> None:
    rewritten, _ = catalogs.rewrite(f"SELECT * FROM hive.{DB}.lines TABLESAMPLE (50 PERCENT) WHERE n < 3")
    assert "TABLESAMPLE" in rewritten.upper() and "hive." not in rewritten
