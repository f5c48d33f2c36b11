"""Metadata costs: DESCRIBE cold and warm, and SHOW TABLE STATUS of a 1,000-table database.

Measured in one run on the embedded metastore against two peers on the same tables:
- a naive client (one get_table per table, the pattern of catalogs that load tables one by one);
- Spark with Hive support (DESCRIBE TABLE, SHOW TABLE EXTENDED).
Metastore calls are counted at the server (Hive's audit log), so every client is counted the same way.

    python benchmarks/bench_metadata.py [--tables 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import median_seconds, progress, save, timed

from hms_catalog import open_session
from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.formats.storage import STORAGE_FORMATS
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris

DATABASE = "bench_meta"
PARQUET = (STORAGE_FORMATS["PARQUET"].input_format, STORAGE_FORMATS["PARQUET"].output_format, STORAGE_FORMATS["PARQUET"].serde)


def make_tables(pool: HmsClientPool, warehouse: Path, count: int) -> list[str]:
    location = warehouse / f"{DATABASE}.db"
    pool.call("create_database", ttypes.Database(name=DATABASE, description="", locationUri=location.as_uri(), parameters={}))
    names = []
    columns = [ttypes.FieldSchema(f"c{i}", kind, "") for i, kind in
               enumerate(["bigint", "string", "decimal(12,2)", "array<struct<a:int,b:string>>", "map<string,double>", "timestamp"])]
    for index in range(count):
        name = f"t{index:04d}"
        sd = ttypes.StorageDescriptor(
            cols=columns, location=(location / name).as_uri(), inputFormat=PARQUET[0], outputFormat=PARQUET[1],
            serdeInfo=ttypes.SerDeInfo(serializationLib=PARQUET[2], parameters={}), numBuckets=-1, bucketCols=[],
            sortCols=[], parameters={},
        )
        keys = [ttypes.FieldSchema("dt", "string", "")] if index % 2 else []
        pool.call("create_table", ttypes.Table(tableName=name, dbName=DATABASE, owner="bench", sd=sd, partitionKeys=keys,
                                               parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"))
        names.append(name)
        if index % 200 == 199:
            progress(f"created {index + 1} tables")
    return names


def server_calls(metastore: EmbeddedMetastore, action) -> tuple[float, dict[str, int], object]:  # type: ignore[no-untyped-def]
    time.sleep(0.05)
    mark, _ = metastore.audited_calls()
    seconds, value = timed(action)
    time.sleep(0.2)  # let the audit appender flush
    _, calls = metastore.audited_calls(mark)
    return seconds, calls, value


def ours(metastore: EmbeddedMetastore, home: Path, repeat: int) -> dict[str, object]:
    session = open_session(home)
    session.run_one(f"CREATE CATALOG bench PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}')")
    catalog = session.manager.catalog("bench")
    catalog.database_names()  # open the connection outside the measurements

    cold_times = []
    for _ in range(repeat):
        session.run_one("REFRESH CATALOG bench")
        seconds, calls, _ = server_calls(metastore, lambda: session.run_one(f"DESCRIBE bench.{DATABASE}.t0001"))
        cold_times.append(seconds)
    describe_cold_calls = calls
    warm_seconds = median_seconds(lambda: session.run_one(f"DESCRIBE bench.{DATABASE}.t0001"), repeat * 20)
    _, describe_warm_calls, _ = server_calls(metastore, lambda: session.run_one(f"DESCRIBE bench.{DATABASE}.t0001"))

    status_cold_times = []
    for _ in range(repeat):
        session.run_one("REFRESH CATALOG bench")
        seconds, calls, rows = server_calls(metastore, lambda: session.run_one(f"SHOW TABLE STATUS FROM bench.{DATABASE}"))
        status_cold_times.append(seconds)
    status_cold_calls = calls
    status_warm_seconds = median_seconds(lambda: session.run_one(f"SHOW TABLE STATUS FROM bench.{DATABASE}"), repeat)
    _, status_warm_calls, _ = server_calls(metastore, lambda: session.run_one(f"SHOW TABLE STATUS FROM bench.{DATABASE}"))
    session.manager.close()
    return {
        "describe_cold": {"seconds": sorted(cold_times)[len(cold_times) // 2], "calls": describe_cold_calls},
        "describe_warm": {"seconds": warm_seconds, "calls": describe_warm_calls},
        "table_status_cold": {"seconds": sorted(status_cold_times)[len(status_cold_times) // 2], "calls": status_cold_calls,
                              "rows": len(rows.rows)},  # type: ignore[attr-defined]
        "table_status_warm": {"seconds": status_warm_seconds, "calls": status_warm_calls},
    }


def naive(metastore: EmbeddedMetastore) -> dict[str, object]:
    pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri), pool_size=1))
    pool.call("get_all_databases")

    def load_all() -> int:
        return len([pool.call("get_table", DATABASE, name) for name in pool.call("get_all_tables", DATABASE)])

    seconds, calls, count = server_calls(metastore, load_all)
    pool.close()
    return {"table_status": {"seconds": seconds, "calls": calls, "rows": count}}


def spark_peer(metastore: EmbeddedMetastore, scratch: Path, repeat: int) -> dict[str, object]:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]").appName("bench-metadata")
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.hadoop.hive.metastore.uris", metastore.uri)
        .config("spark.sql.warehouse.dir", metastore.warehouse.as_uri())
        .config("spark.ui.enabled", "false")
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
        .enableHiveSupport().getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("SHOW DATABASES").collect()  # start Spark's metastore client outside the measurements
    seconds, cold_calls, _ = server_calls(metastore, lambda: spark.sql(f"DESCRIBE TABLE {DATABASE}.t0001").collect())
    warm_seconds = median_seconds(lambda: spark.sql(f"DESCRIBE TABLE {DATABASE}.t0001").collect(), repeat * 20)
    _, warm_calls, _ = server_calls(metastore, lambda: spark.sql(f"DESCRIBE TABLE {DATABASE}.t0001").collect())
    status_seconds, status_calls, rows = server_calls(
        metastore, lambda: spark.sql(f"SHOW TABLE EXTENDED IN {DATABASE} LIKE '*'").collect()
    )
    spark.stop()
    return {
        "describe_cold": {"seconds": seconds, "calls": cold_calls},
        "describe_warm": {"seconds": warm_seconds, "calls": warm_calls},
        "table_status": {"seconds": status_seconds, "calls": status_calls, "rows": len(rows)},  # type: ignore[arg-type]
    }


def total(calls: object) -> int:
    return sum(calls.values()) if isinstance(calls, dict) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-spark", action="store_true", help="skip the Spark peer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-metadata-") as scratch_dir:
        scratch = Path(scratch_dir)
        progress("starting the embedded metastore")
        with EmbeddedMetastore(scratch / "metastore", audit=True, events=False) as metastore:
            pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri)))
            progress(f"creating {args.tables} tables")
            make_seconds, _ = timed(lambda: make_tables(pool, metastore.warehouse, args.tables))
            pool.close()
            progress("measuring hms-catalog")
            mine = ours(metastore, scratch / "home", args.repeat)
            progress("measuring the naive per-table client")
            plain = naive(metastore)
            theirs = None if args.no_spark else (progress("measuring Spark") or spark_peer(metastore, scratch, args.repeat))
    status = mine["table_status_cold"]  # type: ignore[index]
    report: dict[str, object] = {
        "tables": args.tables,
        "setup_seconds": round(make_seconds, 2),
        "hms_catalog": mine,
        "naive_per_table": plain,
        "spark": theirs,
        "ratios": {
            "table_status_calls_naive_over_ours": total(plain["table_status"]["calls"]) / max(1, total(status["calls"])),  # type: ignore[index]
            "table_status_time_naive_over_ours": plain["table_status"]["seconds"] / status["seconds"],  # type: ignore[index]
        },
    }
    if theirs is not None:
        ratios = report["ratios"]
        assert isinstance(ratios, dict)
        ratios["describe_cold_calls_spark_over_ours"] = (
            total(theirs["describe_cold"]["calls"]) / max(1, total(mine["describe_cold"]["calls"]))  # type: ignore[index]
        )
        ratios["describe_warm_time_spark_over_ours"] = theirs["describe_warm"]["seconds"] / mine["describe_warm"]["seconds"]  # type: ignore[index]
        ratios["table_status_time_spark_over_ours"] = theirs["table_status"]["seconds"] / status["seconds"]  # type: ignore[index]
        ratios["table_status_calls_spark_over_ours"] = total(theirs["table_status"]["calls"]) / max(1, total(status["calls"]))  # type: ignore[index]
    save("metadata", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
