"""SELECT in the CLI: the query runs on Spark (local unless --master or --remote says otherwise)."""

from __future__ import annotations

from typing import Any

from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session, register
from hms_catalog.sql import ast
from planner.spark.sql import CatalogSql, spark_session

__all__ = ["run_query"]


def _plain(value: Any) -> Any:
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bytearray):
        return bytes(value)
    return value


@register(ast.Query)
def run_query(session: Session, statement: ast.Query) -> Result:
    runner: CatalogSql | None = session.extras.get("spark_sql")
    if runner is None:
        from pyspark.sql import SparkSession

        # A SparkSession the process already had (a notebook's) is used, never stopped by this session.
        started = SparkSession.getActiveSession() is None
        spark = spark_session(session.engine_options.get("master"), session.engine_options.get("remote"))
        native = session.engine_options.get("native_catalogs") == "true"
        runner = CatalogSql(spark, session, owns_spark=started, native_catalogs=native)
        session.extras["spark_sql"] = runner
    frame = runner.sql(statement.sql)
    rows = [tuple(_plain(v) for v in row) for row in frame.collect()]
    return Result.table(tuple(frame.columns), rows)
