"""The caches' memory budget: a catalog's caches filled with tables and partitions as a metastore answers them
(thrift structs through the accelerated decoder), with no budget and with one below what they need.

For each budget (``none``: caches under no budget, which weigh nothing: the cost of weighing is the
difference), in a process of its own: the resident memory the caches added, the bytes the budget counts
as held, the evictions, and what weighing cost per partition stored. No metastore is needed: the structs are
those ``get_table_objects_by_name`` and ``get_partitions_by_names`` return, decoded the same way.

    python benchmarks/bench_cache_memory.py [--tables 2000] [--partitions 100] [--budgets none,unlimited,64MiB]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import save

from hms_catalog.cache import CatalogCaches
from hms_catalog.cache.budget import MemoryBudget, format_size
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.formats.metadata import load_table_metadata
from hms_catalog.properties import CacheConfig

BATCH = 100  # partitions a get_partitions_by_names batch answers


def rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def structs(table: int, partitions: int) -> tuple[bytes, list[bytes]]:
    """One table and its partitions, serialized as the metastore sends them (20 columns, two keys)."""
    from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
    from thrift.TSerialization import serialize

    factory = TBinaryProtocolAcceleratedFactory()
    cols = [ttypes.FieldSchema(f"column_{c}", "bigint" if c % 2 else "string", None) for c in range(20)]
    location = f"hdfs://nn:8020/warehouse/db.db/t{table}"
    sd = ttypes.StorageDescriptor(
        cols=cols, location=location, inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat", numBuckets=-1,
        serdeInfo=ttypes.SerDeInfo(serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                                   parameters={"serialization.format": "1"}), bucketCols=[], sortCols=[], parameters={})
    keys = [ttypes.FieldSchema("dt", "string", None), ttypes.FieldSchema("hr", "string", None)]
    thrift_table = ttypes.Table(tableName=f"t{table}", dbName="db", owner="etl", sd=sd, partitionKeys=keys,
                                tableType="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE", "numRows": "1000"})
    parts = []
    for number in range(partitions):
        values = [f"2024-{number // 24 % 12 + 1:02d}-{number // 24 % 28 + 1:02d}", f"{number % 24:02d}"]
        sd.location = f"{location}/dt={values[0]}/hr={values[1]}"
        parts.append(serialize(ttypes.Partition(values=values, dbName="db", tableName=f"t{table}", sd=sd,
                                                createTime=1700000000 + number,
                                                parameters={"numFiles": "3", "totalSize": str(1000 * number)}), factory))
    return serialize(thrift_table, factory), parts


def fill(budget_text: str, tables: int, partitions: int) -> dict[str, Any]:
    """Fill one catalog's caches under ``budget_text``; what it cost (run in a process of its own)."""
    from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
    from thrift.TSerialization import deserialize

    factory = TBinaryProtocolAcceleratedFactory()
    budget = None if budget_text == "none" else MemoryBudget.parse(budget_text)
    caches = CatalogCaches.from_config(CacheConfig(partition_capacity=10**7, schema_capacity=10**6), budget=budget)
    table_blob, partition_blobs = structs(0, partitions)
    gc.collect()
    before = rss()
    storing = 0.0
    for table in range(tables):
        thrift_table = deserialize(ttypes.Table(), table_blob, factory)
        thrift_table.tableName = f"t{table}"
        caches.schema.put(("db", f"t{table}"), load_table_metadata(thrift_table, {}), ticket=caches.schema.ticket())
        for start in range(0, partitions, BATCH):
            batch = [deserialize(ttypes.Partition(), blob, factory) for blob in partition_blobs[start:start + BATCH]]
            items = [(("db", f"t{table}", "/".join(p.values)), p) for p in batch]
            began = time.perf_counter()
            caches.partitions.put_all(items, ticket=caches.partitions.ticket())
            storing += time.perf_counter() - began
    gc.collect()
    stats = {cache.name: cache.stats() for cache in caches}
    return {
        "budget": budget_text, "budget_bytes": budget and budget.limit, "rss_added_bytes": rss() - before,
        "held_bytes": budget.held if budget is not None else None,
        "entries": {name: s.entries for name, s in stats.items() if s.entries},
        "memory_evictions": sum(s.memory_evictions for s in stats.values()),
        "store_us_per_partition": storing / (tables * partitions) * 1e6,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--partitions", type=int, default=100, help="partitions of each table")
    parser.add_argument("--budgets", default="none,unlimited,64MiB")
    parser.add_argument("--fill", help=argparse.SUPPRESS)  # the child process: one budget
    args = parser.parse_args()
    if args.fill:
        print(json.dumps(fill(args.fill, args.tables, args.partitions)))
        return 0
    runs = []
    for budget in args.budgets.split(","):
        child = subprocess.run([sys.executable, __file__, "--fill", budget, "--tables", str(args.tables),
                                "--partitions", str(args.partitions)], capture_output=True, text=True, check=True)
        run = json.loads(child.stdout)
        runs.append(run)
        held = "-" if run["held_bytes"] is None else format_size(run["held_bytes"])
        print(f"budget {budget:>10}: resident memory +{format_size(run['rss_added_bytes'])}, held "
              f"{held}, {run['memory_evictions']} evicted for memory, entries "
              f"{run['entries']}, storing {run['store_us_per_partition']:.1f} us a partition")
    save("cache_memory", {"tables": args.tables, "partitions_per_table": args.partitions, "cpus": os.cpu_count(),
                          "runs": runs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
