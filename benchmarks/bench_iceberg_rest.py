"""The service's Iceberg REST endpoint (``/iceberg``) against pyiceberg's ``HiveCatalog`` on the same metastore.

An embedded metastore and a real ``hms-catalog serve`` process on a temporary home whose catalog ``ice`` is that
metastore; both are stopped whatever happens. Every peer is measured in the same run, on the same tables:

1. ``load``: warm ``load_table`` from ``--clients`` (16) clients, each its own catalog, spread over ``--processes``
   (4) child processes (``_iceberg_rest_worker.py``), through the endpoint (pyiceberg's ``RestCatalog``) and
   directly on the metastore (pyiceberg's ``HiveCatalog``: get_table, then the metadata file read and parsed), in
   alternating rounds of ``--seconds``: p50/p95 per load, loads/s, endpoint/HiveCatalog ratios (goal: p50 at most
   0.2x).
2. ``commits``: ``--appenders`` (4) processes, each its own catalog, appending ``--batch-rows`` rows per commit
   for ``--commit-seconds`` (retrying on CommitFailedException), through the endpoint and then through
   HiveCatalog on a table of their own: commits/s, retries, and the rows and snapshots counted after (none lost).
3. ``duckdb`` (``_iceberg_rest_duckdb.py``): DuckDB scanning a ``store_sales``-like Iceberg table through the
   endpoint against DuckDB reading the same Parquet files directly.
4. ``planning`` (``_iceberg_rest_planning.py``): pyiceberg's ``plan_files()`` with ``scan-planning-mode=server``
   against its own planning, cold and warm, a partition filter and a data-column filter, on a table of
   ``--plan-appends`` (2,000) appends of ``--plan-files`` (10) data files each on moto's S3 and on local disk: the
   same files checked, server/client ratios (goal: warm at most 0.2x on S3), and the S3 requests the client makes
   per scan with and without server planning (counted by a proxy in front of moto).

    python benchmarks/bench_iceberg_rest.py [--sections load commits duckdb planning] [--clients 16] [--seconds 5]
        [--commit-seconds 20] [--duckdb-rows 1000000] [--plan-appends 2000] [--plan-files 10] [--plan-repeat 3]

Results are printed and saved to benchmarks/results/iceberg_rest.json (a run of some sections only: to
iceberg_rest_<sections>.json, e.g. iceberg_rest_planning.json).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Service, progress, save
from _iceberg_rest_duckdb import duckdb_scan
from _iceberg_rest_planning import plan_server_and_client
from _thrift_load import percentiles

from hms_catalog.metastore import EmbeddedMetastore

_WORKER = Path(__file__).resolve().with_name("_iceberg_rest_worker.py")
CATALOG = "ice"
NAMESPACE = "bench_rest"
GOAL_LOAD_RATIO = 0.2
SIDES = ("rest", "hive")


class Rig:
    """The metastore, the service over it, and each side's pyiceberg catalog properties."""

    def __init__(self, scratch: Path) -> None:
        self.metastore = EmbeddedMetastore(scratch / "metastore")
        self.service: Service | None = None
        self.metastore.start()
        try:
            home = scratch / "home"
            home.mkdir()
            self.service = Service(home)
            client = self.service.client()
            try:
                client.create_catalog(CATALOG, {"type": "hms", "hive.metastore.uris": self.metastore.uri})
            finally:
                client.close()
        except BaseException:
            self.close()
            raise
        self.properties = {
            "rest": {"uri": f"{self.service.url}/iceberg", "warehouse": CATALOG, "token": self.service.token},
            "hive": {"uri": self.metastore.uri, "hive.hive2-compatible": "true"},
        }

    def catalog(self, side: str) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            if side == "rest":
                from pyiceberg.catalog.rest import RestCatalog

                return RestCatalog("bench", **self.properties["rest"])
            from pyiceberg.catalog.hive import HiveCatalog

            return HiveCatalog("bench", **self.properties["hive"])

    def close(self) -> None:
        if self.service is not None:
            with contextlib.suppress(Exception):
                self.service.stop()
        with contextlib.suppress(Exception):
            self.metastore.stop()


def _children(configs: list[dict[str, Any]], timeout: float) -> list[dict[str, Any]]:
    """One worker process per config, started together; their answers."""
    children = [subprocess.Popen([sys.executable, str(_WORKER), json.dumps(config)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for config in configs]
    answers = []
    for child in children:
        out, err = child.communicate(timeout=timeout)
        if child.returncode != 0:
            raise SystemExit(f"a worker process failed ({child.returncode}):\n{err[-3000:]}")
        answers.append(json.loads(out.strip().splitlines()[-1]))
    return answers


def _ratio(top: float | None, bottom: float | None) -> float | None:
    return round(top / bottom, 3) if top is not None and bottom else None


def _load_round(rig: Rig, side: str, args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    shares = [args.clients // args.processes + (1 if i < args.clients % args.processes else 0) for i in range(args.processes)]
    start_at = time.time() + 6.0  # every child imported pyiceberg and made its first load by then
    configs = [{"mode": "load", "side": side, "catalog": rig.properties[side], "table": [NAMESPACE, "loaded"],
                "threads": share, "seconds": seconds, "start_at": start_at} for share in shares if share]
    answers = _children(configs, seconds + 600)
    merged = [value for answer in answers for value in answer["samples"]]
    elapsed = max(answer["seconds"] for answer in answers)
    return {"loads": len(merged), "seconds": round(elapsed, 2), "loads_per_second": round(len(merged) / elapsed, 1),
            **percentiles(merged), "failures": sum(answer["failures"] for answer in answers)}


def load(rig: Rig, args: argparse.Namespace) -> dict[str, Any]:
    import pyarrow as pa

    rest = rig.catalog("rest")
    table = rest.create_table((NAMESPACE, "loaded"), schema=pa.schema([("id", pa.int64()), ("name", pa.string())]))
    for index in range(args.snapshots):  # a table with some history: its metadata lists every snapshot
        table.append(pa.table({"id": [index], "name": [f"row {index}"]}))
    metadata_bytes = os.path.getsize(urlsplit(table.metadata_location).path)
    rest.close()
    for side in SIDES:
        progress(f"load warm-up through {side}")
        _load_round(rig, side, args, args.warmup)
    rounds: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    for number in range(args.rounds):
        for side in SIDES:
            progress(f"load round {number + 1} through {side} ({args.clients} clients, {args.seconds:g} s)")
            rounds[side].append(_load_round(rig, side, args, args.seconds))
    summary = {side: {key: statistics.median(run[key] for run in runs) for key in ("p50_ms", "p95_ms", "loads_per_second")}
               | {"failures": sum(run["failures"] for run in runs)} for side, runs in rounds.items()}
    return {
        "clients": args.clients, "client_processes": args.processes, "seconds_per_round": args.seconds,
        "rounds": args.rounds, "snapshots_in_table": args.snapshots, "metadata_file_bytes": metadata_bytes,
        "summary": summary,
        "ratio_p50": _ratio(summary["rest"]["p50_ms"], summary["hive"]["p50_ms"]),
        "ratio_p95": _ratio(summary["rest"]["p95_ms"], summary["hive"]["p95_ms"]),
        "ratio_loads_per_second": _ratio(summary["rest"]["loads_per_second"], summary["hive"]["loads_per_second"]),
        "goal_ratio_p50_at_most": GOAL_LOAD_RATIO, "runs": rounds,
    }


def _appenders(rig: Rig, side: str, args: argparse.Namespace) -> dict[str, Any]:
    import pyarrow as pa

    name = f"appends_{side}"
    setup = rig.catalog(side)
    setup.create_table((NAMESPACE, name), schema=pa.schema([pa.field("worker", pa.int64(), False),
                                                            pa.field("n", pa.int64(), False)]))
    start_at = time.time() + 6.0
    configs = [{"mode": "append", "side": side, "catalog": rig.properties[side], "table": [NAMESPACE, name],
                "worker": worker, "rows": args.batch_rows, "seconds": args.commit_seconds, "start_at": start_at}
               for worker in range(args.appenders)]
    answers = _children(configs, args.commit_seconds + 600)
    table = setup.load_table((NAMESPACE, name))
    data = table.scan().to_arrow()
    expected = sorted((answer_worker, n) for answer_worker, answer in enumerate(answers) for n in range(answer["rows"]))
    found = sorted(zip(data.column("worker").to_pylist(), data.column("n").to_pylist(), strict=True))
    commits = sum(answer["commits"] for answer in answers)
    snapshots = len(list(table.snapshots()))
    elapsed = max(answer["seconds"] for answer in answers)
    with contextlib.suppress(Exception):
        getattr(setup, "close", lambda: None)()
    return {
        "commits": commits, "seconds": round(elapsed, 2), "commits_per_second": round(commits / elapsed, 2),
        "retries": sum(answer["retries"] for answer in answers),
        "gave_up_after_50_tries": sum(answer["gave_up"] for answer in answers),
        **{f"commit_{key}": value for key, value in percentiles([s for a in answers for s in a["samples"]]).items()},
        "rows_expected": len(expected), "rows_found": data.num_rows, "rows_equal": expected == found,
        "snapshots": snapshots, "none_lost": expected == found and snapshots == commits,
        "per_appender": [{key: answer[key] for key in ("commits", "retries")} for answer in answers],
    }


def commits(rig: Rig, args: argparse.Namespace) -> dict[str, Any]:
    measured = {}
    for side in SIDES:
        progress(f"commits: {args.appenders} appenders through {side} for {args.commit_seconds:g} s")
        measured[side] = _appenders(rig, side, args)
    return {"appenders": args.appenders, "rows_per_commit": args.batch_rows, **measured,
            "ratio_commits_per_second": _ratio(measured["rest"]["commits_per_second"], measured["hive"]["commits_per_second"])}


def duckdb(rig: Rig, args: argparse.Namespace) -> dict[str, Any]:
    assert rig.service is not None
    rest = rig.catalog("rest")
    try:
        return duckdb_scan(rest, rig.service.url, rig.service.token, CATALOG, NAMESPACE, args.scratch, rows=args.duckdb_rows,
                           dates=args.duckdb_dates, appends=args.duckdb_appends, repeat=args.repeat)
    finally:
        rest.close()


def planning(rig: Rig, args: argparse.Namespace) -> dict[str, Any]:
    assert rig.service is not None
    return plan_server_and_client(rig.service, args.scratch / "planning", appends=args.plan_appends, files=args.plan_files,
                                  repeat=args.plan_repeat)


SECTIONS = {"load": load, "commits": commits, "duckdb": duckdb, "planning": planning}


def _table(report: dict[str, Any]) -> str:
    lines = [f"{'measure':44} {'endpoint':>12} {'peer':>12} {'ratio':>7}"]
    if "load" in report:
        s = report["load"]["summary"]
        for key in ("p50_ms", "p95_ms", "loads_per_second"):
            lines.append(f"{'loadTable ' + key + ' (peer: HiveCatalog)':44} {s['rest'][key]:>12} {s['hive'][key]:>12} "
                         f"{_ratio(s['rest'][key], s['hive'][key]):>7}")
    if "commits" in report:
        c = report["commits"]
        lines.append(f"{'commits/s, 4 appenders (peer: HiveCatalog)':44} {c['rest']['commits_per_second']:>12} "
                     f"{c['hive']['commits_per_second']:>12} {c['ratio_commits_per_second']:>7}")
        for side in SIDES:
            lines.append(f"  {side}: {c[side]['commits']} commits, {c[side]['retries']} retries, none lost: {c[side]['none_lost']}")
    if "duckdb" in report:
        d = report["duckdb"]
        for name in ("count", "aggregate_30_dates"):
            lines.append(f"{'DuckDB ' + name + ' s (peer: read_parquet)':44} {d[name]['iceberg_through_endpoint_seconds']:>12} "
                         f"{d[name]['parquet_direct_seconds']:>12} {d[name]['ratio']:>7}")
        lines.append(f"  {d['rows']} rows in {d['data_files']} files; ATTACH {d['attach_seconds']} s, "
                     f"first metadata load {d['first_metadata_load_seconds']} s")
    if "planning" in report:
        p = report["planning"]
        for store in ("s3", "local"):
            for label, modes in p[store].items():
                # cold: each side's first plan of the table (what ratio_cold compares); warm: the medians
                for kind, key in (("cold", "first_plan_seconds"), ("warm", "warm_median_seconds")):
                    lines.append(f"{f'plan_files {kind} s, {label}, {store} (peer: client)':44} "
                                 f"{modes['server'][key]:>12} {modes['client'][key]:>12} {modes['ratio_' + kind]:>7}")
                lines.append(f"  {modes['server']['files']} files, same: {modes['same_files']}; client S3 requests per "
                             f"scan: {modes['server']['client_s3_requests_per_cold_scan']} (server planning), "
                             f"{modes['client']['client_s3_requests_per_cold_scan']} (client planning)")
        lines.append(f"  {p['appends']} appends, {p['data_files']} data files; goal met: {p['goal_met']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", nargs="+", choices=list(SECTIONS), default=list(SECTIONS))
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--snapshots", type=int, default=20)
    parser.add_argument("--appenders", type=int, default=4)
    parser.add_argument("--batch-rows", type=int, default=10)
    parser.add_argument("--commit-seconds", type=float, default=20.0)
    parser.add_argument("--duckdb-rows", type=int, default=1_000_000)
    parser.add_argument("--duckdb-dates", type=int, default=200)
    parser.add_argument("--duckdb-appends", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--plan-appends", type=int, default=2000)
    parser.add_argument("--plan-files", type=int, default=10)
    parser.add_argument("--plan-repeat", type=int, default=3)
    args = parser.parse_args()
    report: dict[str, Any] = {"cores": os.cpu_count(), "load_average_before": list(os.getloadavg())}
    with tempfile.TemporaryDirectory(prefix="bench-iceberg-rest-") as scratch:
        args.scratch = Path(scratch)
        rig = Rig(Path(scratch))
        try:
            setup = rig.catalog("rest")
            setup.create_namespace(NAMESPACE)
            setup.close()
            for name in args.sections:
                progress(f"section {name}")
                report[name] = SECTIONS[name](rig, args)
        finally:
            rig.close()
    report["load_average_after"] = list(os.getloadavg())
    report["notes"] = ("Clients run in child processes; the service is a process of its own and the metastore a JVM, all "
                       "on the same cores (see cores and the load averages: other work on the machine falls on both "
                       "sides of each comparison, which alternate or follow each other in the same run).")
    # a run of some sections keeps its own file, so that it does not replace the figures of a full run
    save("iceberg_rest" if set(args.sections) >= set(SECTIONS) else "_".join(("iceberg_rest", *args.sections)), report)
    print(_table(report))


if __name__ == "__main__":
    main()
