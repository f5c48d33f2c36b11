"""Writes through the connector against Spark's own Hive inserts, on the same data in the same run.

- ``INSERT OVERWRITE t PARTITION (p) SELECT ...`` of about ``--gigabytes`` (1) of Parquet into 100 dynamic
  partitions of a Hive Parquet table: first into an empty table (100 partitions added), then again (100
  partitions replaced). Spark's own insert into ``spark_catalog`` against the connector's into the same
  metastore's twin table, alternating, best of ``--repeat`` (2).
- ``INSERT INTO u SELECT ...`` of the same rows into an unpartitioned table.

Each side's metastore calls are counted at the metastore (Hive's audit log; Hive 2.3 does not audit
``add_partitions_req``, which the notification events count instead), and the rows written are checked
equal. Printed and saved to ``benchmarks/results/write.json``. Goal (issue 23): at most 1.1x Spark's time,
in batches of metastore calls, not one call per partition.

    python benchmarks/bench_write.py [--gigabytes 1] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import Service, progress, save
from bench_ddl import audited
from bench_tpcds import _session

from hms_catalog import open_session
from hms_catalog.metastore import EmbeddedMetastore

CATALOG = "bench"
DB = "bench_write"
BYTES_PER_ROW = 44  # of the generated rows, as Parquet with Spark's default compression (measured)
GOAL = 1.1


def source(rows: int) -> str:
    return (f"SELECT id, rand(7) AS amount, sha2(CAST(id AS STRING), 256) AS label, CAST(id % 100 AS INT) AS p "
            f"FROM range({rows})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gigabytes", type=float, default=1.0, help="about how much Parquet each write makes (default 1)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per side and workload; the best counts (default 2)")
    args = parser.parse_args()
    rows = int(args.gigabytes * 1e9 / BYTES_PER_ROW)
    from spark_connector import catalog_conf, connector_jar

    jar = connector_jar()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-write-") as scratch_dir:
        scratch = Path(scratch_dir)
        with EmbeddedMetastore(scratch / "metastore", audit=True, events=True, heap="1g") as metastore:
            spark = _session(metastore, jar, scratch)
            service = Service(scratch / "service-home")
            try:
                client = service.client()
                client.create_catalog(CATALOG, {"type": "hms", "hive.metastore.uris": metastore.uri})
                client.close()
                for key, value in catalog_conf(CATALOG, service.url, service.token).items():
                    spark.conf.set(key, value)
                spark.sql(f"CREATE DATABASE {DB}")
                for side in ("spark", "connector"):
                    spark.sql(f"CREATE TABLE {DB}.{side}_p (id BIGINT, amount DOUBLE, label STRING) PARTITIONED BY (p INT) "
                              "STORED AS PARQUET")
                    spark.sql(f"CREATE TABLE {DB}.{side}_u (id BIGINT, amount DOUBLE, label STRING, p INT) STORED AS PARQUET")
                names = {"spark": f"spark_catalog.{DB}", "connector": f"{CATALOG}.{DB}"}
                session = open_session(scratch / "home")  # reads the metastore's notifications for the call counts
                session.run_one(f"CREATE CATALOG counter PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}')")
                admin = session.manager.catalog("counter").client
                workloads = {
                    "overwrite_100_partitions": lambda side: f"INSERT OVERWRITE {names[side]}.{side}_p PARTITION (p) {source(rows)}",
                    "append_unpartitioned": lambda side: f"INSERT INTO {names[side]}.{side}_u {source(rows)}",
                }
                for workload, statement in workloads.items():
                    results[workload] = {"spark": [], "connector": []}
                    for round_ in range(args.repeat):
                        for side in ("spark", "connector"):
                            progress(f"{workload} {side} run {round_ + 1}")
                            table = f"{side}_p" if "partitions" in workload else f"{side}_u"
                            text = statement(side)
                            seconds, calls = audited(metastore, admin, table, lambda text=text: spark.sql(text))
                            results[workload][side].append({"seconds": round(seconds, 2), "metastore_calls": calls})
                    counts = {side: spark.table(f"spark_catalog.{DB}.{side}_{'p' if 'partitions' in workload else 'u'}").count()
                              for side in ("spark", "connector")}
                    results[workload]["rows"] = counts
                    results[workload]["same_rows"] = counts["spark"] == counts["connector"]
                sizes = {side: sum(f.stat().st_size for f in (metastore.warehouse / f"{DB}.db" / f"{side}_p").rglob("*")
                                   if f.is_file() and not f.name.startswith((".", "_"))) for side in ("spark", "connector")}
            finally:
                service_exit = service.stop()
                spark.stop()
    summary = {}
    for workload, figures in results.items():
        best = {side: min(run["seconds"] for run in figures[side]) for side in ("spark", "connector")}
        summary[workload] = {"spark_seconds": best["spark"], "connector_seconds": best["connector"],
                             "ratio": round(best["connector"] / best["spark"], 3), "same_rows": figures["same_rows"]}
    report = {"gigabytes": args.gigabytes, "rows": rows, "repeat": args.repeat, "cores": os.cpu_count(), "goal": GOAL,
              "parquet_bytes": sizes, "summary": summary, "results": results, "service_exit_code": service_exit,
              "load_average": [round(x, 2) for x in os.getloadavg()], "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}
    save("write", report)
    for workload, figures in summary.items():
        print(f"{workload:28} spark {figures['spark_seconds']:8.2f} s   connector {figures['connector_seconds']:8.2f} s   "
              f"ratio {figures['ratio']:.2f}x   same rows: {figures['same_rows']}")
    for workload, figures in results.items():
        for side in ("spark", "connector"):
            print(f"{workload:28} {side:9} metastore calls (last run): {figures[side][-1]['metastore_calls']}")
    return 0 if service_exit == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
