"""Spark SQL over catalog tables: ``SELECT ... FROM cat.db.t`` with three-part names.

Spark has no catalog plugin for a Python data source, so each query is rewritten: every table reference
that resolves to one of our catalogs becomes a temporary view over the ``hms`` source (aliased with the
table's own name, so qualified columns keep working). The view declares only the columns the query
mentions (all of them for ``*``, none for ``count(*)``), because the data source API prunes no columns
itself. Partition predicates in WHERE reach the planner through Spark's pushed filters. References to
anything else are left to Spark.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING, Any

from hms_catalog._lazy import LazyModule
from hms_catalog.execution.session import Session
from hms_catalog.model import ExternalTable
from hms_catalog.registry import adopt_manager, home_key
from hms_catalog.sql import parse_spark_statement

if TYPE_CHECKING:
    from sqlglot import expressions as exp
else:
    exp = LazyModule("sqlglot.expressions")  # sqlglot only once a SELECT is rewritten, not at every CLI start

__all__ = ["CatalogSql", "attach_catalogs", "end_spark_jvm", "spark_session"]


def spark_session(master: str | None = None, remote: str | None = None, app_name: str = "hms-catalog") -> Any:
    """A SparkSession set up for the hms source: this interpreter for Python workers, filter pushdown on."""
    import os
    import sys

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if remote:
        builder = builder.remote(remote)
    else:
        builder = (builder.master(master or "local[*]").config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.pyspark.python", sys.executable))
    spark = builder.config("spark.sql.python.filterPushdown.enabled", "true").config(
        "spark.sql.session.timeZone", "UTC").getOrCreate()
    if not remote:
        spark.sparkContext.setLogLevel("ERROR")
    from planner.spark.datasource import register  # pyspark's data source classes: imported with Spark, not before

    register(spark)
    return spark


def end_spark_jvm(timeout: float = 30.0) -> int | None:
    """End the JVM pyspark started for this process once no SparkContext is left on it, and wait for it: its exit
    code, None when there was no such JVM or it did not exit within ``timeout`` seconds (it is killed then).

    ``SparkSession.stop`` keeps pyspark's JVM for a later session in the process; it exits only after the
    process does (it reads its standard input to the end), seconds after on a busy machine: a service that
    said it had stopped had left a Spark JVM behind it. Closing that input ends the JVM now; a later session
    would start another. A JVM pyspark did not start (Spark Connect, a gateway handed in) is left alone, and
    nothing is imported when Spark never was."""
    import subprocess
    import sys

    if "pyspark" not in sys.modules:
        return None
    from pyspark import SparkContext

    with SparkContext._lock:
        gateway = SparkContext._gateway
        process = getattr(gateway, "proc", None)
        if SparkContext._active_spark_context is not None or gateway is None or process is None:
            return None
        SparkContext._gateway = None
        SparkContext._jvm = None
    with contextlib.suppress(Exception):  # the JVM may be gone already: closing its connections must not fail close()
        gateway.shutdown()
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
    try:
        return int(process.wait(timeout=timeout))
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


def _view_name(table: ExternalTable) -> str:
    return "hms__" + re.sub(r"[^A-Za-z0-9_]", "_", f"{table.catalog}__{table.database}__{table.name}")


class CatalogSql:
    """Runs queries naming catalog tables on ``spark``, resolving names as ``session`` does (SWITCH/USE)."""

    def __init__(self, spark: Any, session: Session, *, owns_spark: bool = False, native_catalogs: bool = False) -> None:
        self.spark = spark
        self.session = session
        self.owns_spark = owns_spark  # started for this runner (SELECT in a session): stopped by close()
        # A Spark whose catalogs include ours (the native connector's, as a Spark Connect server started by
        # ``serve --spark-connect`` has them): a table of a catalog registered there is only qualified
        # and Spark reads it itself; the others still become views over the hms source.
        self.native_catalogs = native_catalogs
        self._registered: dict[str, bool] = {}
        # The data source finds its catalogs by home: it must find this session's live catalogs there,
        # or a REFRESH run in the session would not reach what SELECT reads.
        adopt_manager(session.manager)
        self.home = str(home_key(session.manager.store.home))
        self._run = spark.sql  # the session's own sql, kept before attach_catalogs replaces it

    def rewrite(self, query: str) -> tuple[str, dict[str, tuple[ExternalTable, list[str] | None]]]:
        """The query with catalog tables replaced by view names, and what each view must read."""
        rewritten, views, _ = self._rewrite(query)
        return rewritten, views

    def _rewrite(self, query: str) -> tuple[str, dict[str, tuple[ExternalTable, list[str] | None]], set[str]]:
        # Any statement spark.sql takes (INSERT ... SELECT FROM cat.db.t too); every sqlglot failure
        # becomes a positioned SqlSyntaxError. Statements naming no catalog table run unchanged.
        tree = parse_spark_statement(query)
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        mentioned: set[str] = set()
        for column in tree.find_all(exp.Column):
            if not isinstance(column.this, exp.Star):
                mentioned.add(column.name.lower())
            # ``s.f`` may be field f of struct column s: keep every qualifier too (a superset is safe)
            mentioned.update(part.lower() for part in (column.table, column.db, column.catalog) if part)
        wants_all = any(not isinstance(star.parent, exp.Count) for star in tree.find_all(exp.Star))
        # NATURAL and USING joins match on columns the query never names: read everything then
        wants_all = wants_all or any(join.args.get("using") or join.args.get("method") == "NATURAL"
                                     or "NATURAL" in str(join.args.get("kind") or "").upper()
                                     for join in tree.find_all(exp.Join))
        views: dict[str, tuple[ExternalTable, list[str] | None]] = {}
        natives: set[str] = set()
        catalogs = {d.name for d in self.session.manager.definitions()}  # the store, read once per query
        for node in list(tree.find_all(exp.Table)):
            table = self._resolve(node, ctes, catalogs)
            if table is None:
                continue
            if self._native(table.catalog):
                if not node.alias:
                    node.set("alias", exp.TableAlias(this=exp.to_identifier(node.name)))
                node.set("catalog", exp.to_identifier(table.catalog))
                node.set("db", exp.to_identifier(table.database))
                node.set("this", exp.to_identifier(table.name))
                natives.add(table.full_name)
                continue
            view = _view_name(table)
            schema = table.schema
            columns = None if wants_all else [c.name for c in schema.columns if c.name.lower() in mentioned and c.readable]
            previous = views.get(view)
            if previous is not None and previous[1] is not None and columns is not None:
                columns = sorted(set(previous[1]) | set(columns), key=[c.name for c in schema.columns].index)
            elif previous is not None:
                columns = None
            views[view] = (table, columns)
            # Change only the name: TABLESAMPLE, PIVOT, time travel and the alias stay as written; without
            # an alias the table's own name becomes one, so qualified columns keep resolving.
            if not node.alias:
                node.set("alias", exp.TableAlias(this=exp.to_identifier(node.name)))
            node.set("catalog", None)
            node.set("db", None)
            node.set("this", exp.to_identifier(view))
        return tree.sql(dialect="spark"), views, natives

    def _native(self, catalog: str) -> bool:
        if not self.native_catalogs:
            return False
        if catalog not in self._registered:
            self._registered[catalog] = self.spark.conf.get(f"spark.sql.catalog.{catalog}", None) is not None
        return self._registered[catalog]

    def for_session(self, session: Session) -> CatalogSql:
        """A runner on the same SparkSession that resolves names as ``session`` does; it never stops Spark.

        How a process serving many sessions (the catalog service) shares one warm Spark between them,
        each statement resolving short names by its own session's SWITCH and USE.
        """
        return CatalogSql(self.spark, session, owns_spark=False, native_catalogs=self.native_catalogs)

    def close(self) -> None:
        """Stop the SparkSession when this runner started it; one handed in belongs to its caller. pyspark keeps
        its JVM for the process's next session (see :func:`end_spark_jvm`)."""
        if self.owns_spark:
            self.owns_spark = False
            self.spark.stop()

    def sql(self, query: str, *args: Any, **kwargs: Any) -> Any:
        rewritten, views, natives = self._rewrite(query)
        if not views and not natives:
            return self._run(query, *args, **kwargs)
        from planner.spark.datasource import packing_options

        for view, (table, columns) in views.items():
            reader = self.spark.read.format("hms").option("home", self.home).options(**packing_options(self.spark))
            if columns is not None:
                reader = reader.option("columns", ",".join(columns))
            reader.load(table.full_name).createOrReplaceTempView(view)
        return self._run(rewritten, *args, **kwargs)

    def _resolve(self, node: exp.Table, ctes: set[str], catalogs: set[str]) -> ExternalTable | None:
        parts = [part for part in (node.catalog, node.db, node.name) if part]
        if len(parts) == 1 and parts[0].lower() in ctes:
            return None
        if len(parts) == 3 and parts[0].lower() not in catalogs:
            return None
        if len(parts) < 3 and self.session.current_catalog is None:
            return None
        if len(parts) == 1 and self.session.current_database is None:
            return None
        from hms_catalog.sql import ast

        name = ast.TableName(*([None] * (3 - len(parts)) + parts))  # type: ignore[arg-type]
        table = self.session.table(name)
        table.metadata  # noqa: B018 - resolve now: a missing table is an error of this query
        return table


def attach_catalogs(spark: Any, home: str | None = None, session: Session | None = None) -> CatalogSql:
    """Make ``spark.sql`` understand ``catalog.db.table`` for the catalogs under ``home``.

    Queries that name no catalog table run unchanged. Returns the object doing the rewriting (its
    ``session`` has SWITCH/USE for two- and one-part names).
    """
    from hms_catalog import open_session

    runner = CatalogSql(spark, session or open_session(home))
    spark.sql = runner.sql  # this session object only: other sessions are untouched
    return runner
