"""TPC-DS through the connector against Spark's own Hive tables: the read-speed figure on real analytical work.

What it does, in one run:

1. Generates TPC-DS at ``--sf`` (scale factor, 1 by default: about 1 GB of raw data) with DuckDB's tpcds
   extension from the installed ``duckdb-extension-tpcds`` package (no download), as one Parquet file per table.
2. Loads it as Parquet Hive tables on an embedded Hive metastore with Spark's Hive support, database
   ``tpcds``: ``store_sales``, ``catalog_sales`` and ``web_sales`` partitioned by their sold-date key, the three
   returns tables by their returned-date key (Spark's dynamic-partition INSERT, one file per partition: about
   1,824 partitions for store_sales; NULL keys go to Hive's default partition), the other tables unpartitioned.
   With ``--layout iceberg`` the six fact tables are also written as Iceberg tables (pyiceberg's HiveCatalog,
   identity partition on the date key) in ``tpcds_iceberg``, beside Hive tables over the same dimension files.
3. Serves the metastore through a catalog service (``hms-catalog serve``) with a catalog ``tpcds``, and starts
   one SparkSession (local[2]) that has both Spark's own Hive tables (``spark_catalog.tpcds``) and the connector's
   catalog (``tpcds.tpcds``, or ``tpcds.tpcds_iceberg``).
4. Runs each selected query (DuckDB's official texts, transpiled to Spark SQL by sqlglot) through Spark's own
   tables and through the connector, alternating, best of ``--repeat`` (2) each; the unqualified table names of
   the texts resolve through ``USE spark_catalog.tpcds`` or ``USE tpcds.tpcds``. The timed action is the query
   text to collected rows (analysis, the catalog's planning and the run).

Printed per query: both times and their ratio (connector / Spark), whether the rows are the same (multisets,
numbers within 1e-6; when ``ORDER BY ... LIMIT`` results differ, both sides run again without the final LIMIT
and the results count as the same when those agree and each limited result is part of its side's: a choice among
rows tied at the limit), whether runtime (dynamic) partition pruning applied on each side (a
``dynamicpruningexpression`` filter on a scan: Spark's partition filters, the connector's ``RuntimeFilters``), the
Spark tasks each side ran (summed over the stages of the run's job group) and the files its scans read (the scans'
``numFiles`` metric; "?" where a scan does not report it). The results also keep each side's best run's
planning phases (Spark's query tracker: parsing, analysis, optimization, planning), which tell a short query's
catalog and planning costs from its run. A query that fails on one side is recorded with its error and the run
goes on.

Goals (issue 25): every query returns Spark's rows; the geometric mean of the ratios is at most 1.0 (no slower
than Spark's own tables); no query is over 1.2x.

    python benchmarks/bench_tpcds.py --quick --data ~/tpcds              # scale factor 0.1, five queries, minutes
    python benchmarks/bench_tpcds.py --data ~/tpcds                      # scale factor 1, the default queries
    python benchmarks/bench_tpcds.py --sf 0.1 --queries 3,42,52 --data ~/tpcds --layout iceberg

Needs the bench extra (``pip install -e '.[bench]'``: duckdb and duckdb-extension-tpcds). Generating and loading
take longer than measuring: ``--data DIR`` keeps the data, the metastore and its tables in DIR (per scale factor)
and reuses them. Results are printed and saved to ``benchmarks/results/tpcds.json``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import Service, progress, save
from _spark_plans import Scan, scans, tasks_of_group, wait_for_listeners
from _tpcds_data import DATABASE, ICEBERG_DATABASE, generate, load_hive, load_iceberg, query_texts, scale_directory
from _tpcds_queries import DEVELOPER_QUERIES, compare, parse_selection, to_spark, without_limit

from hms_catalog.metastore import EmbeddedMetastore

CATALOG = "tpcds"  # the service's catalog of the metastore, and its Spark catalog through the connector
SIDES = ("spark", "connector")
QUICK_SCALE_FACTOR = 0.1
MEAN_GOAL = 0.85  # geometric mean of connector / Spark, at most (all 99 queries, both layouts)
QUERY_GOAL = 1.2  # every query's connector / Spark, at most


@dataclass
class Run:
    """One run of one query on one side."""

    seconds: float
    rows: list[tuple[Any, ...]]
    tasks: int
    scans: list[Scan]
    phases: dict[str, float] = field(default_factory=dict)


@dataclass
class SideResult:
    """A query on one side: the best run's figures, every run's time, or the error that stopped it."""

    seconds: float | None = None
    all_seconds: list[float] = field(default_factory=list)
    tasks: int | None = None
    files: int | None = None
    runtime_filtered: bool | None = None
    phases: dict[str, float] = field(default_factory=dict)  # the best run's planning phases (s): Spark's tracker
    scans: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sf", type=float, default=None, metavar="SCALE",
                        help=f"TPC-DS scale factor (default 1; {QUICK_SCALE_FACTOR:g} with --quick); 1 is about 1 GB of raw data")
    parser.add_argument("--queries", default=None, metavar="LIST",
                        help="query numbers and ranges (3,7,40-45) or a named set: 'default' (every query that joins a "
                             "date-partitioned fact table with date_dim on its partition key, plus q1-q10), 'date-joins' "
                             "(those joins only) or 'all' (the 99)")
    parser.add_argument("--quick", action="store_true",
                        help=f"a developer's run: scale factor {QUICK_SCALE_FACTOR:g} and queries "
                             f"{','.join(map(str, DEVELOPER_QUERIES))} unless --sf or --queries say otherwise")
    parser.add_argument("--layout", choices=("hive", "iceberg"), default="hive",
                        help="what the connector reads: the Hive tables Spark reads (hive), or the fact tables as Iceberg "
                             "tables of the same data (iceberg); Spark always reads its own Hive tables")
    parser.add_argument("--data", type=Path, default=None, metavar="DIR",
                        help="keep the generated data, the metastore and its tables in DIR/sf<scale factor> and reuse them "
                             "in later runs (default: a temporary directory, removed at the end)")
    parser.add_argument("--repeat", type=int, default=2, metavar="N", help="runs per query and side, the best is kept (default 2)")
    parser.add_argument("--name", default=None, metavar="NAME",
                        help="results file benchmarks/results/NAME.json (default: tpcds for the default run, else "
                             "tpcds-<layout>-sf<scale>[-<queries>])")
    args = parser.parse_args()
    if args.sf is None:
        args.sf = QUICK_SCALE_FACTOR if args.quick else 1.0
    if args.queries is None:
        args.queries = ",".join(map(str, DEVELOPER_QUERIES)) if args.quick else "default"
    return args


def main() -> int:
    args = _arguments()
    texts = query_texts()
    try:
        selected = parse_selection(args.queries, texts)
    except ValueError as error:
        raise SystemExit(f"--queries {args.queries}: {error}") from error
    from spark_connector import connector_jar

    jar = connector_jar()  # built with javac from the connector's sources on first use
    progress(f"connector jar {jar}")
    with tempfile.TemporaryDirectory(prefix="bench-tpcds-") as scratch_dir:
        scratch = Path(scratch_dir)
        directory = scale_directory(args.data.resolve() if args.data is not None else scratch, args.sf)
        directory.mkdir(parents=True, exist_ok=True)
        table_rows = generate(directory, args.sf)
        with EmbeddedMetastore(directory / "metastore", events=False, heap="1g") as metastore:
            spark = _session(metastore, jar, scratch)
            try:
                started = time.perf_counter()
                tables = {"hive": load_hive(spark, directory)}
                if args.layout == "iceberg":
                    tables["iceberg"] = load_iceberg(spark, directory, metastore.uri, metastore.warehouse)
                load_seconds = round(time.perf_counter() - started, 1)
                service = Service(scratch / "service-home")
                try:
                    progress(f"catalog service at {service.url} (pid {service.process.pid})")
                    client = service.client()
                    client.create_catalog(CATALOG, {"type": "hms", "hive.metastore.uris": metastore.uri})
                    client.close()
                    from spark_connector import catalog_conf

                    for key, value in catalog_conf(CATALOG, service.url, service.token).items():
                        spark.conf.set(key, value)  # the jar is loaded: the catalog may be set at run time
                    database = ICEBERG_DATABASE if args.layout == "iceberg" else DATABASE
                    uses = {"spark": f"USE spark_catalog.{DATABASE}", "connector": f"USE {CATALOG}.{database}"}
                    load_before = [round(x, 2) for x in os.getloadavg()]
                    results = measure(spark, {number: texts[number] for number in selected}, uses, args.repeat)
                finally:
                    service_exit = service.stop()
                    progress(f"catalog service stopped, exit code {service_exit}")
                spark_version = spark.version
            finally:
                spark.stop()
    summary = summarize(results)
    summary["load_average"] = {"before": load_before, "after": [round(x, 2) for x in os.getloadavg()]}
    save(args.name or _result_name(args), {
        "scale_factor": args.sf, "layout": args.layout, "repeat": args.repeat, "cores": os.cpu_count(),
        "spark": spark_version, "connector": {"jar": jar.name, "service_exit_code": service_exit},
        "data": {"rows": table_rows, "tables": tables, "load_seconds": load_seconds},
        "queries": selected, "summary": summary, "results": results,
    })
    print(table(results, args, summary))
    return 0 if service_exit == 0 else 1


def _result_name(args: argparse.Namespace) -> str:
    """Where a run's results go: the default run (scale factor 1, Hive layout, default queries) is ``tpcds``;
    any other run gets a name of its own, so a quick or partial run never overwrites the reference figures."""
    if args.sf == 1.0 and args.layout == "hive" and args.queries == "default":
        return "tpcds"
    queries = "" if args.queries == "default" else "-" + "".join(c if c.isalnum() else "_" for c in args.queries)
    return f"tpcds-{args.layout}-sf{args.sf:g}{queries}"[:120]


def _session(metastore: EmbeddedMetastore, jar: Path, scratch: Path) -> Any:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = (SparkSession.builder.master("local[2]").appName("bench-tpcds")
               .config("spark.jars", str(jar))
               .config("spark.sql.catalogImplementation", "hive")
               .config("spark.hadoop.hive.metastore.uris", metastore.uri)
               .config("spark.sql.warehouse.dir", metastore.warehouse.as_uri())
               .config("spark.hadoop.hive.exec.dynamic.partition.mode", "nonstrict")
               .config("spark.hadoop.hive.exec.max.dynamic.partitions", "100000")
               .config("spark.hadoop.hive.exec.max.dynamic.partitions.pernode", "100000")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.pyspark.python", sys.executable)
               # One driver runs both sides' queries (about 320 at the default set, repeat 2), and Spark keeps
               # broadcast relations past full GCs: about 680 MB more after each run of q69 (a broadcast of
               # customer_demographics' 1.9 million rows), on Spark's own tables as through the connector.
               # With 4g, then 6g, q69's fourth run in a session ran out of memory.
               .config("spark.driver.memory", "10g")
               .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}"))
    spark = builder.enableHiveSupport().getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _run(spark: Any, text: str, group: str) -> Run:
    spark.sparkContext.setJobGroup(group, group)
    started = time.perf_counter()
    frame = spark.sql(text)
    rows = [tuple(row) for row in frame.collect()]
    seconds = time.perf_counter() - started
    wait_for_listeners(spark)
    execution = frame._jdf.queryExecution()
    return Run(seconds, rows, tasks_of_group(spark, group), scans(execution.executedPlan()), _phases(execution))


def _phases(execution: Any) -> dict[str, float]:
    """Seconds in each of Spark's planning phases (parsing, analysis, optimization, planning): where a short
    query's time goes on each side, beside the run itself."""
    phases: dict[str, float] = {}
    entries = execution.tracker().phases().iterator()
    while entries.hasNext():
        entry = entries.next()
        phases[entry._1()] = round(entry._2().durationMs() / 1000, 3)
    return phases


def _error_text(error: BaseException) -> str:
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    return " ".join(lines[:3])[:600] if lines else type(error).__name__


def measure(spark: Any, texts: dict[int, str], uses: dict[str, str], repeat: int) -> dict[str, dict[str, Any]]:
    """Every query on both sides, alternating, best of ``repeat``; what each side did, and whether the rows agree."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    failures = (PySparkException, Py4JError)
    parser = spark._jsparkSession.sessionState().sqlParser()
    for side in SIDES:  # load classes, connect to the service, warm the JVM
        spark.sql(uses[side])
        spark.sql("SELECT count(*) FROM date_dim").collect()
    results: dict[str, dict[str, Any]] = {}
    for index, (number, text) in enumerate(texts.items(), 1):
        query = f"q{number}"
        entry: dict[str, Any] = {}
        results[query] = entry
        try:
            sql = to_spark(text)
            parser.parsePlan(sql)
        except (ValueError, *failures) as error:  # sqlglot's errors are ValueErrors
            entry["error"] = f"no Spark SQL text: {_error_text(error)}"
            progress(f"[{index}/{len(texts)}] {query}: {entry['error']}")
            continue
        entry["load_average"] = round(os.getloadavg()[0], 2)  # the machine's business as the query starts (cores are shared)
        runs: dict[str, list[Run]] = {side: [] for side in SIDES}
        sides = {side: SideResult() for side in SIDES}
        for attempt in range(repeat):
            for side in SIDES:
                if sides[side].error is not None:
                    continue
                spark.sql(uses[side])
                try:
                    runs[side].append(_run(spark, sql, f"tpcds-{query}-{side}-{attempt}"))
                except failures as error:
                    sides[side].error = _error_text(error)
        for side, done in runs.items():
            if done:
                best = min(done, key=lambda run: run.seconds)
                files = [scan.metrics["numFiles"] for scan in best.scans if "numFiles" in scan.metrics]
                sides[side] = SideResult(
                    seconds=round(best.seconds, 3), all_seconds=[round(run.seconds, 3) for run in done], tasks=best.tasks,
                    files=sum(files) if len(files) == len(best.scans) and files else None,
                    runtime_filtered=any(scan.runtime_filtered for scan in best.scans), phases=best.phases,
                    scans=[asdict(scan) for scan in best.scans], error=sides[side].error)
        for side in SIDES:
            entry[side] = asdict(sides[side])
        if runs["spark"] and runs["connector"]:
            best = {side: min(run.seconds for run in runs[side]) for side in SIDES}
            entry["ratio"] = round(best["connector"] / best["spark"], 3)
            entry["same_rows"], entry["rows_compared"] = _compare(spark, sql, uses, runs)
            entry["rows"] = len(runs["spark"][-1].rows)
        progress(f"[{index}/{len(texts)}] {query}: {_line(query, entry)}")
    return results


def _compare(spark: Any, sql: str, uses: dict[str, str], runs: dict[str, list[Run]]) -> tuple[bool, str]:
    """Whether the connector returned Spark's rows, running both without the final LIMIT when that decides it."""
    same, how = compare(runs["connector"][-1].rows, runs["spark"][-1].rows)
    unlimited = None if same else without_limit(sql)
    if unlimited is None:
        return same, how
    full = []
    for side in ("connector", "spark"):
        spark.sql(uses[side])
        full.append(_run(spark, unlimited, f"tpcds-check-{side}").rows)
    return compare(runs["connector"][-1].rows, runs["spark"][-1].rows, (full[0], full[1]))


def summarize(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The figures the goals are about: geometric mean, worst query, queries over 1.2x, rows, failures."""
    ratios = {query: entry["ratio"] for query, entry in results.items() if "ratio" in entry}
    failed = sorted(query for query, entry in results.items() if "ratio" not in entry)
    different = sorted(query for query, entry in results.items() if entry.get("same_rows") is False)
    mean = math.exp(sum(math.log(max(ratio, 1e-9)) for ratio in ratios.values()) / len(ratios)) if ratios else None
    worst = max(ratios, key=lambda query: ratios[query]) if ratios else None
    over = sorted((query for query, ratio in ratios.items() if ratio > QUERY_GOAL), key=lambda query: int(query[1:]))
    return {
        "queries_measured": len(ratios), "geometric_mean": round(mean, 3) if mean is not None else None,
        "worst": {"query": worst, "ratio": ratios[worst]} if worst is not None else None,
        "over_goal": over, "different_rows": different, "failed": failed,
        "goals": {"geometric_mean_at_most": MEAN_GOAL, "query_at_most": QUERY_GOAL,
                  "geometric_mean_met": mean is not None and mean <= MEAN_GOAL, "every_query_met": not over and not failed,
                  "same_rows_met": not different and not failed},
    }


def _cell(value: Any) -> str:
    return "?" if value is None else str(value)


def _line(query: str, entry: dict[str, Any]) -> str:
    if "ratio" not in entry:
        errors = [f"{side}: {entry[side]['error']}" for side in SIDES if side in entry and entry[side]["error"]]
        return "FAILED " + ("; ".join(errors) or entry.get("error", ""))
    ours, theirs = entry["connector"], entry["spark"]
    pruned = "/".join("yes" if side["runtime_filtered"] else "no" for side in (ours, theirs))
    return (f"{ours['seconds']:>8.2f} s {theirs['seconds']:>8.2f} s {entry['ratio']:>7.2f}x  "
            f"{'same' if entry['same_rows'] else 'DIFFERENT':<9} {pruned:<7} "
            f"{_cell(ours['tasks']) + '/' + _cell(theirs['tasks']):>11} {_cell(ours['files']) + '/' + _cell(theirs['files']):>11}")


def table(results: dict[str, dict[str, Any]], args: argparse.Namespace, summary: dict[str, Any]) -> str:
    lines = [f"TPC-DS at scale factor {args.sf:g}, {args.layout} layout through the connector, Spark's own Hive tables; "
             f"best of {args.repeat}, {os.cpu_count()} cores, load average {summary['load_average']['before'][0]} before, "
             f"{summary['load_average']['after'][0]} after",
             f"{'query':<6} {'ours':>10} {'Spark':>10} {'ratio':>8}  {'rows':<9} {'DPP o/S':<7} {'tasks o/S':>11} {'files o/S':>11}"]
    lines += [f"{query:<6} {_line(query, entry)}" for query, entry in results.items()]
    for query, entry in results.items():
        if entry.get("same_rows") is False or "ratio" in entry and "LIMIT" in entry["rows_compared"]:
            lines.append(f"{query}: {entry['rows_compared']}")
    goals = summary["goals"]
    verdict = {True: "met", False: "NOT met"}
    if summary["geometric_mean"] is not None:
        lines.append(f"geometric mean of connector / Spark over {summary['queries_measured']} queries: {summary['geometric_mean']:.2f}x "
                     f"(goal at most {MEAN_GOAL:g}: {verdict[goals['geometric_mean_met']]})")
        lines.append(f"worst: {summary['worst']['query']} {summary['worst']['ratio']:.2f}x; over {QUERY_GOAL:g}x: "
                     f"{len(summary['over_goal'])} of {summary['queries_measured']} (goal none: {verdict[goals['every_query_met']]})")
    lines.append(f"same rows: {summary['queries_measured'] - len(summary['different_rows'])} of {summary['queries_measured']}"
                 f"{', different: ' + ', '.join(summary['different_rows']) if summary['different_rows'] else ''}; "
                 f"failed: {', '.join(summary['failed']) or 'none'} (goal every query Spark's rows: {verdict[goals['same_rows_met']]})")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
