"""Service replicas on one PostgreSQL store: warm throughput with 1, 2 and 3 replicas, and how fast a change
made through one replica reaches the others.

1. Warm table loads per second (``GET .../tables/{t}`` over 20 tables) from client processes spread over the
   replicas (each client process runs threads, each thread its own keep-alive client), with 1, 2 and 3
   replicas, each replica its own ``serve`` process on one PostgreSQL store. Ratios against 1 replica, all
   measured in this run. Every request also reads the catalog's definition and newest version from the store
   (that is how a replica sees another's change at its next request), so the store is in the loop.
2. Propagation: with 3 replicas, a REFRESH through replica 0 is waited for by long polls on replicas 1 and 2
   (``GET .../changes?since=v&wait=10``, started before the REFRESH); the time from the REFRESH's answer to
   each poll's answer, p50/p99/max over ``--changes`` REFRESHes. Goal: under 1 s at p99.

On one 2-core machine the replicas, the clients, PostgreSQL and the metastore share two cores: the figure
shows what replication costs and that it does not serialise, not what more machines would add. Results
are printed and saved to benchmarks/results/replicas.json.

    python benchmarks/bench_replicas.py [--seconds 8] [--client-processes 3] [--threads 8] [--changes 100]
"""

from __future__ import annotations

import argparse
import multiprocessing
import secrets
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import progress, save

from hms_catalog.client import HmsClientPool
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris
from hms_catalog.remote import CatalogServiceClient
from tests.support import hms
from tests.support.postgres import PostgresServer
from tests.support.replicas import Replica, fresh_schema

DATABASE, TABLES = "bench", 20


def _client_process(urls: list[str], token: str, threads: int, seconds: float, results: Any) -> None:
    """Load tables warm from ``threads`` threads until ``seconds`` pass; put (requests, latencies sample)."""
    counts = [0] * threads
    samples: list[float] = []
    stop = time.monotonic() + seconds

    def run(index: int) -> None:
        client = CatalogServiceClient(urls, token)
        table = index
        while time.monotonic() < stop:
            started = time.perf_counter()
            client.table("c", DATABASE, f"t{table % TABLES}")
            if counts[index] % 10 == 0:
                samples.append(time.perf_counter() - started)
            counts[index] += 1
            table += 1
        client.close()

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    results.put((sum(counts), samples))


def _throughput(replicas: list[Replica], processes: int, threads: int, seconds: float) -> dict[str, Any]:
    for replica in replicas:  # warm every replica's cache first
        client = replica.client()
        for index in range(TABLES):
            client.table("c", DATABASE, f"t{index}")
        client.close()
    results: Any = multiprocessing.get_context("spawn").Queue()
    urls = [replica.url for replica in replicas]
    spawned = [multiprocessing.get_context("spawn").Process(
        target=_client_process, args=(urls[i % len(urls):] + urls[: i % len(urls)], replicas[0].token, threads, seconds, results))
        for i in range(processes)]
    for process in spawned:
        process.start()
    gathered = [results.get(timeout=seconds + 120) for _ in spawned]
    for process in spawned:
        process.join()
    total = sum(count for count, _ in gathered)
    latencies = sorted(sample for _, samples in gathered for sample in samples)
    return {"replicas": len(replicas), "requests": total, "per_second": round(total / seconds, 1),
            "p50_ms": round(latencies[len(latencies) // 2] * 1000, 2) if latencies else None,
            "p99_ms": round(latencies[int(len(latencies) * 0.99)] * 1000, 2) if latencies else None}


def _propagation(replicas: list[Replica], changes: int) -> dict[str, Any]:
    writer = replicas[0].client()
    delays: list[float] = []
    for _ in range(changes):
        version = writer.changes("c")["current"]
        arrived: dict[int, float] = {}

        def poll(index: int, since: int = version, arrived: dict[int, float] = arrived) -> None:
            client = replicas[index].client()
            answer = client.changes("c", since, wait=10)
            arrived[index] = time.monotonic()
            assert answer["changes"], f"replica {index} heard nothing within 10 s"
            client.close()

        pollers = [threading.Thread(target=poll, args=(i,)) for i in range(1, len(replicas))]
        for poller in pollers:
            poller.start()
        time.sleep(0.05)  # the polls are waiting
        writer.refresh("c", DATABASE, "t0")
        done = time.monotonic()
        for poller in pollers:
            poller.join()
        delays += [max(0.0, at - done) for at in arrived.values()]
    writer.close()
    delays.sort()
    return {"changes": changes, "observations": len(delays), "p50_ms": round(delays[len(delays) // 2] * 1000, 1),
            "p99_ms": round(delays[int(len(delays) * 0.99)] * 1000, 1), "max_ms": round(delays[-1] * 1000, 1),
            "goal_p99_ms": 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--client-processes", type=int, default=3)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--changes", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        progress("starting the embedded metastore and a throw-away PostgreSQL")
        with EmbeddedMetastore(root / "metastore") as metastore, PostgresServer(root / "postgres") as postgres:
            pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri), pool_size=2))
            admin = hms.Admin(pool, metastore.warehouse)
            admin.create_database(DATABASE)
            for index in range(TABLES):
                admin.create_table(DATABASE, f"t{index}", [("id", "int"), ("name", "string")], partition_keys=[("dt", "string")])
            token = root / "token"
            token.write_text(secrets.token_urlsafe(32))
            token.chmod(0o600)
            levels = []
            propagation: dict[str, Any] = {}
            for count in (1, 2, 3):
                store = fresh_schema(postgres)
                replicas = [Replica(root / f"n{count}" / f"r{i}", store, postgres.password_file, token) for i in range(count)]
                try:
                    for replica in replicas:
                        replica.start()
                    setup = replicas[0].client()
                    setup.create_catalog("c", {"type": "hms", "hive.metastore.uris": metastore.uri})
                    setup.close()
                    progress(f"{count} replica(s): warm table loads for {args.seconds:g} s")
                    levels.append(_throughput(replicas, args.client_processes, args.threads, args.seconds))
                    progress(f"    {levels[-1]}")
                    if count == 3:
                        progress(f"3 replicas: {args.changes} REFRESHes through one, long polls on the others")
                        propagation = _propagation(replicas, args.changes)
                finally:
                    for replica in replicas:
                        replica.stop()
            pool.close()
    base = levels[0]["per_second"]
    for level in levels:
        level["vs_one_replica"] = round(level["per_second"] / base, 2)
    save("replicas", {
        "setup": {"tables": TABLES, "client_processes": args.client_processes, "threads_each": args.threads,
                  "seconds": args.seconds, "store": "PostgreSQL (throw-away cluster on this machine)",
                  "cores": multiprocessing.cpu_count()},
        "throughput": levels, "propagation": propagation,
        "note": "replicas, clients, PostgreSQL and the metastore share this machine's cores",
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
