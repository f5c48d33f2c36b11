"""DDL at scale: adding 10,000 partitions and repairing a table of 10,000 partition folders, through hms-catalog
and through Spark's own Hive support, on the same metastore in the same run.

- ``ALTER TABLE t ADD PARTITION (p=0) PARTITION (p=1) ...`` with 10,000 partitions in one statement: our
  statement (through a local session, as the CLI runs it) against ``spark.sql`` of the same text on a
  twin table.
- ``MSCK REPAIR TABLE t`` on a table whose folder holds 10,000 ``p=N`` folders the metastore does not know:
  ours against Spark's.

Each is timed from the statement text to its answer, and the metastore calls each made are counted at the
server: Hive's audit log for the calls it records, and the metastore's notification events for the
partition writes, which Hive 2.3 does not audit (one ``ADD_PARTITION`` event per ``add_partitions`` call).
Printed and saved to ``benchmarks/results/ddl.json``. Goal (issue 22): at least
as fast as Spark's, in batches (calls counted), not one call per partition.

    python benchmarks/bench_ddl.py [--partitions 10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import progress, save, timed

from hms_catalog import open_session
from hms_catalog.metastore import EmbeddedMetastore

DB = "bench_ddl"


def audited(metastore: EmbeddedMetastore, client: Any, table: str, action: Any) -> tuple[float, dict[str, int]]:
    """Seconds of ``action`` and the metastore calls it made; partition writes counted by their events."""
    time.sleep(0.2)
    mark, _ = metastore.audited_calls()
    first_event = client.get_current_notification_event_id()
    seconds, _ = timed(action)
    time.sleep(0.5)
    _, calls = metastore.audited_calls(mark)
    events = client.get_next_notification(first_event, 1_000_000)
    for kind in ("ADD_PARTITION", "DROP_PARTITION"):
        count = sum(1 for event in events if event.eventType == kind and (event.tableName or "").lower() == table)
        if count:
            calls[f"{kind.lower()}s (events)"] = count
    return round(seconds, 3), calls


def folders(location: Path, count: int) -> None:
    for index in range(count):
        (location / f"p={index}").mkdir(parents=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=10_000)
    args = parser.parse_args()
    add = "ALTER TABLE {} ADD PARTITION " + " PARTITION ".join(f"(p={i})" for i in range(args.partitions))
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-ddl-") as scratch_dir:
        scratch = Path(scratch_dir)
        with EmbeddedMetastore(scratch / "metastore", audit=True, events=True, heap="2g") as metastore:
            from pyspark.sql import SparkSession

            spark = (SparkSession.builder.master("local[2]").appName("bench-ddl")
                     .config("spark.sql.catalogImplementation", "hive")
                     .config("spark.hadoop.hive.metastore.uris", metastore.uri)
                     .config("spark.sql.warehouse.dir", metastore.warehouse.as_uri())
                     .config("spark.ui.enabled", "false")
                     .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
                     .enableHiveSupport().getOrCreate())
            spark.sparkContext.setLogLevel("ERROR")
            session = open_session(scratch / "home")
            session.run_one(f"CREATE CATALOG bench PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}')")
            session.run_one(f"CREATE DATABASE bench.{DB}")
            for name in ("ours_add", "spark_add", "ours_repair", "spark_repair"):
                session.run_one(f"CREATE TABLE bench.{DB}.{name} (id INT) PARTITIONED BY (p INT) STORED AS PARQUET")
            spark.sql(f"SHOW TABLES IN {DB}").collect()  # Spark connected before anything is measured
            client = session.manager.catalog("bench").client

            progress(f"adding {args.partitions} partitions")
            results["add_partitions"] = {
                "hms_catalog": audited(metastore, client, "ours_add", lambda: session.run_one(add.format(f"bench.{DB}.ours_add"))),
                "spark": audited(metastore, client, "spark_add", lambda: spark.sql(add.format(f"{DB}.spark_add")).collect()),
            }
            progress(f"repairing tables of {args.partitions} partition folders")
            for name in ("ours_repair", "spark_repair"):
                folders(metastore.warehouse / f"{DB}.db" / name, args.partitions)
            results["msck_repair"] = {
                "hms_catalog": audited(metastore, client, "ours_repair",
                                      lambda: session.run_one(f"MSCK REPAIR TABLE bench.{DB}.ours_repair")),
                "spark": audited(metastore, client, "spark_repair", lambda: spark.sql(f"MSCK REPAIR TABLE {DB}.spark_repair").collect()),
            }
            counted = {name: len(spark.sql(f"SHOW PARTITIONS {DB}.{name}").collect())
                       for name in ("ours_add", "spark_add", "ours_repair", "spark_repair")}
            spark.stop()
            session.manager.close()
    report: dict[str, Any] = {"partitions": args.partitions, "partitions_registered": counted}
    for case, sides in results.items():
        (ours, our_calls), (theirs, their_calls) = sides["hms_catalog"], sides["spark"]
        report[case] = {
            "hms_catalog": {"seconds": ours, "calls": our_calls, "total_calls": sum(our_calls.values())},
            "spark": {"seconds": theirs, "calls": their_calls, "total_calls": sum(their_calls.values())},
            "time_ours_over_spark": round(ours / max(theirs, 1e-6), 3),
        }
    save("ddl", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
