"""Read throughput: a >= 1 GB Parquet table read by Spark natively, by the native connector and by the hms source.

Three readers of the same Hive table on the same metastore, in one run and one SparkSession:

- ``spark_native``: Spark's own read of the table (``spark_catalog``, Hive support);
- ``connector``: the native Spark connector (``spark_connector``, a Java DataSource V2 catalog) over a
  catalog service (``hms-catalog serve``, a subprocess on a temporary home, stopped with SIGTERM at the
  end) that has a catalog of the same metastore;
- ``hms_source``: the ``hms`` Python data source (``planner.spark``) on a local home.

Each reads three queries, each the best of ``--repeat`` runs (the runs of a query alternate between the
readers): every row and column (``SELECT *``), ``count(*)``, and two columns (``SELECT id, amount``).
Scans go to Spark's ``noop`` writer, so the time is the scan; the timed action starts from the query text
(analysis and the catalog's planning included). Reported as ratios to Spark's native read, with goals for
the connector (full scan at most 1.1x, ``count(*)`` 1.5x, two columns 1.2x) and the Python source's full
scan (1.5x), and the CPU seconds the Spark JVM, its Python workers and the catalog service spent in each
run (read from /proc, on Linux): a reader's wall time is bounded by all of them sharing the same cores.

    python benchmarks/bench_read.py [--gigabytes 1.0] [--repeat 2] [--data DIR]

``--data`` keeps the generated Parquet files in DIR and reuses them in later runs (writing them takes
longer than the measurements). Results are printed and saved to ``benchmarks/results/read.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from _common import Service, progress, save, timed

from hms_catalog import open_session
from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.formats.storage import STORAGE_FORMATS
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris
from planner import plan_table

PARQUET = (STORAGE_FORMATS["PARQUET"].input_format, STORAGE_FORMATS["PARQUET"].output_format, STORAGE_FORMATS["PARQUET"].serde)
COLUMNS = [("id", "bigint"), ("amount", "double"), ("qty", "int"), ("code", "string"), ("price", "decimal(12,2)")]
CATALOG = "bench"  # the local home's catalog, the service's catalog and the connector's Spark catalog
TABLE = "bench_read.facts"
TWO_COLUMNS = ("id", "amount")
QUERIES = {"full_scan": "full scan", "count": "count(*)", "two_columns": "two columns"}
READERS = {"spark_native": "Spark native", "connector": "connector", "hms_source": "hms source"}
CONNECTOR_GOALS = {"full_scan": 1.1, "count": 1.5, "two_columns": 1.2}  # connector / native, at most
HMS_SOURCE_GOALS = {"full_scan": 1.5}  # hms source / native, at most


def write_table(directory: Path, gigabytes: float) -> int:
    rows_per_file = 4_000_000
    written = 0
    index = 0
    while written < gigabytes * 1024**3:
        ids = pa.array(range(index * rows_per_file, (index + 1) * rows_per_file), pa.int64())
        low = pc.bit_wise_and(ids, 0xFFFF)
        table = pa.table({
            "id": ids,
            "amount": pc.random(rows_per_file, initializer=index),
            "qty": pc.bit_wise_and(ids, 1023).cast(pa.int32()),
            "code": pc.binary_join_element_wise("c", low.cast(pa.string()), ""),
            "price": low.cast(pa.decimal128(21, 2)).cast(pa.decimal128(12, 2)),
        })
        path = directory / f"part-{index:05d}.parquet"
        pq.write_table(table, path, compression="none", row_group_size=1_000_000)
        written += path.stat().st_size
        index += 1
        progress(f"{written / 1024**3:.2f} GB written")
    return written


def _process_times() -> dict[int, tuple[int, str, float]]:
    """pid -> (parent pid, command line, CPU seconds used so far), for every process /proc shows."""
    tick = os.sysconf("SC_CLK_TCK")
    times = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        times[int(entry)] = (int(fields[1]), command, (int(fields[11]) + int(fields[12])) / tick)
    return times


def cpu_timed(action: Callable[[], Any], jvm: int, service: int | None = None) -> tuple[float, dict[str, float] | None, Any]:
    """Wall seconds of ``action``, the CPU seconds the Spark JVM, its Python workers and the catalog service
    (the process ``service`` and its descendants) spent in it, and what ``action`` returned."""
    if not Path("/proc/self/stat").exists():
        seconds, value = timed(action)
        return seconds, None, value
    before = _process_times()
    seconds, value = timed(action)
    after = _process_times()

    def family(root: int) -> set[int]:
        members, grown = {root}, True
        while grown:  # the root's descendants: the JVM's Python daemons and the workers they fork
            grown = False
            for pid, (parent, _, _) in after.items():
                if parent in members and pid not in members:
                    members.add(pid)
                    grown = True
        return members & after.keys()

    def used(pid: int) -> float:
        _, command, total = after[pid]
        earlier = before.get(pid)
        return total - (earlier[2] if earlier is not None and earlier[1] == command else 0.0)

    workers = family(jvm) - {jvm}
    spent = {"spark_jvm": used(jvm) if jvm in after else 0.0, "python_workers": sum(map(used, workers))}
    if service is not None:
        spent["service"] = sum(map(used, family(service)))
    return seconds, {key: round(cpu, 2) for key, cpu in spent.items()}, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gigabytes", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--data", type=Path, help="keep the Parquet files here and reuse them in later runs")
    args = parser.parse_args()

    from spark_connector import catalog_conf, connector_jar

    jar = connector_jar()  # built with javac on first use
    progress(f"connector jar {jar}")
    with tempfile.TemporaryDirectory(prefix="bench-read-") as scratch_dir:
        scratch = Path(scratch_dir)
        with EmbeddedMetastore(scratch / "metastore", events=False) as metastore:
            data = args.data.resolve() if args.data is not None else metastore.warehouse / "bench_read.db" / "facts"
            data.mkdir(parents=True, exist_ok=True)
            kept = sorted(data.glob("part-*.parquet"))
            if kept:
                size = sum(path.stat().st_size for path in kept)
                progress(f"reusing {len(kept)} files ({size / 1024**3:.2f} GB) in {data}")
            else:
                size = write_table(data, args.gigabytes)
            pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri)))
            pool.call("create_database", ttypes.Database(name="bench_read", description="",
                                                         locationUri=(metastore.warehouse / "bench_read.db").as_uri(), parameters={}))
            pool.call("create_table", ttypes.Table(
                tableName="facts", dbName="bench_read", owner="bench", partitionKeys=[], parameters={"EXTERNAL": "TRUE"},
                tableType="EXTERNAL_TABLE", sd=ttypes.StorageDescriptor(
                    cols=[ttypes.FieldSchema(n, t, "") for n, t in COLUMNS], location=f"file://{data}",
                    inputFormat=PARQUET[0], outputFormat=PARQUET[1], numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
                    serdeInfo=ttypes.SerDeInfo(serializationLib=PARQUET[2], parameters={}))))
            pool.close()
            properties = {"type": "hms", "hive.metastore.uris": metastore.uri}
            home = scratch / "home"
            session = open_session(home)
            session.run_one(f"CREATE CATALOG {CATALOG} PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}')")
            catalog = session.manager.catalog(CATALOG)
            splits = len(plan_table(catalog, catalog.table("bench_read", "facts")).splits)
            session.manager.close()

            service = Service(scratch / "service-home")
            service_exit: int | None = None
            try:
                progress(f"catalog service at {service.url} (pid {service.process.pid})")
                client = service.client()
                client.create_catalog(CATALOG, properties)
                client.close()
                results, rows, plan_text, load = measure(args.repeat, scratch, metastore, home, jar,
                                                         catalog_conf(CATALOG, service.url, service.token), service.process.pid)
            finally:
                service_exit = service.stop()
                progress(f"catalog service stopped, exit code {service_exit}")
    if service_exit != 0:
        print("".join(service.lines[-20:]), file=sys.stderr)

    ratios = {reader: {query: _ratio(results[query][reader]["seconds"], results[query]["spark_native"]["seconds"], goals.get(query))
                       for query in QUERIES}
              for reader, goals in (("connector", CONNECTOR_GOALS), ("hms_source", HMS_SOURCE_GOALS))}
    save("read", {
        "bytes": size, "rows": rows, "splits": splits, "repeat": args.repeat, "cores": os.cpu_count(),
        "load_average": load,
        "queries": {"full_scan": f"SELECT * FROM <catalog>.{TABLE} -> noop", "count": f"SELECT count(*) FROM <catalog>.{TABLE}",
                    "two_columns": f"SELECT {', '.join(TWO_COLUMNS)} FROM <catalog>.{TABLE} -> noop"},
        "results": results,
        "ratios_over_native": ratios,
        "connector": {"jar": jar.name, "scan": plan_text, "service_exit_code": service_exit},
    })
    print(summary(size, rows, splits, args.repeat, results, ratios, load))
    return 0 if service_exit == 0 else 1


def measure(repeat: int, scratch: Path, metastore: EmbeddedMetastore, home: Path, jar: Path, connector: dict[str, str],
            service: int) -> tuple[dict[str, dict[str, Any]], int, str, dict[str, list[float]]]:
    """Every query by every reader, best of ``repeat``; the row count all agree on; the connector's scan as
    Spark describes it; the load averages before and after."""
    from pyspark.sql import SparkSession

    from planner.spark import register

    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = (SparkSession.builder.master("local[2]").appName("bench-read")
               .config("spark.jars", str(jar))
               .config("spark.sql.catalogImplementation", "hive")
               .config("spark.hadoop.hive.metastore.uris", metastore.uri)
               .config("spark.sql.warehouse.dir", metastore.warehouse.as_uri())
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.pyspark.python", sys.executable)
               .config("spark.driver.memory", "4g")
               .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}"))
    spark = builder.enableHiveSupport().getOrCreate()
    try:
        spark.sparkContext.setLogLevel("ERROR")
        for key, value in connector.items():  # the jar is loaded: the catalog may be set at run time
            spark.conf.set(key, value)
        register(spark)

        def sql(reader: str, columns: str) -> Any:
            return spark.sql(f"SELECT {columns} FROM {'spark_catalog' if reader == 'spark_native' else CATALOG}.{TABLE}")

        def hms(columns: str | None) -> Any:
            frame = spark.read.format("hms").option("home", str(home))
            return (frame if columns is None else frame.option("columns", columns)).load(f"{CATALOG}.{TABLE}")

        def noop(frame: Any) -> None:
            frame.write.format("noop").mode("overwrite").save()

        two = ", ".join(TWO_COLUMNS)
        actions: dict[str, dict[str, Callable[[], Any]]] = {
            "full_scan": {"spark_native": lambda: noop(sql("spark_native", "*")), "connector": lambda: noop(sql("connector", "*")),
                          "hms_source": lambda: noop(hms(None))},
            "count": {"spark_native": lambda: sql("spark_native", "count(*)").collect()[0][0],
                      "connector": lambda: sql("connector", "count(*)").collect()[0][0],
                      "hms_source": lambda: hms("").count()},  # no columns: the source counts from footers
            "two_columns": {"spark_native": lambda: noop(sql("spark_native", two)), "connector": lambda: noop(sql("connector", two)),
                            "hms_source": lambda: noop(hms(",".join(TWO_COLUMNS)))},
        }
        plan_text = sql("connector", "*")._jdf.queryExecution().executedPlan().toString()
        if f"hms-catalog {CATALOG}.{TABLE}" not in plan_text:
            raise SystemExit(f"the connector's catalog does not scan {CATALOG}.{TABLE}:\n{plan_text}")
        plan_text = " ".join(plan_text.split())
        progress("warming up (Spark's read and the connector's, once each)")
        actions["full_scan"]["spark_native"]()  # warm the JVM and the page cache
        actions["count"]["connector"]()  # load the connector's classes and its service connection
        gateway = spark.sparkContext._gateway
        assert gateway is not None
        jvm = gateway.proc.pid
        load = {"before": [round(x, 2) for x in os.getloadavg()]}
        results: dict[str, dict[str, Any]] = {}
        counts: dict[str, int] = {}
        for query, by_reader in actions.items():
            runs: dict[str, list[tuple[float, dict[str, float] | None, Any]]] = {reader: [] for reader in by_reader}
            for _ in range(repeat):  # the readers alternate, so that a busy moment of the machine spreads over them
                for reader, action in by_reader.items():
                    runs[reader].append(cpu_timed(action, jvm, service))
            results[query] = {}
            for reader, done in runs.items():
                best = min(range(len(done)), key=lambda index: done[index][0])
                results[query][reader] = {"seconds": round(done[best][0], 2), "all_seconds": [round(t, 2) for t, _, _ in done],
                                          "cpu_seconds": done[best][1]}
                progress(f"{QUERIES[query]}, {READERS[reader]}: {results[query][reader]['seconds']} s "
                         f"(runs {results[query][reader]['all_seconds']}), CPU {results[query][reader]['cpu_seconds']}")
                if query == "count":
                    counts[reader] = int(done[best][2])
        load["after"] = [round(x, 2) for x in os.getloadavg()]
        if len(set(counts.values())) != 1:
            raise SystemExit(f"the readers disagree on the number of rows: {counts}")
        return results, counts["spark_native"], plan_text, load
    finally:
        spark.stop()


def _ratio(seconds: float, native: float, goal: float | None) -> dict[str, Any]:
    ratio = round(seconds / native, 2) if native > 0 else float("inf")
    return {"ratio": ratio} if goal is None else {"ratio": ratio, "goal": goal, "met": ratio <= goal}


def summary(size: int, rows: int, splits: int, repeat: int, results: dict[str, dict[str, Any]],
            ratios: dict[str, dict[str, dict[str, Any]]], load: dict[str, list[float]]) -> str:
    lines = [f"read: {size / 1024**3:.2f} GB of Parquet, {rows:,} rows, {splits} splits; best of {repeat}, "
             f"{os.cpu_count()} cores, load average {load['before'][0]} before, {load['after'][0]} after",
             f"{'query':<12} {'Spark native':>13} {'connector':>21} {'hms source':>21}"]
    for query, label in QUERIES.items():
        cells = [f"{results[query]['spark_native']['seconds']:>11.2f} s"]
        for reader in ("connector", "hms_source"):
            cells.append(f"{results[query][reader]['seconds']:>9.2f} s ({ratios[reader][query]['ratio']:>5.2f}x)")
        lines.append(f"{label:<12} {cells[0]:>13} {cells[1]:>21} {cells[2]:>21}")
    for reader, who in (("connector", "connector"), ("hms_source", "hms source")):
        goals = [f"{QUERIES[query]} {entry['ratio']:.2f}x <= {entry['goal']}x {'met' if entry['met'] else 'NOT met'}"
                 for query, entry in ratios[reader].items() if "goal" in entry]
        lines.append(f"goals, {who} / native: " + "; ".join(goals))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
