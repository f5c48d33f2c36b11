"""DDL at scale: adding 1,000 partitions in one statement and repairing a table of 10,000 partition folders,
through hms-catalog and through Spark's own Hive support, on the same metastore in the same run.

- ``ALTER TABLE t ADD PARTITION (p=0) PARTITION (p=1) ...`` with ``--add-partitions`` partitions in one
  statement: our statement (through a local session, as the CLI runs it) against ``spark.sql`` of the same
  text on a twin table.
- ``MSCK REPAIR TABLE t`` on a table whose folder holds ``--partitions`` ``p=N`` folders the metastore does
  not know: ours against Spark's.

Each is timed from the statement text to its answer, and the metastore calls each side made are counted at
the server: Hive's audit log for the calls it records, and the metastore's notification events for the
partition writes, which Hive 2.3 does not audit (one ``ADD_PARTITION`` event per ``add_partitions`` call).

Nearly all of either side's time is the metastore adding partitions, so the two sides are measured alike:
both run the ADD PARTITION statement once untimed first (measured first on a barely warmed metastore, our
side took 1.1x to 1.4x Spark's time, and 0.4x to 0.95x after), each measurement is made on
fresh twin tables ``--repeat`` times with the order of the sides alternating (the first of a pair finds the
metastore as the other left it), and the ratio is of the medians. The machine's load average is recorded
around each measurement: on a shared machine a ratio moves with it. Printed and saved to
``benchmarks/results/ddl.json``. Goal (issue 40): at most 1.0x Spark's time for both, the metastore calls
of each side stated.

    python benchmarks/bench_ddl.py [--partitions 10000] [--add-partitions 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
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


def _spark(spark: Any, text: str) -> Any:
    return spark.sql(text).collect()


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _measure(metastore: EmbeddedMetastore, client: Any, sides: dict[str, tuple[str, Callable[[], Any]]],
             first: str) -> dict[str, Any]:
    """Each side's (table, action) measured once, ``first`` first, with the load average before and after."""
    order = [first, *[side for side in sides if side != first]]
    measured: dict[str, Any] = {"first": first}
    for side in order:
        table, action = sides[side]
        before = _load()
        seconds, calls = audited(metastore, client, table, action)
        measured[side] = {"seconds": seconds, "calls": calls, "load_before": before, "load_after": _load()}
    return measured


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for side in ("hms_catalog", "spark"):
        seconds = [run[side]["seconds"] for run in runs]
        calls = runs[0][side]["calls"]
        summary[side] = {"seconds_median": round(statistics.median(seconds), 3), "seconds": seconds, "calls": calls,
                         "total_calls": sum(calls.values())}
    summary["time_ours_over_spark"] = round(summary["hms_catalog"]["seconds_median"] / max(summary["spark"]["seconds_median"], 1e-6), 3)
    summary["ratio_per_run"] = [round(run["hms_catalog"]["seconds"] / max(run["spark"]["seconds"], 1e-6), 3) for run in runs]
    summary["first_per_run"] = [run["first"] for run in runs]
    summary["load_per_run"] = [[run[side]["load_before"] for side in ("hms_catalog", "spark")] for run in runs]
    return summary


def _calls_line(calls: dict[str, int]) -> str:
    return ", ".join(f"{n} {name}" for name, n in sorted(calls.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=10_000, help="partition folders of the repaired tables")
    parser.add_argument("--add-partitions", type=int, default=1_000, help="partitions of the ADD PARTITION statement")
    parser.add_argument("--repeat", type=int, default=3, help="measurements of each statement, the sides' order alternating")
    args = parser.parse_args()
    add = "ALTER TABLE {} ADD PARTITION " + " PARTITION ".join(f"(p={i})" for i in range(args.add_partitions))
    repair = "MSCK REPAIR TABLE {}"
    runs: dict[str, list[dict[str, Any]]] = {"add_partitions": [], "msck_repair": []}
    loads = {"start": _load()}
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
            tables = ["ours_warm", "spark_warm"] + [f"{side}_{case}_{run}" for run in range(args.repeat)
                                                    for case in ("add", "repair") for side in ("ours", "spark")]
            for name in tables:
                session.run_one(f"CREATE TABLE bench.{DB}.{name} (id INT) PARTITIONED BY (p INT) STORED AS PARQUET")
            spark.sql(f"SHOW TABLES IN {DB}").collect()  # Spark connected before anything is measured
            client = session.manager.catalog("bench").client
            progress(f"warming up: {args.add_partitions} partitions added by each side, untimed")
            session.run_one(add.format(f"bench.{DB}.ours_warm"))
            spark.sql(add.format(f"{DB}.spark_warm")).collect()
            for run in range(args.repeat):
                first = "hms_catalog" if run % 2 == 0 else "spark"
                progress(f"run {run + 1}/{args.repeat}: adding {args.add_partitions} partitions ({first} first)")
                measured = _measure(metastore, client, {
                    "hms_catalog": (f"ours_add_{run}", functools.partial(session.run_one, add.format(f"bench.{DB}.ours_add_{run}"))),
                    "spark": (f"spark_add_{run}", functools.partial(_spark, spark, add.format(f"{DB}.spark_add_{run}"))),
                }, first)
                runs["add_partitions"].append(measured)
                progress(f"run {run + 1}/{args.repeat}: repairing tables of {args.partitions} partition folders ({first} first)")
                for side in ("ours", "spark"):
                    folders(metastore.warehouse / f"{DB}.db" / f"{side}_repair_{run}", args.partitions)
                measured = _measure(metastore, client, {
                    "hms_catalog": (f"ours_repair_{run}",
                                    functools.partial(session.run_one, repair.format(f"bench.{DB}.ours_repair_{run}"))),
                    "spark": (f"spark_repair_{run}", functools.partial(_spark, spark, repair.format(f"{DB}.spark_repair_{run}"))),
                }, first)
                runs["msck_repair"].append(measured)
            counted = {name: len(spark.sql(f"SHOW PARTITIONS {DB}.{name}").collect()) for name in tables}
            spark.stop()
            session.manager.close()
    loads["end"] = _load()
    report: dict[str, Any] = {"partitions": args.partitions, "add_partitions_count": args.add_partitions, "repeat": args.repeat,
                              "cores": os.cpu_count(), "load_average": loads, "partitions_registered": counted}
    for case, each in runs.items():
        report[case] = _summary(each)
        ours, theirs = report[case]["hms_catalog"], report[case]["spark"]
        print(f"{case}: ours {ours['seconds_median']} s ({_calls_line(ours['calls'])}), Spark {theirs['seconds_median']} s "
              f"({_calls_line(theirs['calls'])}): {report[case]['time_ours_over_spark']}x", file=sys.stderr)
    save("ddl", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
