"""The catalog service against the metastore itself, in one run on the embedded metastore.

- Latency of a warm table load over HTTP (``GET .../tables/{t}``, keep-alive) against a direct
  ``get_table_req`` to the metastore for the same table: p50/p99 and their ratio.
- Throughput of warm table loads at 1, 8 and 32 concurrent clients against the metastore answering
  ``get_table_req`` to as many clients.
- Metastore calls when 32 clients cold-load the same 100 tables: through one service, against 32 clients
  that each have their own catalog. Counted at the server (Hive's audit log).

The service runs as a real ``hms-catalog serve`` process. Client threads, the service and the metastore
share this machine's cores, so throughput figures are those of one small machine, not a ceiling.

    python benchmarks/bench_service.py [--tables 100] [--clients 32] [--seconds 3]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import progress, save

from hms_catalog import CatalogManager, CatalogStore
from hms_catalog.client import HmsClientPool, MetastoreClient
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris
from hms_catalog.remote import CatalogServiceClient

DATABASE = "bench_service"
CATALOG = "bench"
PARQUET = ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")
_ANNOUNCED = re.compile(r"hms-catalog service at (?P<url>\S+) for ")


def make_tables(pool: HmsClientPool, warehouse: Path, count: int) -> list[str]:
    location = warehouse / f"{DATABASE}.db"
    pool.call("create_database", ttypes.Database(name=DATABASE, description="", locationUri=location.as_uri(), parameters={}))
    columns = [ttypes.FieldSchema(f"c{i}", kind, "") for i, kind in
               enumerate(["bigint", "string", "decimal(12,2)", "array<struct<a:int,b:string>>", "map<string,double>"])]
    names = []
    for index in range(count):
        name = f"t{index:03d}"
        sd = ttypes.StorageDescriptor(
            cols=columns, location=(location / name).as_uri(), inputFormat=PARQUET[0], outputFormat=PARQUET[1],
            serdeInfo=ttypes.SerDeInfo(serializationLib=PARQUET[2], parameters={}), numBuckets=-1, bucketCols=[],
            sortCols=[], parameters={},
        )
        pool.call("create_table", ttypes.Table(tableName=name, dbName=DATABASE, owner="bench", sd=sd, partitionKeys=[],
                                               parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"))
        names.append(name)
    return names


def start_service(home: Path) -> tuple[subprocess.Popen[str], str, str]:
    process = subprocess.Popen([sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "serve", "--port", "0"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    for line in process.stderr:
        found = _ANNOUNCED.search(line)
        if found:
            threading.Thread(target=process.stderr.read, daemon=True).start()  # keep the pipe drained
            return process, found.group("url"), (home / "server.token").read_text(encoding="utf-8").strip()
    raise SystemExit(f"the service did not start (exit {process.wait()})")


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 3),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3)}


def latencies(call: Callable[[], Any], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def throughput(make_call: Callable[[], tuple[Callable[[], Any], Callable[[], None]]], clients: int,
               seconds: float) -> dict[str, float]:
    """Requests per second of ``clients`` threads calling for ``seconds``; each thread makes its own call."""
    samples: list[list[float]] = [[] for _ in range(clients)]
    start = threading.Barrier(clients + 1)
    stop = threading.Event()

    def work(index: int) -> None:
        call, close = make_call()
        try:
            call()  # warm: the connection is open before the clock starts
            start.wait()
            while not stop.is_set():
                began = time.perf_counter()
                call()
                samples[index].append(time.perf_counter() - began)
        finally:
            close()

    threads = [threading.Thread(target=work, args=(index,)) for index in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    flat = [sample for each in samples for sample in each]
    return {"requests_per_second": round(len(flat) / elapsed, 1), **percentiles(flat)}


def audited(metastore: EmbeddedMetastore, action: Callable[[], Any]) -> dict[str, int]:
    time.sleep(0.1)
    mark, _ = metastore.audited_calls()
    action()
    time.sleep(0.5)  # let the audit appender flush
    _, calls = metastore.audited_calls(mark)
    return calls


def in_threads(count: int, work: Callable[[int], None]) -> None:
    threads = [threading.Thread(target=work, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=100, help="tables cold-loaded by every client (default 100)")
    parser.add_argument("--clients", type=int, default=32, help="clients in the cold-load comparison (default 32)")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each throughput measurement (default 3)")
    parser.add_argument("--samples", type=int, default=2000, help="warm loads timed for the latency figures (default 2000)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-service-") as scratch:
        root = Path(scratch)
        progress("starting the embedded metastore")
        with EmbeddedMetastore(root / "metastore", audit=True, events=False) as metastore:
            pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri), pool_size=args.clients))
            names = make_tables(pool, metastore.warehouse, args.tables)
            direct = MetastoreClient(pool)
            home = root / "home"
            progress("starting the service")
            process, url, token = start_service(home)
            service = CatalogServiceClient(url, token)
            service.create_catalog(CATALOG, {"type": "hms", "hive.metastore.uris": metastore.uri,
                                             "hive.metastore.client.pool.size": str(args.clients)})
            table = names[0]
            service.table(CATALOG, DATABASE, table)  # warm

            progress("latency of one warm table load")
            http = latencies(lambda: service.table(CATALOG, DATABASE, table), args.samples)
            thrift = latencies(lambda: direct.get_table(DATABASE, table), args.samples)
            latency = {"service_http_warm": percentiles(http), "metastore_get_table_req": percentiles(thrift)}
            latency["ratio_p50"] = round(latency["service_http_warm"]["p50_ms"] / latency["metastore_get_table_req"]["p50_ms"], 3)

            loads: dict[str, Any] = {}
            for clients in (1, 8, 32):
                progress(f"throughput with {clients} client(s)")

                def over_http() -> tuple[Callable[[], Any], Callable[[], None]]:
                    mine = CatalogServiceClient(url, token)
                    return (lambda: mine.table(CATALOG, DATABASE, table)), mine.close

                def over_thrift() -> tuple[Callable[[], Any], Callable[[], None]]:
                    return (lambda: direct.get_table(DATABASE, table)), (lambda: None)

                ours = throughput(over_http, clients, args.seconds)
                theirs = throughput(over_thrift, clients, args.seconds)
                loads[str(clients)] = {"service_http_warm": ours, "metastore_get_table_req": theirs,
                                       "ratio": round(ours["requests_per_second"] / theirs["requests_per_second"], 2)}

            progress(f"{args.clients} clients cold-loading {args.tables} tables through the service")
            service.refresh(CATALOG)

            def through_service(index: int) -> None:
                mine = CatalogServiceClient(url, token)
                for name in names:
                    mine.table(CATALOG, DATABASE, name)
                mine.close()

            shared = audited(metastore, lambda: in_threads(args.clients, through_service))

            progress(f"{args.clients} clients with their own catalogs cold-loading {args.tables} tables")
            managers = []
            for index in range(args.clients):
                manager = CatalogManager(CatalogStore(root / f"client{index}"))
                manager.create(CATALOG, {"type": "hms", "hive.metastore.uris": metastore.uri,
                                         "hive.metastore.client.pool.size": "1"})
                manager.catalog(CATALOG).database_names()  # connected before the count starts
                managers.append(manager)

            def own_catalog(index: int) -> None:
                catalog = managers[index].catalog(CATALOG)
                for name in names:
                    _ = catalog.table(DATABASE, name).metadata

            separate = audited(metastore, lambda: in_threads(args.clients, own_catalog))
            for manager in managers:
                manager.close()

            service.close()
            process.send_signal(signal.SIGTERM)
            exit_code = process.wait(timeout=30)
            pool.close()

    report = {
        "tables": args.tables,
        "clients": args.clients,
        "cpus": os.cpu_count(),
        "notes": ("One machine runs the client threads, the service and the metastore; with few cores the "
                  "throughput figures are those of that machine, not of the service alone."),
        "warm_table_load_latency": latency,
        "warm_table_load_throughput": loads,
        "cold_load_metastore_calls": {
            "service": {"get_table": shared.get("get_table", 0), "all": sum(shared.values())},
            "own_catalogs": {"get_table": separate.get("get_table", 0), "all": sum(separate.values())},
        },
        "service_exit_code_after_sigterm": exit_code,
    }
    save("service", report)


if __name__ == "__main__":
    main()
