"""The ``s3_planning`` section of bench_storage.py: planning a many-partition table on a real S3 API, cold,
against the same table on local disk, with the LIST requests counted at the server."""

from __future__ import annotations

import io
import json
import statistics
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from _common import progress

from hms_catalog import open_session
from hms_catalog.cache import CatalogCaches
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import CacheConfig
from planner import plan_table
from planner.listing import LocalBlockLocator, list_locations
from tests.support.s3 import S3Server

__all__ = ["plan_on_s3_and_local"]

_DDL = "CREATE EXTERNAL TABLE {name} (id BIGINT, amount DOUBLE) PARTITIONED BY (dt STRING) STORED AS PARQUET LOCATION '{location}'"


def _parquet(index: int) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table({"id": [index, index + 1], "amount": [index * 1.5, 2.0]}), out)
    return out.getvalue()


def plan_on_s3_and_local(scratch: Path, *, partitions: int, repeat: int) -> dict[str, Any]:
    scratch.mkdir(parents=True, exist_ok=True)
    server = S3Server.start(scratch / "s3")
    try:
        with EmbeddedMetastore(scratch / "metastore", 0, events=False, object_store_stub=True) as metastore:
            return _measure(server, metastore.uri, scratch, partitions, repeat)
    finally:
        server.stop()


def _measure(server: S3Server, metastore_uri: str, scratch: Path, partitions: int, repeat: int) -> dict[str, Any]:
    bucket = server.bucket("bench-warehouse")
    local = scratch / "local" / "t"
    progress(f"writing {partitions} partitions to S3 and to local disk")
    for index in range(partitions):
        data = _parquet(index)
        server.client.put_object(Bucket=bucket, Key=f"wh/t/dt={index:05d}/part-00000.parquet", Body=data)
        (local / f"dt={index:05d}").mkdir(parents=True)
        (local / f"dt={index:05d}" / "part-00000.parquet").write_bytes(data)
    properties = {**server.catalog_properties(), "type": "hms", "hive.metastore.uris": metastore_uri}
    shown = ", ".join(f"'{key}'='{value}'" for key, value in properties.items())
    session = open_session(scratch / "home")
    try:
        session.run_one(f"CREATE CATALOG bench PROPERTIES ({shown})")
        session.run_one("CREATE DATABASE bench.b")
        session.run_one(_DDL.format(name="bench.b.on_s3", location=f"s3a://{bucket}/wh/t"))
        session.run_one(_DDL.format(name="bench.b.on_disk", location=local.as_uri()))
        progress("registering the partitions with MSCK REPAIR TABLE")
        for table in ("on_s3", "on_disk"):
            session.run_one(f"MSCK REPAIR TABLE bench.b.{table}")
        catalog = session.manager.catalog("bench")

        def cold_plan(table: str) -> Any:
            catalog.refresh()
            return plan_table(catalog, catalog.table("b", table))

        report: dict[str, Any] = {"partitions": partitions, "files": partitions}
        timings: dict[str, list[float]] = {"s3": [], "local": []}
        lists = []
        metastore_calls: list[int] = []
        for _ in range(repeat):
            started = time.perf_counter()
            plan, counted = server.list_requests(lambda: cold_plan("on_s3"))
            timings["s3"].append(time.perf_counter() - started)
            lists.append(counted)
            metastore_calls.append(sum(plan.summary.metastore_calls.values()))
            assert len(plan.splits) == partitions, len(plan.splits)
            started = time.perf_counter()
            local_plan = cold_plan("on_disk")
            timings["local"].append(time.perf_counter() - started)
            assert len(local_plan.splits) == partitions
        locations = [f"s3a://{bucket}/wh/t/dt={index:05d}" for index in range(partitions)]

        def each_partition() -> Any:
            return list_locations([(("b", "x", location), location) for location in locations],
                                  CatalogCaches.from_config(CacheConfig()), storage=catalog.storage, recursive=False,
                                  block_size=1 << 25, locator=LocalBlockLocator(), parallelism=8)

        started = time.perf_counter()
        listed, each_lists = server.list_requests(each_partition)
        each_seconds = time.perf_counter() - started
        assert sum(len(files) for files in listed.files.values()) == partitions
        s3_seconds, local_seconds = statistics.median(timings["s3"]), statistics.median(timings["local"])
        report.update({
            "s3_cold_plan_seconds": round(s3_seconds, 3),
            "local_cold_plan_seconds": round(local_seconds, 3),
            "s3_over_local": round(s3_seconds / local_seconds, 2),
            "s3_list_requests_per_plan": max(lists),
            "metastore_calls_per_cold_plan": max(metastore_calls),
            "list_requests_goal": f"<= {partitions} (one per partition location)",
            "per_partition_listing_seconds": round(each_seconds, 3),
            "per_partition_list_requests": each_lists,
            "root_listing_speedup_over_per_partition": round(each_seconds / s3_seconds, 2),
        })
        progress(json.dumps(report))
        return report
    finally:
        session.close()
        session.manager.close()
