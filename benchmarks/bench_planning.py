"""Planning cost at scale, next to Spark with Hive support planning the same queries on the same metastore.

Tables (one small Parquet file per partition, hard links to one sample file):
- ``many_files``: 10,000 files, no partitions;
- ``many_partitions``: ``--partitions`` partitions, region STRING x day STRING (``--fanout`` days per
  region), planned cold with four predicates: leading key ``=``, second key ``=``, ranges on both keys,
  ``IN`` on the second key;
- ``store_sales``: ``--date-partitions`` partitions of an INT key (``ss_sold_date_sk``, one of them
  NULL), TPC-DS's fact table shape, planned whole.

"Cold" is a fresh catalog (new pool, empty caches) for us, and a refreshed table for Spark (its file
status and relation caches dropped; its JVM warmed up on another table first). The metastore server is
warm for both: every case runs once before either side is timed, because its Derby database compiles
one statement per query shape the first time it sees it, a cost neither client controls. Spark's planning is timed as
``spark.sql(query).inputFiles()`` (analysis, partition pruning and file listing, no data read). Metastore
calls of both are counted at the server (Hive's audit log). Our time is split as PlanSummary splits it:
metastore, listing, splitting.

    python benchmarks/bench_planning.py [--files 10000] [--partitions 120000] [--fanout 100]
                                        [--date-partitions 1824] [--keep DIR]

Registering 120,000 partitions in the embedded Derby metastore takes minutes; ``--keep DIR`` keeps the
metastore and its tables in DIR and reuses them in later runs with the same sizes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa
import pyarrow.parquet as pq
from _common import progress, save, timed

from hms_catalog import open_session
from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.formats.storage import STORAGE_FORMATS
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.metastore.embedded import MetastoreAlreadyRunning
from hms_catalog.properties import ClientConfig, parse_uris
from planner import plan_table

DB = "bench_plan"
PARQUET = (STORAGE_FORMATS["PARQUET"].input_format, STORAGE_FORMATS["PARQUET"].output_format, STORAGE_FORMATS["PARQUET"].serde)
FIRST_DATE_SK = 2450816  # TPC-DS's first ss_sold_date_sk
GOAL_SECONDS = 1.5
BUILT = "bench_planning.built.json"


def sd(location: Path) -> ttypes.StorageDescriptor:
    return ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema("id", "bigint", ""), ttypes.FieldSchema("v", "string", "")],
        location=f"file://{location}", inputFormat=PARQUET[0], outputFormat=PARQUET[1],
        serdeInfo=ttypes.SerDeInfo(serializationLib=PARQUET[2], parameters={"serialization.format": "1"}),
        numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
    )


def create_table(pool: HmsClientPool, name: str, location: Path, keys: list[tuple[str, str]]) -> None:
    pool.call("create_table", ttypes.Table(
        tableName=name, dbName=DB, owner="bench", sd=sd(location), tableType="EXTERNAL_TABLE",
        partitionKeys=[ttypes.FieldSchema(key, kind, "") for key, kind in keys], parameters={"EXTERNAL": "TRUE"},
    ))


def register(pool: HmsClientPool, table: str, root: Path, sample: Path, partitions: list[tuple[list[str], str]]) -> None:
    """Add ``(values, relative folder)`` partitions in batches of 1,000, each folder holding a hard link to
    ``sample`` (a copy where links are refused)."""
    batch = []
    for done, (values, folder) in enumerate(partitions, 1):
        location = root / folder
        location.mkdir(parents=True, exist_ok=True)
        target = location / "part-00000.parquet"
        try:
            os.link(sample, target)
        except OSError:
            target.write_bytes(sample.read_bytes())
        batch.append(ttypes.Partition(values=values, dbName=DB, tableName=table, sd=sd(location), parameters={}))
        if len(batch) == 1000 or done == len(partitions):
            pool.call("add_partitions", batch)
            batch = []
            if done % 10_000 == 0 or done == len(partitions):
                progress(f"{table}: {done} partitions registered")


def build(pool: HmsClientPool, warehouse: Path, args: argparse.Namespace) -> None:
    root = warehouse / f"{DB}.db"
    shutil.rmtree(root, ignore_errors=True)  # left by an earlier build (external tables keep their files)
    root.mkdir(parents=True)
    pool.call("create_database", ttypes.Database(name=DB, description="", locationUri=f"file://{root}", parameters={}))
    sample = root / "sample.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}), sample)

    many = root / "many_files"
    many.mkdir(exist_ok=True)
    for index in range(args.files):
        os.link(sample, many / f"part-{index:05d}.parquet")
    create_table(pool, "many_files", many, [])
    progress(f"{args.files} files written")

    create_table(pool, "many_partitions", root / "many_partitions", [("region", "string"), ("day", "string")])
    grid = [(f"r{index // args.fanout:04d}", f"d{index % args.fanout:04d}") for index in range(args.partitions)]
    register(pool, "many_partitions", root / "many_partitions", sample,
             [([region, day], f"region={region}/day={day}") for region, day in grid])

    create_table(pool, "store_sales", root / "store_sales", [("ss_sold_date_sk", "int")])
    keys = [str(FIRST_DATE_SK + index) for index in range(args.date_partitions - 1)] + ["__HIVE_DEFAULT_PARTITION__"]
    register(pool, "store_sales", root / "store_sales", sample, [([key], f"ss_sold_date_sk={key}") for key in keys])


def predicates(partitions: int, fanout: int) -> dict[str, str]:
    """The four predicates of the issue, on whatever grid ``partitions`` and ``fanout`` make."""
    regions = max(1, partitions // fanout)
    return {
        "leading key =": f"region = 'r{min(42, regions - 1):04d}'",
        "second key =": f"day = 'd{min(42, fanout - 1):04d}'",
        "ranges on both keys": f"region >= 'r{max(0, regions - 10):04d}' AND day < 'd{min(10, fanout):04d}'",
        "IN on second key": "day IN ('d0001', 'd0002', 'd0003')",
    }


def audited(metastore: EmbeddedMetastore, action: Callable[[], Any]) -> tuple[float, dict[str, int], Any]:
    time.sleep(0.1)
    mark, _ = metastore.audited_calls()
    seconds, value = timed(action)
    time.sleep(0.3)
    _, calls = metastore.audited_calls(mark)
    return round(seconds, 4), calls, value


def measure_ours(metastore: EmbeddedMetastore, home: Path, table: str, where: str | None) -> dict[str, Any]:
    """One cold plan in a fresh catalog (the connection opened before the clock starts), then a warm one."""
    session = open_session(home)
    session.run_one(f"CREATE CATALOG IF NOT EXISTS bench PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}')")
    catalog = session.manager.catalog("bench")
    catalog.database_names()
    handle = catalog.table(DB, table)
    try:
        cold_seconds, cold_calls, plan = audited(metastore, lambda: plan_table(catalog, handle, where))
        warm_seconds, warm_calls, again = audited(metastore, lambda: plan_table(catalog, handle, where))
    finally:
        session.manager.close()
    summary = plan.summary
    return {
        "cold": {"seconds": cold_seconds, "calls": cold_calls, "splits": len(plan.splits),
                 "partitions": summary.partitions_scanned, "metastore_seconds": summary.hms_seconds,
                 "listing_seconds": summary.listing_seconds, "splitting_seconds": summary.splitting_seconds},
        "warm": {"seconds": warm_seconds, "calls": warm_calls, "splits": len(again.splits)},
    }


def measure_spark(spark: Any, metastore: EmbeddedMetastore, table: str, where: str | None) -> dict[str, Any]:
    query = f"SELECT * FROM {DB}.{table}" + (f" WHERE {where}" if where else "")
    spark.catalog.refreshTable(f"{DB}.{table}")
    cold_seconds, cold_calls, files = audited(metastore, lambda: spark.sql(query).inputFiles())
    warm_seconds, warm_calls, again = audited(metastore, lambda: spark.sql(query).inputFiles())
    return {"cold": {"seconds": cold_seconds, "calls": cold_calls, "files": len(files)},
            "warm": {"seconds": warm_seconds, "calls": warm_calls, "files": len(again)}}


def start_spark(metastore: EmbeddedMetastore, scratch: Path) -> Any:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]").appName("bench-planning")
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.hadoop.hive.metastore.uris", metastore.uri)
        .config("spark.sql.warehouse.dir", metastore.warehouse.as_uri())
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
        .enableHiveSupport().getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("SHOW DATABASES").collect()
    return spark


def total(calls: dict[str, int]) -> int:
    return sum(calls.values())


def compare(cases: list[tuple[str, str, str | None]], ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """Per case: our cold figures next to Spark's, the ratio, and whether the issue's goals hold."""
    rows = {}
    for label, table, _ in cases:
        mine, peer = ours[label]["cold"], theirs[label]["cold"]
        allowed = 3 + math.ceil(mine["partitions"] / 1000)
        rows[label] = {
            "table": table, "ours_seconds": mine["seconds"], "ours_calls": total(mine["calls"]),
            "ours_splits": mine["splits"], "partitions": mine["partitions"],
            "metastore_seconds": mine["metastore_seconds"], "listing_seconds": mine["listing_seconds"],
            "splitting_seconds": mine["splitting_seconds"], "spark_seconds": peer["seconds"],
            "spark_calls": total(peer["calls"]), "spark_files": peer["files"],
            "ours_over_spark": round(mine["seconds"] / max(peer["seconds"], 1e-6), 3),
            "calls_allowed": allowed,
            "goals_met": (mine["seconds"] <= GOAL_SECONDS or table == "store_sales") and total(mine["calls"]) <= allowed
            and mine["seconds"] < peer["seconds"],
        }
    return rows


def print_table(rows: dict[str, Any]) -> None:
    header = (f"{'case':<22} {'ours s':>7} {'calls':>5} {'splits':>6} {'hms s':>6} {'list s':>6} {'split s':>7} "
              f"{'spark s':>7} {'calls':>5} {'files':>6} {'ratio':>6}  goals")
    print(header)
    for label, row in rows.items():
        print(f"{label:<22} {row['ours_seconds']:>7.3f} {row['ours_calls']:>5} {row['ours_splits']:>6} "
              f"{row['metastore_seconds']:>6.3f} {row['listing_seconds']:>6.3f} {row['splitting_seconds']:>7.3f} "
              f"{row['spark_seconds']:>7.3f} {row['spark_calls']:>5} {row['spark_files']:>6} {row['ours_over_spark']:>6.2f}  "
              f"{'met' if row['goals_met'] else 'MISSED'} (calls <= {row['calls_allowed']})")


def open_metastore(directory: Path) -> EmbeddedMetastore:
    metastore = EmbeddedMetastore(directory, audit=True, events=False, heap="2g")
    with contextlib.suppress(MetastoreAlreadyRunning):  # kept running from an earlier run with --keep
        metastore.start()
    return metastore


def run(directory: Path, scratch: Path, args: argparse.Namespace) -> dict[str, Any]:
    sizes = {"files": args.files, "partitions": args.partitions, "fanout": args.fanout, "date_partitions": args.date_partitions}
    metastore = open_metastore(directory)
    try:
        marker = directory / BUILT
        setup_seconds = 0.0
        if not marker.exists() or json.loads(marker.read_text()) != sizes:
            pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri)))
            with contextlib.suppress(ttypes.NoSuchObjectException, ttypes.MetaException):  # absent on a first run
                pool.call("drop_database", DB, True, True)
            setup_seconds, _ = timed(lambda: build(pool, metastore.warehouse, args))
            pool.close()
            marker.write_text(json.dumps(sizes))
        cases: list[tuple[str, str, str | None]] = [("many_files", "many_files", None)]
        cases += [(label, "many_partitions", where) for label, where in predicates(args.partitions, args.fanout).items()]
        cases.append(("store_sales full", "store_sales", None))
        progress("warming the metastore up")
        for _, table, where in cases:  # its database compiles a statement per query shape, once for both sides
            measure_ours(metastore, scratch / "warm-up", table, where)
        progress("measuring hms-catalog")
        ours = {label: measure_ours(metastore, scratch / "home", table, where) for label, table, where in cases}
        progress("measuring Spark")
        spark = start_spark(metastore, scratch)
        try:
            spark.sql(f"SELECT * FROM {DB}.many_files").inputFiles()  # the JVM warmed up on another table
            theirs = {label: measure_spark(spark, metastore, table, where) for label, table, where in cases}
        finally:
            spark.stop()
    finally:
        if args.keep is None:
            metastore.stop()
    rows = compare(cases, ours, theirs)
    print_table(rows)
    return {**sizes, "setup_seconds": round(setup_seconds, 1), "cases": {label: where for label, _, where in cases},
            "comparison": rows, "hms_catalog": ours, "spark": theirs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=120_000)
    parser.add_argument("--fanout", type=int, default=100, help="days per region")
    parser.add_argument("--date-partitions", type=int, default=1_824, help="partitions of store_sales")
    parser.add_argument("--keep", type=Path, help="keep the metastore and its tables here, reused by later runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-planning-") as scratch_dir:
        scratch = Path(scratch_dir)
        directory = args.keep.resolve() if args.keep is not None else scratch / "metastore"
        report = run(directory, scratch, args)
    save("planning", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
