"""Planning cost: a 10,000-file table and a 20,000-partition table with an equality predicate, cold and
warm, next to Spark with Hive support planning the same query on the same metastore in the same run.

Spark's planning is timed as ``spark.sql(query).inputFiles()`` (analysis, partition pruning and file
listing, no data read). Metastore calls of both are counted at the server (Hive's audit log).

    python benchmarks/bench_planning.py [--files 10000] [--partitions 20000]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa
import pyarrow.parquet as pq
from _common import progress, save, timed

from hms_catalog import open_session
from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris
from planner import plan_table

DB = "bench_plan"
PARQUET = ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")


def sd(location: Path) -> ttypes.StorageDescriptor:
    return ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema("id", "bigint", ""), ttypes.FieldSchema("v", "string", "")],
        location=f"file://{location}", inputFormat=PARQUET[0], outputFormat=PARQUET[1],
        serdeInfo=ttypes.SerDeInfo(serializationLib=PARQUET[2], parameters={"serialization.format": "1"}),
        numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
    )


def build(pool: HmsClientPool, warehouse: Path, files: int, partitions: int, fanout: int) -> None:
    root = warehouse / f"{DB}.db"
    root.mkdir(parents=True, exist_ok=True)
    pool.call("create_database", ttypes.Database(name=DB, description="", locationUri=f"file://{root}", parameters={}))
    sample = root / "sample.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}), sample)

    many = root / "many_files"
    many.mkdir()
    for index in range(files):
        shutil.copyfile(sample, many / f"part-{index:05d}.parquet")
    pool.call("create_table", ttypes.Table(tableName="many_files", dbName=DB, owner="bench", sd=sd(many), partitionKeys=[],
                                           parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"))
    progress(f"{files} files written")

    wide = root / "many_partitions"
    keys = [ttypes.FieldSchema("region", "string", ""), ttypes.FieldSchema("day", "string", "")]
    pool.call("create_table", ttypes.Table(tableName="many_partitions", dbName=DB, owner="bench", sd=sd(wide), partitionKeys=keys,
                                           parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"))
    batch = []
    for index in range(partitions):
        region, day = f"r{index // fanout:04d}", f"d{index % fanout:04d}"
        location = wide / f"region={region}" / f"day={day}"
        location.mkdir(parents=True)
        shutil.copyfile(sample, location / "part-00000.parquet")
        batch.append(ttypes.Partition(values=[region, day], dbName=DB, tableName="many_partitions", sd=sd(location), parameters={}))
        if len(batch) == 1000:
            pool.call("add_partitions", batch)
            batch = []
            progress(f"{index + 1} partitions registered")
    if batch:
        pool.call("add_partitions", batch)


def audited(metastore: EmbeddedMetastore, action):  # type: ignore[no-untyped-def]
    time.sleep(0.1)
    mark, _ = metastore.audited_calls()
    seconds, value = timed(action)
    time.sleep(0.3)
    _, calls = metastore.audited_calls(mark)
    return round(seconds, 4), calls, value


def measure_ours(metastore: EmbeddedMetastore, home: Path, table: str, where: str | None) -> dict[str, object]:
    session = open_session(home)
    session.run_one(f"CREATE CATALOG IF NOT EXISTS bench PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}')")
    session.run_one("REFRESH CATALOG bench")
    catalog = session.manager.catalog("bench")
    catalog.database_names()  # connection opened outside the measurement
    handle = catalog.table(DB, table)
    cold_seconds, cold_calls, plan = audited(metastore, lambda: plan_table(catalog, handle, where))
    warm_seconds, warm_calls, again = audited(metastore, lambda: plan_table(catalog, handle, where))
    session.manager.close()
    return {"cold": {"seconds": cold_seconds, "calls": cold_calls, "splits": len(plan.splits)},
            "warm": {"seconds": warm_seconds, "calls": warm_calls, "splits": len(again.splits)}}


def measure_spark(spark, metastore: EmbeddedMetastore, table: str, where: str | None) -> dict[str, object]:  # type: ignore[no-untyped-def]
    query = f"SELECT * FROM {DB}.{table}" + (f" WHERE {where}" if where else "")
    cold_seconds, cold_calls, files = audited(metastore, lambda: spark.sql(query).inputFiles())
    warm_seconds, warm_calls, again = audited(metastore, lambda: spark.sql(query).inputFiles())
    return {"cold": {"seconds": cold_seconds, "calls": cold_calls, "files": len(files)},
            "warm": {"seconds": warm_seconds, "calls": warm_calls, "files": len(again)}}


def total(calls: object) -> int:
    return sum(calls.values()) if isinstance(calls, dict) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--fanout", type=int, default=100, help="days per region")
    args = parser.parse_args()
    where = "region = 'r0042'"
    with tempfile.TemporaryDirectory(prefix="bench-planning-") as scratch_dir:
        scratch = Path(scratch_dir)
        with EmbeddedMetastore(scratch / "metastore", audit=True, events=False, heap="1g") as metastore:
            pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri)))
            setup_seconds, _ = timed(lambda: build(pool, metastore.warehouse, args.files, args.partitions, args.fanout))
            pool.close()
            progress("measuring hms-catalog")
            ours = {
                "many_files": measure_ours(metastore, scratch / "home", "many_files", None),
                "many_partitions": measure_ours(metastore, scratch / "home", "many_partitions", where),
            }
            progress("measuring Spark")
            from pyspark.sql import SparkSession

            spark = (
                SparkSession.builder.master("local[2]").appName("bench-planning")
                .config("spark.sql.catalogImplementation", "hive")
                .config("spark.hadoop.hive.metastore.uris", metastore.uri)
                .config("spark.sql.warehouse.dir", metastore.warehouse.as_uri())
                .config("spark.ui.enabled", "false")
                .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
                .enableHiveSupport().getOrCreate()
            )
            spark.sparkContext.setLogLevel("ERROR")
            spark.sql("SHOW DATABASES").collect()
            theirs = {
                "many_files": measure_spark(spark, metastore, "many_files", None),
                "many_partitions": measure_spark(spark, metastore, "many_partitions", where),
            }
            spark.stop()
    ratios = {}
    for table in ("many_files", "many_partitions"):
        for phase in ("cold", "warm"):
            mine, peer = ours[table][phase], theirs[table][phase]  # type: ignore[index]
            ratios[f"{table}_{phase}_time_spark_over_ours"] = round(peer["seconds"] / max(mine["seconds"], 1e-6), 2)
            ratios[f"{table}_{phase}_calls_spark_over_ours"] = round(total(peer["calls"]) / max(1, total(mine["calls"])), 2)
    save("planning", {
        "files": args.files, "partitions": args.partitions, "predicate": where, "setup_seconds": round(setup_seconds, 1),
        "hms_catalog": ours, "spark": theirs, "ratios": ratios,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
