"""SELECT through catalogs: from PySpark (attach_catalogs) and from the CLI, against Spark's own answers."""

from __future__ import annotations

import json
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


def test_the_rewrite_keeps_everything_but_the_name(catalogs: Any) -> None:
    rewritten, _ = catalogs.rewrite(f"SELECT * FROM hive.{DB}.lines TABLESAMPLE (50 PERCENT) WHERE n < 3")
    assert "TABLESAMPLE" in rewritten.upper() and "hive." not in rewritten


def test_refresh_in_the_session_reaches_select_and_the_data_source(spark: Any, home: Path, unique_name: str) -> None:  # noqa: F811
    """One live catalog per process: the session, attach_catalogs and the hms source share its caches."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hms_catalog import open_session

    session = open_session(home)
    spark.sql(f"CREATE DATABASE {unique_name}")
    spark.sql(f"CREATE TABLE {unique_name}.t (i INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {unique_name}.t PARTITION (p='a') VALUES (1)")
    original = spark.sql
    runner = attach_catalogs(spark, session=session)
    try:
        query = f"SELECT count(*) AS n FROM hive.{unique_name}.t WHERE p = 'a'"
        assert spark.sql(query).collect()[0].n == 1
        location = Path(spark.sql(f"DESCRIBE FORMATTED {unique_name}.t PARTITION (p='a')")
                        .where("col_name = 'Location'").collect()[0].data_type.removeprefix("file:"))
        pq.write_table(pa.table({"i": pa.array([2, 3], pa.int32())}), location / "added.parquet")
        assert spark.sql(query).collect()[0].n == 1  # the listing is cached (partition TTL): not seen yet
        session.run_one(f"REFRESH TABLE hive.{unique_name}.t")
        assert spark.sql(query).collect()[0].n == 3  # SELECT through attach_catalogs
        reader = spark.read.format("hms").option("home", str(home))
        assert reader.load(f"hive.{unique_name}.t").count() == 3  # the data source directly
    finally:
        spark.sql = original
        spark.sql(f"DROP DATABASE {unique_name} CASCADE")
        session.manager.close()
    assert runner.session is session


def test_closing_a_session_leaves_a_spark_session_it_did_not_start(spark: Any, catalogs: Any) -> None:
    catalogs.session.run_one(f"SELECT count(*) FROM hive.{DB}.lines")
    catalogs.session.close()
    assert spark.sql("SELECT 1 AS one").collect()[0].one == 1


def test_closing_a_session_stops_its_spark_session_and_the_clis_select_prints_json_rows(tables: str, home: Path) -> None:  # noqa: F811
    """In one process of their own (a Spark start each would be most of their time): a session's SELECT starts
    Spark and closing the session stops it; then the CLI's entry point runs a SELECT with JSON output."""
    query = f"SELECT i, dec, ts, arr FROM hive.{DB}.parquet_all WHERE part = 'b'"
    script = (
        "import sys\n"
        "from pyspark.sql import SparkSession\n"
        "from hms_catalog import open_session\n"
        "from hms_catalog.cli.main import main\n"
        f"session = open_session({str(home)!r})\n"
        f"rows = session.run_one('SELECT count(*) AS n FROM hive.{DB}.lines').rows\n"
        "assert SparkSession.getActiveSession() is not None\n"
        "session.close()\n"
        "session.close()  # idempotent\n"
        "print('rows', rows, 'active', SparkSession.getActiveSession(), flush=True)\n"
        f"sys.exit(main(['--home', {str(home)!r}, '--format', 'json', '-e', {query!r}]))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    closed, answer = run.stdout.strip().splitlines()[0], json.loads(run.stdout.strip().splitlines()[-1])
    assert closed.endswith("active None"), run.stdout
    assert answer["columns"] == ["i", "dec", "ts", "arr"]
    assert answer["rows"] == [[3, "12.34", "2024-01-01T10:11:12.123456", [1, None, 3]]]


@pytest.mark.parametrize("query", ["SELECT * FROM hive.x.y /* open", "SELECT 'open FROM t", "SELECT FROM WHERE ("])
def test_queries_sqlglot_cannot_read_are_positioned_syntax_errors(catalogs: Any, query: str) -> None:
    from hms_catalog.errors import SqlSyntaxError

    with pytest.raises(SqlSyntaxError) as info:
        catalogs.rewrite(query)
    assert info.value.line == 1 and 1 <= info.value.column <= len(query) + 1


@pytest.mark.parametrize("statement", [f"DESCRIBE TABLE {DB}.lines", f"SHOW TABLES IN {DB}", "SET spark.sql.shuffle.partitions=2"])
def test_statements_naming_no_catalog_table_run_unchanged(spark: Any, catalogs: Any, statement: str) -> None:
    assert catalogs.rewrite(statement)[1] == {}
    assert spark.sql(statement).collect() is not None  # through attach_catalogs' spark.sql, to Spark as written
