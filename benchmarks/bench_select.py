"""SELECT latency from the CLI: one-shot (a local Spark per invocation) against ``--server`` with
``serve --spark-connect`` (a warm Spark Connect server with the native connector), in one run.

Both run the same query on the same table and must print the same rows. The one-shot CLI starts a JVM,
a SparkSession and Python workers for each statement; through the server, the CLI sends the statement
and the warm Spark Connect server reads the table natively. The first call through the server is shown
apart (its Spark caches are cold).

    python benchmarks/bench_select.py [--repeat 5] [--one-shot-repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa
import pyarrow.parquet as pq
from _common import Service, progress, save, timed

from hms_catalog import open_session
from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.formats.storage import STORAGE_FORMATS
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris

PARQUET = (STORAGE_FORMATS["PARQUET"].input_format, STORAGE_FORMATS["PARQUET"].output_format, STORAGE_FORMATS["PARQUET"].serde)
DATABASE, TABLE = "bench_select", "sales"
QUERY = (f"SELECT region, count(*) AS n, sum(amount) AS total FROM bench.{DATABASE}.{TABLE} "
         "WHERE amount > 10 GROUP BY region ORDER BY region")


def make_table(pool: HmsClientPool, warehouse: Path, rows: int) -> None:
    location = warehouse / f"{DATABASE}.db" / TABLE
    location.mkdir(parents=True)
    for index in range(4):
        ids = list(range(index * rows, (index + 1) * rows))
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "region": [f"r{i % 7}" for i in ids],
                                 "amount": [float(i % 100) for i in ids]}), location / f"part-{index}.parquet")
    pool.call("create_database", ttypes.Database(name=DATABASE, description="", locationUri=location.parent.as_uri(), parameters={}))
    columns = [ttypes.FieldSchema("id", "bigint", ""), ttypes.FieldSchema("region", "string", ""),
               ttypes.FieldSchema("amount", "double", "")]
    sd = ttypes.StorageDescriptor(cols=columns, location=location.as_uri(), inputFormat=PARQUET[0], outputFormat=PARQUET[1],
                                  serdeInfo=ttypes.SerDeInfo(serializationLib=PARQUET[2], parameters={}), numBuckets=-1,
                                  bucketCols=[], sortCols=[], parameters={})
    pool.call("create_table", ttypes.Table(tableName=TABLE, dbName=DATABASE, owner="bench", sd=sd, partitionKeys=[],
                                           parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"))


def cli(*arguments: str) -> list[Any]:
    done = subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--format", "json", *arguments, "-e", QUERY],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the CLI failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return [list(row) for row in json.loads(done.stdout.strip().splitlines()[-1])["rows"]]


def spark_connect_ready(service: Service, timeout: float = 240.0) -> None:
    """Wait until the service's Spark Connect server listens (its state in ``/v1/health``)."""
    client = service.client()
    deadline = time.monotonic() + timeout
    try:
        while (state := client.health()["spark-connect"])["state"] == "starting" and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        client.close()
    if state["state"] != "ready":
        service.stop()
        raise SystemExit(f"the Spark Connect server is {state}:\n" + "".join(service.lines[-20:]))


def serve_with_spark_connect(home: Path) -> Service:
    service = Service(home, "--spark-connect", "--spark-connect-port", "0")
    spark_connect_ready(service)
    return service


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="warm SELECTs through the server (default 5)")
    parser.add_argument("--one-shot-repeat", type=int, default=2, help="one-shot CLI SELECTs (default 2)")
    parser.add_argument("--rows", type=int, default=250_000, help="rows per file, 4 files (default 250,000)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-select-") as scratch:
        root = Path(scratch)
        progress("starting the embedded metastore")
        with EmbeddedMetastore(root / "metastore", events=False) as metastore:
            pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri)))
            progress(f"writing {4 * args.rows:,} rows of Parquet")
            make_table(pool, metastore.warehouse, args.rows)
            pool.close()
            home = root / "home"
            session = open_session(home)
            session.run_one(f"CREATE CATALOG bench PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}')")
            session.manager.close()

            one_shot: list[float] = []
            expected: list[Any] = []
            for index in range(args.one_shot_repeat):
                progress(f"one-shot CLI SELECT {index + 1}/{args.one_shot_repeat}")
                seconds, expected = timed(lambda: cli("--home", str(home)))
                one_shot.append(seconds)

            progress("starting hms-catalog serve --spark-connect")
            started, service = timed(lambda: serve_with_spark_connect(home))
            try:
                first, rows = timed(lambda: cli("--server", service.url, "--token", service.token))
                if rows != expected:
                    raise SystemExit(f"the rows differ: one-shot {expected}, through the server {rows}")
                warm = []
                for index in range(args.repeat):
                    progress(f"SELECT through the server {index + 1}/{args.repeat}")
                    seconds, rows = timed(lambda: cli("--server", service.url, "--token", service.token))
                    if rows != expected:
                        raise SystemExit(f"the rows differ: one-shot {expected}, through the server {rows}")
                    warm.append(seconds)
            finally:
                exit_code = service.stop()

    one_shot_median, warm_median = statistics.median(one_shot), statistics.median(warm)
    report = {
        "query": QUERY, "rows_in_table": 4 * args.rows, "result_rows": len(expected),
        "load_average_before": [round(x, 2) for x in load_before], "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "one_shot_seconds": {"median": round(one_shot_median, 2), "all": [round(x, 2) for x in one_shot]},
        "server_start_seconds": round(started, 2),
        "through_server_first_seconds": round(first, 2),
        "through_server_warm_seconds": {"median": round(warm_median, 2), "all": [round(x, 2) for x in warm]},
        "warm_over_one_shot": round(warm_median / one_shot_median, 3),
        "service_exit_code": exit_code,
    }
    save("select", report)
    print(f"SELECT latency: one-shot CLI {one_shot_median:.2f} s; through serve --spark-connect: first {first:.2f} s, "
          f"warm {warm_median:.2f} s ({report['warm_over_one_shot']:.2f}x); the server took {started:.1f} s to start")
    return 0 if exit_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
