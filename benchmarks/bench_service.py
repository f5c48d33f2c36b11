"""The catalog service (``hms-catalog serve``) against the metastore itself, all in one run.

Three comparisons, each against a peer measured in the same run on the same embedded metastore:

1. Latency of one warm table load over HTTP (``GET /v1/catalogs/{c}/databases/{db}/tables/{t}``,
   keep-alive, through CatalogServiceClient) against a direct ``get_table_req`` to the metastore for the
   same table (MetastoreClient.get_table). p50/p99 of both and service/metastore ratios (goal <= 0.2).
   Both sides are warmed first (the metastore is a JVM) and timed in alternating blocks of 100, so a
   slow spell of the machine falls on both.
2. Throughput of warm table loads from 1, 8 and 32 client threads (each its own CatalogServiceClient)
   against the metastore answering get_table_req to as many threads (each its own pool of one
   connection). Requests/s, p50/p99, service/metastore ratio (goal >= 5), and the CPU each process
   spent per request, since the client threads, the service and the metastore share this machine.
3. Metastore calls when 32 clients cold-load the same 100 tables: through one service (goal: 100) against
   32 clients that each have their own catalog (3,200). Counted at the server, in Hive's audit log.

The service runs as a real subprocess (``python -m hms_catalog.cli --home HOME serve --port 0``) and is
stopped with SIGTERM at the end; the benchmark fails if it does not exit 0. Results are printed and saved
to benchmarks/results/service.json.

    python benchmarks/bench_service.py [--tables 100] [--clients 32] [--levels 1,8,32] [--seconds 4]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import Service, progress, save

from hms_catalog import CatalogManager
from hms_catalog.client import HmsClientPool, MetastoreClient
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.formats.storage import STORAGE_FORMATS
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris
from hms_catalog.remote import CatalogServiceClient
from hms_catalog.state import open_definitions

DATABASE = "bench_service"
CATALOG = "bench"
PARQUET = (STORAGE_FORMATS["PARQUET"].input_format, STORAGE_FORMATS["PARQUET"].output_format, STORAGE_FORMATS["PARQUET"].serde)
GOAL_LATENCY_RATIO = 0.2  # service latency / metastore latency, at most
GOAL_THROUGHPUT_RATIO = 5.0  # service requests/s / metastore requests/s, at least
_CALLS_METRIC = re.compile(r'^hms_catalog_metastore_calls_total\{catalog="(?P<catalog>[^"]*)",method="(?P<method>[^"]*)"\} (?P<n>\d+)$')
_TICK = os.sysconf("SC_CLK_TCK")

Call = Callable[[], Any]


# Setup -----------------------------------------------------------------------------------------------

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


# Measuring -------------------------------------------------------------------------------------------

def percentiles(samples: list[float]) -> dict[str, float]:
    """Nearest-rank p50 and p99, in milliseconds."""
    ordered = sorted(samples)

    def rank(q: float) -> float:
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)] * 1000

    return {"p50_ms": round(rank(0.50), 3), "p99_ms": round(rank(0.99), 3)}


def timings(call: Call, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, every thread) a process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


class CpuMeter:
    """CPU used by this process (the client threads) and by the service and metastore, between two reads."""

    def __init__(self, service_pid: int, metastore_pid: int) -> None:
        self.pids = {"service": service_pid, "metastore": metastore_pid}

    def read(self) -> dict[str, float]:
        return {"clients": time.process_time(), **{name: process_cpu(pid) for name, pid in self.pids.items()}}

    def per_request_ms(self, before: dict[str, float], requests: int) -> dict[str, float]:
        after = self.read()
        return {name: round((after[name] - before[name]) * 1000 / max(1, requests), 3) for name in before}


def throughput(make_call: Callable[[], tuple[Call, Call]], clients: int, seconds: float, cpu: CpuMeter) -> dict[str, Any]:
    """Requests/s of ``clients`` threads calling for ``seconds``; each thread makes its own (call, close)."""
    samples: list[list[float]] = [[] for _ in range(clients)]
    ready = threading.Barrier(clients + 1)
    stop = threading.Event()
    failures: list[BaseException] = []

    def work(index: int) -> None:
        call, close = make_call()
        try:
            call()  # the connection is open before the clock starts
            ready.wait()
            mine = samples[index]
            while not stop.is_set():
                began = time.perf_counter()
                call()
                mine.append(time.perf_counter() - began)
        except BaseException as error:  # noqa: BLE001 - reported after the threads are joined
            failures.append(error)
            ready.abort()
        finally:
            close()

    threads = [threading.Thread(target=work, args=(index,)) for index in range(clients)]
    for thread in threads:
        thread.start()
    ready.wait()
    before = cpu.read()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    if failures:
        raise RuntimeError(f"{len(failures)} client thread(s) failed") from failures[0]
    flat = [sample for each in samples for sample in each]
    return {"requests": len(flat), "requests_per_second": round(len(flat) / elapsed, 1), **percentiles(flat),
            "cpu_ms_per_request": cpu.per_request_ms(before, len(flat))}


def in_threads(count: int, work: Callable[[int], None]) -> float:
    """Run ``work(i)`` on ``count`` threads released together; the seconds until the last one ends."""
    ready = threading.Barrier(count + 1)
    failures: list[BaseException] = []

    def run(index: int) -> None:
        ready.wait()
        try:
            work(index)
        except BaseException as error:  # noqa: BLE001 - reported after the threads are joined
            failures.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    ready.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"{len(failures)} of {count} threads failed") from failures[0]
    return time.perf_counter() - began


def audited(metastore: EmbeddedMetastore, action: Callable[[], float]) -> tuple[float, dict[str, int]]:
    """What ``action`` returns and the metastore calls the server logged while it ran."""
    time.sleep(0.2)
    mark, _ = metastore.audited_calls()
    value = action()
    time.sleep(0.5)  # let the audit appender flush
    _, calls = metastore.audited_calls(mark)
    return value, calls


def service_calls(client: CatalogServiceClient) -> dict[str, int]:
    """The service's own count of its metastore calls for our catalog, by method (from /metrics)."""
    counts: dict[str, int] = {}
    for line in client.metrics_text().splitlines():
        found = _CALLS_METRIC.match(line)
        if found and found.group("catalog") == CATALOG:
            counts[found.group("method")] = int(found.group("n"))
    return counts


def since(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {method: count - before.get(method, 0) for method, count in after.items() if count != before.get(method, 0)}


def ratio(numerator: float, denominator: float) -> float:
    return round(numerator / denominator, 3) if denominator else math.inf


# The three comparisons ---------------------------------------------------------------------------------

def latency(service: CatalogServiceClient, direct: MetastoreClient, metastore: EmbeddedMetastore, table: str,
            samples: int, warmup: float) -> dict[str, Any]:
    http = lambda: service.table(CATALOG, DATABASE, table)  # noqa: E731
    thrift = lambda: direct.get_table(DATABASE, table)  # noqa: E731
    for call in (http, thrift):  # warm both sides (the service's view cache, the metastore's JIT) before timing
        until = time.perf_counter() + warmup
        while time.perf_counter() < until:
            call()
    ours: list[float] = []
    theirs: list[float] = []
    block = 100
    for _ in range(max(1, samples // block)):
        ours += timings(http, block)
        theirs += timings(thrift, block)
    _, warm_calls = audited(metastore, lambda: sum(timings(http, 200)))
    mine, peer = percentiles(ours), percentiles(theirs)
    return {
        "samples_each": len(ours),
        "service_http_warm": {**mine, "metastore_calls_in_200_loads": warm_calls},
        "metastore_get_table_req": peer,
        "ratio_p50_service_over_metastore": ratio(mine["p50_ms"], peer["p50_ms"]),
        "ratio_p99_service_over_metastore": ratio(mine["p99_ms"], peer["p99_ms"]),
    }


def loads(url: str, token: str, metastore_uri: str, table: str, levels: list[int], seconds: float,
          cpu: CpuMeter) -> dict[str, Any]:
    def over_http() -> tuple[Call, Call]:
        client = CatalogServiceClient(url, token)
        return (lambda: client.table(CATALOG, DATABASE, table)), client.close

    def over_thrift() -> tuple[Call, Call]:
        client = MetastoreClient(HmsClientPool(ClientConfig(uris=parse_uris(metastore_uri), pool_size=1)))
        return (lambda: client.get_table(DATABASE, table)), client.close

    figures: dict[str, Any] = {}
    for clients in levels:
        progress(f"throughput with {clients} client thread(s), {seconds:g}s each side")
        ours = throughput(over_http, clients, seconds, cpu)
        theirs = throughput(over_thrift, clients, seconds, cpu)
        figures[str(clients)] = {
            "service_http_warm": ours, "metastore_get_table_req": theirs,
            "ratio_rps_service_over_metastore": ratio(ours["requests_per_second"], theirs["requests_per_second"]),
        }
    return figures


def cold_loads(service: Service, client: CatalogServiceClient, metastore: EmbeddedMetastore, root: Path,
               names: list[str], clients: int) -> dict[str, Any]:
    progress(f"{clients} clients cold-loading {len(names)} tables through one service")
    client.refresh(CATALOG)  # forget every table the measurements above loaded
    before = service_calls(client)

    def through_service(index: int) -> None:
        mine = CatalogServiceClient(service.url, service.token)
        for name in names:
            if mine.table(CATALOG, DATABASE, name)["name"] != name:
                raise AssertionError(f"asked for {name}, got another table")
        mine.close()

    shared_seconds, shared = audited(metastore, lambda: in_threads(clients, through_service))
    counted_by_service = since(service_calls(client), before)

    progress(f"{clients} clients, each with its own catalog, cold-loading {len(names)} tables")
    managers = []
    for index in range(clients):
        manager = CatalogManager(open_definitions(root / f"client{index}"))
        manager.create(CATALOG, {"type": "hms", "hive.metastore.uris": metastore.uri, "hive.metastore.client.pool.size": "1"})
        manager.catalog(CATALOG).database_names()  # connected before the count starts
        managers.append(manager)

    def own_catalog(index: int) -> None:
        catalog = managers[index].catalog(CATALOG)
        for name in names:
            _ = catalog.table(DATABASE, name).metadata

    try:
        separate_seconds, separate = audited(metastore, lambda: in_threads(clients, own_catalog))
    finally:
        for manager in managers:
            manager.close()
    shared_loads = shared.get("get_table", 0)
    separate_loads = separate.get("get_table", 0)
    return {
        "clients": clients, "tables": len(names),
        "through_one_service": {"get_table": shared_loads, "all_calls": shared, "seconds": round(shared_seconds, 3),
                                "service_metrics_metastore_calls": counted_by_service},
        "own_catalog_each": {"get_table": separate_loads, "all_calls": separate, "seconds": round(separate_seconds, 3)},
        "ratio_calls_own_catalogs_over_service": ratio(separate_loads, shared_loads),
    }


# Main ------------------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=100, help="tables every client cold-loads (default 100)")
    parser.add_argument("--clients", type=int, default=32, help="clients in the cold-load comparison (default 32)")
    parser.add_argument("--levels", default="1,8,32", help="client threads of the throughput runs (default 1,8,32)")
    parser.add_argument("--seconds", type=float, default=4.0, help="length of each throughput run (default 4)")
    parser.add_argument("--samples", type=int, default=3000, help="warm loads timed on each side for latency (default 3000)")
    parser.add_argument("--warmup", type=float, default=5.0,
                        help="seconds of untimed loads on each side before the latency run (default 5)")
    args = parser.parse_args()
    levels = [int(level) for level in args.levels.split(",")]
    started = time.perf_counter()
    load_at_start = os.getloadavg()

    with tempfile.TemporaryDirectory(prefix="bench-service-") as scratch:
        root = Path(scratch)
        progress("starting the embedded metastore")
        with EmbeddedMetastore(root / "metastore", audit=True, events=False) as metastore:
            metastore_pid = metastore.status().pid
            assert metastore_pid is not None
            setup_pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri)))
            progress(f"creating {args.tables} tables")
            names = make_tables(setup_pool, metastore.warehouse, args.tables)
            setup_pool.close()

            progress("starting the service")
            service = Service(root / "home")
            exit_code: int | None = None
            try:
                client = CatalogServiceClient(service.url, service.token)
                client.create_catalog(CATALOG, {"type": "hms", "hive.metastore.uris": metastore.uri,
                                                "hive.metastore.client.pool.size": str(max(levels + [args.clients]))})
                direct = MetastoreClient(HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri), pool_size=1)))
                cpu = CpuMeter(service.process.pid, metastore_pid)

                progress(f"latency of one warm table load, {args.samples} samples each side")
                latencies = latency(client, direct, metastore, names[0], args.samples, args.warmup)
                direct.close()
                throughputs = loads(service.url, service.token, metastore.uri, names[0], levels, args.seconds, cpu)
                calls = cold_loads(service, client, metastore, root, names, args.clients)
                client.close()
            finally:
                progress("stopping the service with SIGTERM")
                exit_code = service.stop()

    goals = {
        "latency_p50_service_over_metastore_at_most_0.2": latencies["ratio_p50_service_over_metastore"] <= GOAL_LATENCY_RATIO,
        "latency_p99_service_over_metastore_at_most_0.2": latencies["ratio_p99_service_over_metastore"] <= GOAL_LATENCY_RATIO,
        **{f"throughput_{level}_clients_service_over_metastore_at_least_5":
           throughputs[str(level)]["ratio_rps_service_over_metastore"] >= GOAL_THROUGHPUT_RATIO for level in levels},
        f"cold_load_through_service_{args.tables}_get_table_calls": calls["through_one_service"]["get_table"] == args.tables,
        "service_exit_0_after_sigterm": exit_code == 0,
    }
    report: dict[str, Any] = {
        "tables": args.tables,
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(value, 2) for value in load_at_start],
        "notes": (
            f"This machine has {os.cpu_count()} cores, shared by everything measured: the benchmark's client "
            "threads, the service (one Python process, so its Python work runs on about one core at a time) and "
            "the metastore (a JVM that uses every core). Throughput is that of the three together on this machine, "
            "not a ceiling of the service; cpu_ms_per_request shows where the CPU went. Other work on the machine "
            "(see load_average_at_start) falls on both sides alike, since they are timed in the same run."
        ),
        "warm_table_load_latency": latencies,
        "warm_table_load_throughput": throughputs,
        "cold_load_metastore_calls": calls,
        "ratios": {
            "latency_p50_service_over_metastore": latencies["ratio_p50_service_over_metastore"],
            "latency_p99_service_over_metastore": latencies["ratio_p99_service_over_metastore"],
            **{f"throughput_{level}_clients_service_over_metastore":
               throughputs[str(level)]["ratio_rps_service_over_metastore"] for level in levels},
            "cold_load_calls_own_catalogs_over_service": calls["ratio_calls_own_catalogs_over_service"],
        },
        "goals_met": goals,
        "service_exit_code_after_sigterm": exit_code,
        "run_seconds": round(time.perf_counter() - started, 1),
    }
    save("service", report)
    if exit_code != 0:
        print(f"the service exited {exit_code} after SIGTERM:\n{''.join(service.lines[-20:])}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
