"""Read throughput: a >= 1 GB Parquet table through the hms data source vs Spark's native read.

Both read every row and column of the same Hive table on the same metastore in one run; the sink is
Spark's ``noop`` writer, so the time is the scan. Reported as a ratio (goal: at most 1.5x), with the CPU
seconds the Spark JVM and its Python workers spent in each scan (read from /proc, on Linux): the source's
wall time is bounded by both sharing the same cores, not by either alone.

    python benchmarks/bench_read.py [--gigabytes 1.0] [--repeat 2] [--data DIR]

``--data`` keeps the generated Parquet files in DIR and reuses them in later runs (writing them takes
longer than the measurements).
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
from _common import progress, save, timed

from hms_catalog import open_session
from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris
from planner import plan_table

PARQUET = ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")
COLUMNS = [("id", "bigint"), ("amount", "double"), ("qty", "int"), ("code", "string"), ("price", "decimal(12,2)")]


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


def cpu_timed(action: Callable[[], Any], jvm: int) -> tuple[float, dict[str, float] | None]:
    """Wall seconds of ``action`` and the CPU seconds the Spark JVM and its Python workers spent in it."""
    if not Path("/proc/self/stat").exists():
        return timed(action)[0], None
    before = _process_times()
    seconds, _ = timed(action)
    after = _process_times()
    family, grown = {jvm}, True
    while grown:  # the JVM's descendants: the Python daemons and the workers they fork
        grown = False
        for pid, (parent, _, _) in after.items():
            if parent in family and pid not in family:
                family.add(pid)
                grown = True
    spent = {"spark_jvm": 0.0, "python_workers": 0.0}
    for pid in family:
        _, command, used = after[pid]
        earlier = before.get(pid)
        used -= earlier[2] if earlier is not None and earlier[1] == command else 0.0
        spent["spark_jvm" if pid == jvm else "python_workers"] += used
    return seconds, {key: round(value, 2) for key, value in spent.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gigabytes", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--data", type=Path, help="keep the Parquet files here and reuse them in later runs")
    args = parser.parse_args()
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
            home = scratch / "home"
            session = open_session(home)
            session.run_one(f"CREATE CATALOG bench PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}')")
            catalog = session.manager.catalog("bench")
            splits = len(plan_table(catalog, catalog.table("bench_read", "facts")).splits)
            session.manager.close()

            from pyspark.sql import SparkSession

            from planner.spark import register

            os.environ["PYSPARK_PYTHON"] = sys.executable
            spark = (SparkSession.builder.master("local[2]").appName("bench-read")
                     .config("spark.sql.catalogImplementation", "hive")
                     .config("spark.hadoop.hive.metastore.uris", metastore.uri)
                     .config("spark.sql.warehouse.dir", metastore.warehouse.as_uri())
                     .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                     .config("spark.pyspark.python", sys.executable)
                     .config("spark.driver.memory", "4g")
                     .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
                     .enableHiveSupport().getOrCreate())
            spark.sparkContext.setLogLevel("ERROR")
            register(spark)
            native = spark.table("bench_read.facts")
            ours = spark.read.format("hms").option("home", str(home)).load("bench.bench_read.facts")
            native.write.format("noop").mode("overwrite").save()  # warm the JVM and the page cache
            jvm = spark.sparkContext._gateway.proc.pid
            results: dict[str, dict[str, Any]] = {}
            for name, frame in (("spark_native", native), ("hms_source", ours)):
                runs = [cpu_timed(lambda f=frame: f.write.format("noop").mode("overwrite").save(), jvm) for _ in range(args.repeat)]
                best = min(range(len(runs)), key=lambda index: runs[index][0])
                results[name] = {"seconds": round(runs[best][0], 2), "all_seconds": [round(t, 2) for t, _ in runs],
                                 "cpu_seconds": runs[best][1]}
                progress(f"{name}: {results[name]['seconds']}s, CPU {results[name]['cpu_seconds']}")
            rows = ours.count()
            count_seconds, count_cpu = cpu_timed(lambda: spark.read.format("hms").option("home", str(home)).option("columns", "")
                                                 .load("bench.bench_read.facts").count(), jvm)
            native_count_seconds, native_count_cpu = cpu_timed(lambda: native.count(), jvm)
            spark.stop()
    save("read", {
        "bytes": size, "rows": rows, "splits": splits, "spark_native": results["spark_native"], "hms_source": results["hms_source"],
        "count_from_footers_seconds": round(count_seconds, 2), "count_from_footers_cpu_seconds": count_cpu,
        "spark_native_count_seconds": round(native_count_seconds, 2), "spark_native_count_cpu_seconds": native_count_cpu,
        "ratios": {"full_scan_ours_over_native": round(results["hms_source"]["seconds"] / results["spark_native"]["seconds"], 2),
                   "count_ours_over_native": round(count_seconds / native_count_seconds, 2)},
        "goal_full_scan_ratio": 1.5,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
