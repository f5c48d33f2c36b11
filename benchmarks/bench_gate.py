"""What the change gate and the access policy cost on the hot path: the service before them and after, in one run.

Two ``hms-catalog serve`` processes on one embedded metastore, with the same catalog and the same named read
token (limited to that catalog, so every read is decided on it): one from a git worktree of ``--before`` (the
last commit without the gate, by default) and one from this tree. Three warm reads, each timed on both
services in alternating blocks so a slow spell of the machine falls on both:

1. ``get_table`` through the thrift endpoint (the generated client, one connection each);
2. Iceberg REST ``loadTable`` of a pyiceberg-made table (keep-alive HTTP, the read token);
3. a REST split plan of the same table (``POST .../plan``).

Reported: the median of each on each side and after/before (goal: at most 1.05). Printed and saved to
benchmarks/results/gate.json.

    python benchmarks/bench_gate.py [--before ee56241] [--samples 1500]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import Service, progress, save

from hms_catalog.client.hive_thrift import MetastoreThriftClient
from hms_catalog.metastore import EmbeddedMetastore

ROOT = Path(__file__).resolve().parents[1]
CATALOG = "bench"
NAMESPACE = "bench_gate"
TABLE = "events"
READ_TOKEN = "bench-gate-read-token-0000000001"
GOAL_RATIO = 1.05
_BLOCK = 100  # calls per timed block; the sides alternate block by block


class Side:
    """One served service: its REST/Iceberg connection and its thrift client."""

    def __init__(self, name: str, home: Path, tokens: Path, source: Path) -> None:
        self.name = name
        self.service = Service(home, "--tokens", str(tokens), "--thrift-port", "0", "--thrift-primary", CATALOG,
                               cwd=source)
        parts = urlsplit(self.service.url)
        self.http = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=60)
        self.thrift: MetastoreThriftClient | None = None
        self._transport: Any = None

    def request(self, method: str, path: str, body: dict[str, Any] | None = None, token: str = READ_TOKEN) -> Any:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.http.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        answer = self.http.getresponse()
        data = answer.read()
        if answer.status >= 300:
            raise SystemExit(f"{self.name}: {method} {path} answered {answer.status}: {data[:400]!r}")
        return json.loads(data) if data else None

    def open_thrift(self) -> None:
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport

        health = self.request("GET", "/v1/health", token=self.service.token)
        port = urlsplit(health["thrift"]["uri"]).port or 0
        self._transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
        self._transport.open()
        self.thrift = MetastoreThriftClient(TBinaryProtocol.TBinaryProtocol(self._transport))

    def close(self) -> int:
        if self._transport is not None:
            self._transport.close()
        self.http.close()
        return self.service.stop()


def worktree(ref: str, directory: Path) -> Path:
    """A checkout of ``ref`` beside this one (its own sources; the same virtualenv)."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(directory), ref], check=True,
                   capture_output=True, text=True)
    return directory


def make_table(side: Side, metastore: EmbeddedMetastore) -> None:
    """An Iceberg table of a few appended files, made through the service's Iceberg REST endpoint with pyiceberg."""
    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog

    rest = RestCatalog("bench", uri=f"{side.service.url}/iceberg", warehouse=CATALOG, token=side.service.token)
    rest.create_namespace(NAMESPACE, {"location": (metastore.warehouse / f"{NAMESPACE}.db").as_uri()})
    rows = pa.table({"id": pa.array(range(1000), pa.int64()), "kind": pa.array([f"k{i % 7}" for i in range(1000)])})
    table = rest.create_table((NAMESPACE, TABLE), schema=rows.schema)
    for _ in range(8):
        table.append(rows)
    rest.close()


def alternate(calls: dict[str, Callable[[], Any]], samples: int) -> dict[str, list[float]]:
    """``samples`` timings of each side's call, taken in alternating blocks after a warm-up of one block each."""
    times: dict[str, list[float]] = {side: [] for side in calls}
    for call in calls.values():
        for _ in range(_BLOCK):
            call()
    while min(len(t) for t in times.values()) < samples:
        for side, call in calls.items():
            for _ in range(_BLOCK):
                started = time.perf_counter()
                call()
                times[side].append(time.perf_counter() - started)
    return times


def summary(times: dict[str, list[float]]) -> dict[str, Any]:
    before, after = statistics.median(times["before"]), statistics.median(times["after"])
    return {"before_p50_ms": round(before * 1000, 3), "after_p50_ms": round(after * 1000, 3),
            "after_over_before": round(after / before, 3), "goal": GOAL_RATIO, "met": after / before <= GOAL_RATIO,
            "samples": len(times["after"])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="ee56241", help="the commit without the gate to compare with (default ee56241)")
    parser.add_argument("--samples", type=int, default=1500, help="timed calls of each read on each side (default 1500)")
    args = parser.parse_args()
    load_at_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as scratch:
        root = Path(scratch)
        progress(f"a worktree of {args.before}")
        before_tree = worktree(args.before, root / "before")
        tokens = root / "tokens.json"  # before the gate, a read token read every catalog ('catalogs' was refused)
        tokens.write_text(json.dumps({"tokens": [{"name": "reader", "token": READ_TOKEN, "access": "read"}]}))
        limited = root / "limited.json"  # after it, the read token is limited to the catalog: every read is decided on it
        limited.write_text(json.dumps({"tokens": [{"name": "reader", "token": READ_TOKEN, "access": "read",
                                                   "catalogs": [CATALOG]}]}))
        tokens.chmod(0o600)
        limited.chmod(0o600)
        sides: dict[str, Side] = {}
        try:
            progress("starting the embedded metastore")
            with EmbeddedMetastore(root / "metastore", events=False) as metastore:
                progress("starting both services")
                sides["before"] = Side("before", root / "home-before", tokens, before_tree)
                sides["after"] = Side("after", root / "home-after", limited, ROOT)
                for side in sides.values():
                    side.request("POST", "/v1/catalogs", {"name": CATALOG, "properties": {
                        "type": "hms", "hive.metastore.uris": metastore.uri, "thrift.access": "write"}},
                        token=side.service.token)
                    side.open_thrift()
                progress("an Iceberg table of 8 appends, made with pyiceberg")
                make_table(sides["after"], metastore)
                load = f"/iceberg/v1/{CATALOG}/namespaces/{NAMESPACE}/tables/{TABLE}"
                plan = f"/v1/catalogs/{CATALOG}/databases/{NAMESPACE}/tables/{TABLE}/plan"
                results: dict[str, Any] = {}
                progress("thrift get_table")
                results["thrift_get_table"] = summary(alternate(
                    {name: (lambda s=s: s.thrift.get_table(NAMESPACE, TABLE)) for name, s in sides.items()}, args.samples))
                progress("Iceberg REST loadTable")
                results["iceberg_load_table"] = summary(alternate(
                    {name: (lambda s=s: s.request("GET", load)) for name, s in sides.items()}, args.samples))
                progress("REST plan")
                results["rest_plan"] = summary(alternate(
                    {name: (lambda s=s: s.request("POST", plan, {})) for name, s in sides.items()}, args.samples // 3))
        finally:
            codes = {name: side.close() for name, side in sides.items()}
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(root / "before")],
                           capture_output=True, check=False)
    save("gate", {"before": args.before, "load_average_at_start": [round(x, 2) for x in load_at_start],
                  "exit_codes": codes, **results})
    return 0 if all(code == 0 for code in codes.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
