"""Spark's own Hive support on the endpoint and on the metastore, for bench_thrift (section ``spark``).

Two PySpark processes (tests/support/spark_hive_client.py), one on each URI, run the same queries over the
partitioned table; each query runs once to warm up, then ``--repeat`` times per side. Metastore calls per query:
through the endpoint, those catalog ``hive`` made; directly, the primary metastore's audit log lines.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from _common import progress
from _thrift_setup import DATABASE, PARTITIONED, Rig, calls_between

__all__ = ["SPARK_QUERIES", "spark"]


def _ratio(top: float, bottom: float) -> float | None:
    return round(top / bottom, 3) if bottom else None


SPARK_QUERIES = {
    "range_count": f"SELECT count(*) FROM {DATABASE}.{PARTITIONED} WHERE ss_sold_date_sk BETWEEN 2451000 AND 2451030",
    "full_count": f"SELECT count(*) FROM {DATABASE}.{PARTITIONED}",
    "show_partitions": f"SHOW PARTITIONS {DATABASE}.{PARTITIONED}",
    "join_range": f"SELECT count(*) FROM {DATABASE}.{PARTITIONED} s JOIN {DATABASE}.t000 t ON s.ss_item_sk = t.c0 "
                  f"WHERE s.ss_sold_date_sk < 2451100",
    "describe": f"DESCRIBE TABLE {DATABASE}.t001",
}


def spark(rig: Rig, args: argparse.Namespace) -> dict[str, Any]:
    from tests.support.spark_hive_client import SparkHiveClient, SparkHiveError

    results: dict[str, Any] = {}
    progress("starting two PySpark processes with Hive support (endpoint, metastore)")
    with SparkHiveClient(f"thrift://127.0.0.1:{rig.endpoint_port}", rig.primary.warehouse, rig.scratch / "spark-endpoint") as through, \
            SparkHiveClient(rig.primary.uri, rig.primary.warehouse, rig.scratch / "spark-metastore") as direct:
        for name, text in SPARK_QUERIES.items():
            progress(f"spark query {name}")
            entry: dict[str, Any] = {"sql": text}
            try:
                rows = {"endpoint": through.sql(text), "metastore": direct.sql(text)}  # warm-up runs
                best: dict[str, float] = {}
                hive_before, (audit_line, _) = rig.hive_calls(), rig.primary.audited_calls()
                for side, client in (("endpoint", through), ("metastore", direct)):
                    times = []
                    for _ in range(args.repeat):
                        started = time.perf_counter()
                        client.sql(text)
                        times.append(time.perf_counter() - started)
                    best[side] = round(min(times), 3)
                    if side == "endpoint":
                        through_calls = calls_between(hive_before, rig.hive_calls())
                        audit_line = rig.primary.audited_calls()[0]
                direct_calls = rig.primary.audited_calls(audit_line)[1]
                entry |= {
                    "seconds_best": best, "ratio": _ratio(best["endpoint"], best["metastore"]),
                    "rows_equal": sorted(map(repr, rows["endpoint"])) == sorted(map(repr, rows["metastore"])),
                    "metastore_calls_per_query_through_endpoint": round(through_calls["total"] / args.repeat, 2),
                    "endpoint_calls_by_method": through_calls["by_method"],
                    "metastore_calls_per_query_direct": round(sum(direct_calls.values()) / args.repeat, 2),
                    "direct_calls_by_method": direct_calls,
                }
            except SparkHiveError as error:
                entry["error"] = str(error)[:1000]
            results[name] = entry
        startup = {"endpoint": round(through.startup_seconds, 1), "metastore": round(direct.startup_seconds, 1)}
    ratios = [entry["ratio"] for entry in results.values() if entry.get("ratio")]
    return {"repeat": args.repeat, "startup_seconds": startup, "queries": results,
            "geometric_mean_ratio": round(statistics.geometric_mean(ratios), 3) if ratios else None}
