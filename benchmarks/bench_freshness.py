"""Freshness: how long a change made in the metastore stays invisible, with events on vs TTL only, and what
following events costs an idle catalog in metastore calls.

One embedded metastore, one partitioned table, two catalogs over it in the same process:
- ``events``: hive.enable_hms_events_incremental_sync=true, polling every --interval-ms;
- ``ttl``: events off, partition names cached for --ttl seconds (the only way it learns of a change).
Each trial waits a random time (up to the TTL, so changes fall anywhere in the TTL's cycle), adds a
partition through thrift, then asks both catalogs every 20 ms for the table's partitions (EXPLAIN SPLITS,
answered from their caches) until they show it.

Then an idle catalog with events on at the default interval (10 s) runs for --idle seconds, and the
metastore calls it made are counted (the follower's calls go through the catalog's pooled client).

    python benchmarks/bench_freshness.py [--trials 6] [--interval-ms 2000] [--ttl 20] [--idle 60]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import progress, save

from hms_catalog import open_session
from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.execution import Session
from hms_catalog.formats.storage import STORAGE_FORMATS
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris

DATABASE = "bench_fresh"
PARQUET = (STORAGE_FORMATS["PARQUET"].input_format, STORAGE_FORMATS["PARQUET"].output_format, STORAGE_FORMATS["PARQUET"].serde)
PROBE_SECONDS = 0.02


def make_table(pool: HmsClientPool, warehouse: Path) -> ttypes.Table:
    location = warehouse / f"{DATABASE}.db"
    pool.call("create_database", ttypes.Database(name=DATABASE, description="", locationUri=f"file:{location}", parameters={}))
    sd = ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema("id", "bigint", "")], location=f"file:{location}/facts", inputFormat=PARQUET[0],
        outputFormat=PARQUET[1], serdeInfo=ttypes.SerDeInfo(serializationLib=PARQUET[2], parameters={}),
        compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
    )
    table = ttypes.Table(tableName="facts", dbName=DATABASE, owner="bench", sd=sd,
                         partitionKeys=[ttypes.FieldSchema("dt", "string", "")], parameters={"EXTERNAL": "TRUE"},
                         tableType="EXTERNAL_TABLE")
    pool.call("create_table", table)
    return table


def add_partition(pool: HmsClientPool, table: ttypes.Table, value: str) -> None:
    sd = ttypes.StorageDescriptor(**{**table.sd.__dict__, "location": f"{table.sd.location}/dt={value}"})
    pool.call("add_partitions", [ttypes.Partition(values=[value], dbName=DATABASE, tableName="facts", sd=sd, parameters={})])


def partitions(session: Session, catalog: str) -> int:
    return int(dict(session.run_one(f"EXPLAIN SPLITS FROM {catalog}.{DATABASE}.facts").rows)["partitions_total"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=6)
    parser.add_argument("--interval-ms", type=int, default=2000, help="events catalog polling interval")
    parser.add_argument("--ttl", type=int, default=20, help="ttl catalog's partition cache lifetime, seconds")
    parser.add_argument("--idle", type=float, default=60.0, help="seconds the idle catalog runs")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch, EmbeddedMetastore(Path(scratch) / "metastore") as metastore:
        pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri)))
        table = make_table(pool, metastore.warehouse)
        session = open_session(Path(scratch) / "home")
        uri = metastore.uri
        session.run_one(f"CREATE CATALOG events PROPERTIES ('type'='hms', 'hive.metastore.uris'='{uri}', "
                        f"'hive.enable_hms_events_incremental_sync'='true', "
                        f"'hive.hms_events_polling_interval_ms'='{args.interval_ms}')")
        session.run_one(f"CREATE CATALOG ttl PROPERTIES ('type'='hms', 'hive.metastore.uris'='{uri}', "
                        f"'partition.cache.ttl-second'='{args.ttl}')")
        for catalog in ("events", "ttl"):
            partitions(session, catalog)  # warm: names cached, the follower started

        staleness: dict[str, list[float]] = {"events": [], "ttl": []}
        rng = random.Random(7)
        for trial in range(args.trials):
            time.sleep(rng.uniform(0, args.ttl))  # changes come at any moment of the TTL's cycle
            expected = trial + 1
            add_partition(pool, table, f"2024-01-{trial + 1:02d}")
            changed = time.perf_counter()
            waiting = {"events", "ttl"}
            while waiting:
                for catalog in sorted(waiting):
                    if partitions(session, catalog) >= expected:
                        staleness[catalog].append(time.perf_counter() - changed)
                        waiting.discard(catalog)
                time.sleep(PROBE_SECONDS)
            progress(f"trial {trial + 1}: events {staleness['events'][-1]:.2f} s, ttl {staleness['ttl'][-1]:.2f} s")

        progress(f"idle catalog with events on at the default interval for {args.idle:.0f} s")
        session.run_one(f"CREATE CATALOG idle PROPERTIES ('type'='hms', 'hive.metastore.uris'='{uri}', "
                        "'hive.enable_hms_events_incremental_sync'='true')")
        idle = session.manager.catalog("idle")
        session.run_one("SHOW DATABASES FROM idle")
        before = idle.metrics()
        time.sleep(args.idle)
        calls = idle.metrics().calls_since(before)
        session.manager.close()
        pool.close()

    per_minute = {method: round(count * 60.0 / args.idle, 1) for method, count in sorted(calls.items())}

    def summary(values: list[float]) -> dict[str, float]:
        return {"median_seconds": round(statistics.median(values), 3), "max_seconds": round(max(values), 3),
                "trials": [round(v, 3) for v in values]}

    save("bench_freshness", {
        "setup": {"events_polling_interval_ms": args.interval_ms, "ttl_partition_cache_seconds": args.ttl,
                  "trials": args.trials, "idle_seconds": args.idle},
        "staleness": {"events": summary(staleness["events"]), "ttl_only": summary(staleness["ttl"])},
        "ratio_ttl_to_events_median": round(statistics.median(staleness["ttl"]) / statistics.median(staleness["events"]), 1),
        "idle_calls_per_minute_default_interval": {"total": round(sum(per_minute.values()), 1), **per_minute},
    })


if __name__ == "__main__":
    main()
