"""The connector's session extension (``hmscatalog.spark.HmsSessionExtensions``): INSERT OVERWRITE with every
partition key static in DYNAMIC mode is an overwrite of that partition, as on Spark's own tables, and nothing
else changes meaning (the overwrite matrix in test_writes.py compares every shape with Spark's own tables)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_connector import EXTENSIONS_CLASS
from tests.spark_connector.conftest import CATALOG
from tests.spark_connector.test_plugin import spark_submit
from tests.support.service import Server

DB = f"ext{os.getpid()}"
_FULL = "PARTITION (a=1, b='x') SELECT id FROM VALUES (14) AS s(id) WHERE false"
_PARTIAL = "PARTITION (a=1, b) SELECT id, b FROM VALUES (12, 'y') AS s(id, b) WHERE false"
_NONE = "SELECT id, a, b FROM VALUES (10, 1, 'x') AS s(id, a, b) WHERE false"


@pytest.fixture(scope="module")
def db(spark: Any, connected: str) -> Iterator[str]:
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")
    spark.sql(f"CREATE DATABASE spark_catalog.{DB}")
    for name, storage in [("hive", "(id INT) STORED AS PARQUET PARTITIONED BY (a INT, b STRING)"),
                          ("ds", "(id INT, a INT, b STRING) USING parquet PARTITIONED BY (a, b)")]:
        spark.sql(f"CREATE TABLE spark_catalog.{DB}.{name} {storage}")
    yield DB
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")


def _analyzed(spark: Any, statement: str, mode: str) -> str:
    """The write command's line of the analyzed plan of ``statement`` in ``mode`` (EXPLAIN runs nothing), or the
    whole EXPLAIN text (an error) if there is none."""
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", mode)
    try:
        text = spark.sql(f"EXPLAIN EXTENDED {statement}").collect()[0][0]
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    analyzed = text.split("== Analyzed Logical Plan ==")[1]
    return next((line for line in analyzed.splitlines() if line.startswith("Overwrite")), text)


@pytest.mark.parametrize("table", ["hive", "ds"])
def test_a_full_static_spec_in_dynamic_mode_is_an_overwrite_of_that_partition(spark: Any, db: str, table: str) -> None:
    line = _analyzed(spark, f"INSERT OVERWRITE {CATALOG}.{db}.{table} {_FULL}", "DYNAMIC")
    assert line.startswith("OverwriteByExpression"), line
    assert "(a#" in line and "<=>" in line and "(b#" in line, line  # the condition: the static value of each key


@pytest.mark.parametrize(("shape", "mode", "expected"), [
    (_PARTIAL, "DYNAMIC", "OverwritePartitionsDynamic"),
    (_NONE, "DYNAMIC", "OverwritePartitionsDynamic"),
    (_FULL, "STATIC", "OverwriteByExpression"),
    (_PARTIAL, "STATIC", "OverwriteByExpression"),
])
def test_other_shapes_keep_the_plan_spark_gives_them(spark: Any, db: str, shape: str, mode: str, expected: str) -> None:
    assert _analyzed(spark, f"INSERT OVERWRITE {CATALOG}.{db}.ds {shape}", mode).startswith(expected)


@pytest.mark.parametrize("rows", [[(7,)], []], ids=["rows", "no_rows"])
def test_a_dataframe_overwrite_of_constant_partitions_stays_dynamic(spark: Any, db: str, rows: list[tuple[int]]) -> None:
    """``overwritePartitions()`` of a DataFrame whose partition columns are constants (one a BIGINT cast to the
    INT key by the insertion) replaces only the partitions it writes, as Spark's own dynamic insertInto does:
    with no rows, nothing."""
    from pyspark.sql import functions

    name = f"lit_{len(rows)}"
    for side in ("own", "our"):
        spark.sql(f"CREATE TABLE spark_catalog.{db}.{side}_{name} (id INT, a INT, b STRING) USING parquet PARTITIONED BY (a, b)")
        spark.sql(f"INSERT INTO spark_catalog.{db}.{side}_{name} VALUES (1, 1, 'x'), (2, 1, 'y')")
    frame = spark.createDataFrame(rows, "id INT").select("id", functions.lit(1).cast("bigint").alias("a"), functions.lit("x").alias("b"))
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "DYNAMIC")
    try:
        frame.write.insertInto(f"spark_catalog.{db}.own_{name}", overwrite=True)
        frame.writeTo(f"{CATALOG}.{db}.our_{name}").overwritePartitions()
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    own, ours = (sorted(tuple(r) for r in spark.table(f"spark_catalog.{db}.{side}_{name}").collect()) for side in ("own", "our"))
    assert ours == own == sorted([(1, 1, "x")] * (not rows) + [(2, 1, "y")] + [(r[0], 1, "x") for r in rows])


_JOB = """
import json, sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
table = sys.argv[1]
spark.conf.set("spark.sql.sources.partitionOverwriteMode", "DYNAMIC")
plan = spark.sql(f"EXPLAIN EXTENDED INSERT OVERWRITE {table} PARTITION (a=1, b='x') SELECT 14 WHERE false").collect()[0][0]
analyzed = plan.split("== Analyzed Logical Plan ==")[1]
print("RESULT " + json.dumps({"extensions": spark.conf.get("spark.sql.extensions"),
                              "plan": next(l for l in analyzed.splitlines() if l.startswith("Overwrite"))}))
"""


def test_spark_submit_with_the_plugin_alone_gets_the_extension(connector_service: Server, db: str, tmp_path: Path) -> None:
    job = tmp_path / "job.py"
    job.write_text(_JOB)
    done = spark_submit("--conf", f"spark.hmscatalog.uri={connector_service.url}",
                        "--conf", "spark.sql.extensions=example.UserExtensions",  # a user's own, kept (missing: Spark warns)
                        str(job), f"{CATALOG}.{db}.ds", token=connector_service.token)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT ")).removeprefix("RESULT "))
    assert seen["extensions"] == f"example.UserExtensions,{EXTENSIONS_CLASS}"
    assert seen["plan"].startswith("OverwriteByExpression"), seen["plan"]
