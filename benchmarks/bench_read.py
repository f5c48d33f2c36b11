"""Read throughput: a >= 1 GB Parquet table through the hms data source vs Spark's native read.

Both read every row and column of the same Hive table on the same metastore in one run; the sink is
Spark's ``noop`` writer, so the time is the scan. Reported as a ratio (goal: at most 1.5x).

    python benchmarks/bench_read.py [--gigabytes 1.0] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from _common import progress, save, timed  # noqa: E402
from hmsclient.genthrift.hive_metastore import ttypes  # noqa: E402

from hms_catalog import open_session  # noqa: E402
from hms_catalog.client import HmsClientPool  # noqa: E402
from hms_catalog.metastore import EmbeddedMetastore  # noqa: E402
from hms_catalog.properties import ClientConfig, parse_uris  # noqa: E402
from planner import plan_table  # noqa: E402

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gigabytes", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-read-") as scratch_dir:
        scratch = Path(scratch_dir)
        with EmbeddedMetastore(scratch / "metastore", events=False) as metastore:
            data = metastore.warehouse / "bench_read.db" / "facts"
            data.mkdir(parents=True)
            size = write_table(data, args.gigabytes)
            pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri)))
            pool.call("create_database", ttypes.Database(name="bench_read", description="", locationUri=f"file://{data.parent}", parameters={}))
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
            results = {}
            for name, frame in (("spark_native", native), ("hms_source", ours)):
                times = [timed(lambda f=frame: f.write.format("noop").mode("overwrite").save())[0] for _ in range(args.repeat)]
                results[name] = {"seconds": round(min(times), 2), "all_seconds": [round(t, 2) for t in times]}
                progress(f"{name}: {results[name]['seconds']}s")
            rows = ours.count()
            count_seconds, _ = timed(lambda: spark.read.format("hms").option("home", str(home)).option("columns", "")
                                     .load("bench.bench_read.facts").count())
            native_count_seconds, _ = timed(lambda: native.count())
            spark.stop()
    save("read", {
        "bytes": size, "rows": rows, "splits": splits, "spark_native": results["spark_native"], "hms_source": results["hms_source"],
        "count_from_footers_seconds": round(count_seconds, 2), "spark_native_count_seconds": round(native_count_seconds, 2),
        "ratios": {"full_scan_ours_over_native": round(results["hms_source"]["seconds"] / results["spark_native"]["seconds"], 2),
                   "count_ours_over_native": round(count_seconds / native_count_seconds, 2)},
        "goal_full_scan_ratio": 1.5,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
