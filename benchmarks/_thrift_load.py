"""Thrift clients for bench_thrift: the generated metastore client, and a load of many of them in a child process.

The load runs in a process of its own (``python _thrift_load.py CONFIG_JSON``, one JSON line of results on
stdout) so that its client threads do not share a GIL with the in-process endpoint they measure: the
metastore is a JVM of its own, and the endpoint deserves the same footing. Each thread has its own
connection (TBufferedTransport, TBinaryProtocol), as an engine's clients do; a call that fails is counted
and its connection reopened.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from hms_catalog.client.hive_thrift import MetastoreThriftClient

__all__ = ["connect", "percentiles", "run_load"]


class _Connection:
    """One client and its transport, reopened after a failure."""

    def __init__(self, port: int, timeout_ms: int = 30_000) -> None:
        self.port, self.timeout_ms = port, timeout_ms
        self.transport: TTransport.TBufferedTransport | None = None
        self.client: MetastoreThriftClient | None = None

    def open(self) -> MetastoreThriftClient:
        if self.client is None:
            socket = TSocket.TSocket("127.0.0.1", self.port)
            socket.setTimeout(self.timeout_ms)
            transport = TTransport.TBufferedTransport(socket)
            transport.open()
            self.transport, self.client = transport, MetastoreThriftClient(TBinaryProtocol.TBinaryProtocol(transport))
        return self.client

    def close(self) -> None:
        if self.transport is not None:
            with contextlib.suppress(Exception):
                self.transport.close()
        self.transport = self.client = None


@contextlib.contextmanager
def connect(port: int, timeout_ms: int = 30_000) -> Iterator[MetastoreThriftClient]:
    connection = _Connection(port, timeout_ms)
    try:
        yield connection.open()
    finally:
        connection.close()


def percentiles(seconds: list[float]) -> dict[str, float | None]:
    """p50/p95/p99/max in milliseconds (None when nothing was measured)."""
    if not seconds:
        return {"p50_ms": None, "p95_ms": None, "p99_ms": None, "max_ms": None}
    ordered = sorted(seconds)

    def at(fraction: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000, 3)

    return {"p50_ms": at(0.50), "p95_ms": at(0.95), "p99_ms": at(0.99), "max_ms": round(ordered[-1] * 1000, 3)}


def run_load(port: int, database: str, tables: list[str], clients: int, seconds: float,
             cold: bool = False, stop_file: str | None = None, start_at: float | None = None,
             samples: bool = False) -> dict[str, Any]:
    """``clients`` threads loop ``get_table`` over ``tables`` (and, with ``cold``, one call the endpoint always
    forwards, ``get_current_notificationEventId``, per iteration) for ``seconds`` or until ``stop_file`` exists;
    ``failed_at``: when each kind's first and last failure came (``time.time()``), to place them in an outage;
    ``failed_calls``: how long the failed calls of each kind took (``at_once``: under half a second).
    ``start_at`` (a ``time.time()``) starts several such processes together; ``samples`` adds every warm
    call's seconds to the answer, for whoever merges processes."""
    lock = threading.Lock()
    warm: list[float] = []
    cold_times: list[float] = []
    failures = {"warm": 0, "cold": 0, "connect": 0}
    failed_at: dict[str, list[float]] = {}  # kind -> [first, last] time.time() of its failures
    failed_after: dict[str, list[float]] = {}  # kind -> seconds each failed call took
    first_errors: list[str] = []
    ready = threading.Barrier(clients + 1)
    go = threading.Event()  # set once the deadline is: a thread past the barrier before it would see none and stop
    deadline: list[float] = [0.0]

    def failed(kind: str, error: BaseException, started: float | None = None) -> None:
        now = time.time()
        with lock:
            failures[kind] += 1
            failed_at.setdefault(kind, [now, now])[1] = now
            if started is not None:
                failed_after.setdefault(kind, []).append(time.perf_counter() - started)
            if len(first_errors) < 5:
                first_errors.append(f"{kind}: {type(error).__name__}: {error}"[:300])

    def worker(index: int) -> None:
        connection = _Connection(port, 10_000)
        mine_warm: list[float] = []
        mine_cold: list[float] = []
        try:
            with contextlib.suppress(Exception):
                connection.open()
            ready.wait()
            go.wait()
            step = index
            while time.perf_counter() < deadline[0] and not (stop_file and Path(stop_file).exists()):
                try:
                    client = connection.open()
                except Exception as error:  # noqa: BLE001 - counted; the loop goes on
                    failed("connect", error)
                    time.sleep(0.05)
                    continue
                name = tables[step % len(tables)]
                step += clients
                started = time.perf_counter()
                try:
                    client.get_table(database, name)
                    mine_warm.append(time.perf_counter() - started)
                except Exception as error:  # noqa: BLE001
                    failed("warm", error, started)
                    connection.close()
                    continue
                if cold:
                    started = time.perf_counter()
                    try:
                        client.get_current_notificationEventId()
                        mine_cold.append(time.perf_counter() - started)
                    except Exception as error:  # noqa: BLE001
                        failed("cold", error, started)
                        connection.close()
        finally:
            connection.close()
            with lock:
                warm.extend(mine_warm)
                cold_times.extend(mine_cold)

    threads = [threading.Thread(target=worker, args=(index,), daemon=True) for index in range(clients)]
    for thread in threads:
        thread.start()
    ready.wait()
    if start_at is not None:
        time.sleep(max(0.0, start_at - time.time()))
    began = time.perf_counter()
    deadline[0] = began + seconds
    go.set()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    return {
        "clients": clients, "seconds": round(elapsed, 3), "calls": len(warm), "calls_per_second": round(len(warm) / elapsed, 1),
        **percentiles(warm), "cold_calls": len(cold_times), "cold": percentiles(cold_times) if cold else None,
        "failures": failures, "failed_at": failed_at, "first_errors": first_errors,
        "failed_calls": {kind: {"at_once": sum(1 for each in took if each < 0.5), **percentiles(took)}
                         for kind, took in failed_after.items()},
        **({"samples": [round(value, 6) for value in warm]} if samples else {}),
    }


if __name__ == "__main__":
    config = json.loads(sys.argv[1])
    print(json.dumps(run_load(**config)), flush=True)
