"""The service's Hive Metastore thrift endpoint against the metastore itself, all in one run.

One primary embedded metastore (catalog ``hive``) and a second one (catalog ``other``), a CatalogManager on a
temporary home with both, and the endpoint (``ThriftEndpoint``) in this process over it. Every peer is
measured in the same run, on the same metastore, with the same generated client
(MetastoreThriftClient over TBufferedTransport/TBinaryProtocol):

1. ``get_table``: warm get_table from ``--clients`` (32) threads, each its own connection, spread over
   ``--processes`` (4) child processes (so the clients share neither the endpoint's GIL, as they share nothing
   with the metastore's JVM, nor one GIL among all 32),
   against the endpoint and against the metastore in alternating rounds of ``--seconds``: p50/p95 per call,
   calls/s, endpoint/metastore ratios (goal: p50 and p95 at most 0.5), and the metastore calls catalog
   ``hive`` made during the endpoint's warm rounds (goal 0).
2. ``filter``: ``get_partitions_by_filter`` answering all 1,824 partitions of a date-keyed table (like
   TPC-DS store_sales), warm through the endpoint (names cached) against the metastore: median wall time per
   call, ratio (goal <= 1.0), whether both answers are equal, the metastore calls of the warm calls.
3. ``faults``: (a) the second metastore stopped: max latency of get_table on ``hive`` tables through the
   endpoint (goal < 1 s) and of get_all_databases, with ``other``'s names cached and after REFRESH CATALOG other
   (answered from the names it last listed; goal: well under 1 s after the call that finds it down); (b) the primary metastore
   restarted under 8 clients that loop a warm get_table and a call the endpoint always forwards: failed calls of
   each kind (goal: no warm failures), when the first and last of each came (seconds after the stop), and the
   primary catalog's grace (forwarded calls wait out its retries for that long after it is found down, then fail
   at once until its probe finds it back).
4. ``tpcds`` (``_thrift_tpcds.py``): Spark's own Hive support (a PySpark process on each side) running
   bench_tpcds's queries over its Hive layout (``--tpcds-sf`` 0.1, ``--tpcds-queries`` its default set) on a
   metastore of their own, through an endpoint whose manager is made as ``serve`` makes it: wall time ratio per
   query and its geometric mean (goal <= 1.0), rows compared, metastore calls per warm run on each side (goal:
   none through the endpoint); then the metastore restarted on its port under the endpoint side's query loop
   (goal: no failed query). The sections over the two small metastores run (and stop them) first.

    python benchmarks/bench_thrift.py [--sections get_table filter faults tpcds] [--clients 32] [--seconds 5]
        [--tpcds-sf 0.1] [--tpcds-queries default] [--tpcds-repeat 2] [--tpcds-data DIR]

Results are printed and saved to benchmarks/results/thrift.json (``--results NAME``: NAME.json, so a run of some
sections does not replace the figures of a whole run).
"""

from __future__ import annotations

import argparse
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import progress, save
from _thrift_load import connect, percentiles
from _thrift_setup import DATABASE, FIRST_DATE_KEY, OTHER_DATABASE, PARTITIONED, Rig, calls_between
from _thrift_tpcds import lines as tpcds_lines
from _thrift_tpcds import tpcds

from hms_catalog.client.metastore import MetastoreClient
from service.thrift.health import grace_seconds

_LOAD = Path(__file__).resolve().with_name("_thrift_load.py")
GOAL_LATENCY_RATIO = 0.5
GOAL_FILTER_RATIO = 1.0
FAULT_CLIENTS = 8
NOTES = ("Every figure shares the machine's cores (see cores and the load averages; other work on the machine falls on "
         "both sides alike, since each comparison alternates its sides in the same run). The endpoint runs in this "
         "process; the get_table clients run in a child process. A forwarded call that fails while the metastore is "
         "down reaches the client as the endpoint raised it, a MetaException, or as TApplicationException where the "
         "method declares no MetaException (get_current_notificationEventId). TPC-DS: a query's ratio from one measured "
         "run per side moves by tens of percent on 2 shared cores; the geometric mean over the queries is the figure.")


def _load(port: int, rig: Rig, clients: int, seconds: float, **extra: Any) -> dict[str, Any]:
    config = {"port": port, "database": DATABASE, "tables": rig.tables, "clients": clients, "seconds": seconds, **extra}
    done = subprocess.run([sys.executable, str(_LOAD), json.dumps(config)], capture_output=True, text=True, timeout=seconds + 600)
    if done.returncode != 0:
        raise SystemExit(f"the load process failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _spread_load(port: int, rig: Rig, clients: int, seconds: float, processes: int) -> dict[str, Any]:
    """``clients`` threads over ``processes`` child processes started together (the client threads of one
    process queue for its GIL, which would add their wait to every measured call), merged into one answer."""
    start_at = time.time() + 3.0  # time for every child to import and connect
    config = {"port": port, "database": DATABASE, "tables": rig.tables, "seconds": seconds, "start_at": start_at,
              "samples": True}
    shares = [clients // processes + (1 if index < clients % processes else 0) for index in range(processes)]
    children = [subprocess.Popen([sys.executable, str(_LOAD), json.dumps(config | {"clients": share})],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for share in shares if share]
    answers = []
    for child in children:
        out, err = child.communicate(timeout=seconds + 600)
        if child.returncode != 0:
            raise SystemExit(f"a load process failed ({child.returncode}):\n{err[-3000:]}")
        answers.append(json.loads(out.strip().splitlines()[-1]))
    merged = [value for answer in answers for value in answer.pop("samples")]
    elapsed = max(answer["seconds"] for answer in answers)
    return {"clients": clients, "processes": len(children), "seconds": elapsed, "calls": len(merged),
            "calls_per_second": round(len(merged) / elapsed, 1), **percentiles(merged),
            "failures": {kind: sum(answer["failures"][kind] for answer in answers) for kind in ("warm", "cold", "connect")}}


def _ratio(top: float | None, bottom: float | None) -> float | None:
    return round(top / bottom, 3) if top is not None and bottom else None


def get_table(rig: Rig, args: argparse.Namespace) -> dict[str, Any]:
    sides = {"metastore": rig.metastore_port, "endpoint": rig.endpoint_port}
    for side, port in sides.items():  # warm-up: the endpoint's caches fill, the JVM compiles its paths
        progress(f"get_table warm-up on the {side}")
        _load(port, rig, args.clients, args.warmup)
    rounds: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    before = rig.hive_calls()
    for number in range(args.rounds):
        for side, port in sides.items():
            progress(f"get_table round {number + 1} on the {side} ({args.clients} clients, {args.seconds:g} s)")
            rounds[side].append(_spread_load(port, rig, args.clients, args.seconds, args.processes))
    calls = calls_between(before, rig.hive_calls())
    summary = {side: {key: statistics.median(run[key] for run in runs) for key in ("p50_ms", "p95_ms", "p99_ms", "calls_per_second")}
               | {"failures": sum(sum(run["failures"].values()) for run in runs)} for side, runs in rounds.items()}
    return {
        "clients": args.clients, "client_processes": args.processes, "seconds_per_round": args.seconds, "rounds": args.rounds,
        "tables": len(rig.tables),
        "summary": summary,
        "ratio_p50": _ratio(summary["endpoint"]["p50_ms"], summary["metastore"]["p50_ms"]),
        "ratio_p95": _ratio(summary["endpoint"]["p95_ms"], summary["metastore"]["p95_ms"]),
        "ratio_calls_per_second": _ratio(summary["endpoint"]["calls_per_second"], summary["metastore"]["calls_per_second"]),
        "goal_latency_ratio_at_most": GOAL_LATENCY_RATIO,
        "metastore_calls_during_warm_rounds": calls, "goal_metastore_calls": 0,
        "runs": rounds,
    }


def _key(partition: Any) -> tuple[str, ...]:
    return tuple(partition.values or ())


def partitions_by_filter(rig: Rig, args: argparse.Namespace) -> dict[str, Any]:
    text = f"ss_sold_date_sk >= {FIRST_DATE_KEY}"
    with connect(rig.endpoint_port, 120_000) as endpoint, connect(rig.metastore_port, 120_000) as metastore:
        names = endpoint.get_partition_names(DATABASE, PARTITIONED, -1)  # the table's names into the cache
        started = time.perf_counter()
        endpoint.get_partitions_by_filter(DATABASE, PARTITIONED, text, -1)  # the partitions into theirs
        first = time.perf_counter() - started
        metastore.get_partitions_by_filter(DATABASE, PARTITIONED, text, -1)  # the metastore warmed too
        times: dict[str, list[float]] = {"metastore": [], "endpoint": []}
        answers: dict[str, list[Any]] = {}
        before = rig.hive_calls()
        for _ in range(args.repeat):
            for side, client in (("metastore", metastore), ("endpoint", endpoint)):
                started = time.perf_counter()
                answers[side] = client.get_partitions_by_filter(DATABASE, PARTITIONED, text, -1)
                times[side].append(time.perf_counter() - started)
        calls = calls_between(before, rig.hive_calls())
    ours, theirs = (sorted(answers[side], key=_key) for side in ("endpoint", "metastore"))
    differing = [name for name in sorted(vars(theirs[0])) if getattr(ours[0], name) != getattr(theirs[0], name)] \
        if ours and theirs else []
    medians = {side: round(statistics.median(values), 4) for side, values in times.items()}
    return {
        "filter": text, "partition_names": len(names), "partitions_answered": {side: len(answers[side]) for side in answers},
        "answers_equal": ours == theirs, "same_values": [_key(p) for p in ours] == [_key(p) for p in theirs],
        "fields_differing_in_first_partition": differing,
        "seconds_median": medians, "seconds_all": {side: [round(v, 4) for v in values] for side, values in times.items()},
        "endpoint_first_call_seconds": round(first, 4),
        "ratio": _ratio(medians["endpoint"], medians["metastore"]), "goal_ratio_at_most": GOAL_FILTER_RATIO,
        "metastore_calls_during_warm_calls": calls,
    }


def _timed_databases(port: int, times: int) -> list[dict[str, Any]]:
    found = []
    with connect(port) as client:
        for _ in range(times):
            started = time.perf_counter()
            names = client.get_all_databases()
            found.append({"seconds": round(time.perf_counter() - started, 4),
                          "other_listed": any(name.startswith("other__") for name in names), "databases": len(names)})
    return found


def faults(rig: Rig, args: argparse.Namespace) -> dict[str, Any]:
    _load(rig.endpoint_port, rig, FAULT_CLIENTS, 1.0)  # every table warm, whatever sections ran before
    listed_before = _timed_databases(rig.endpoint_port, 1)[0]
    with connect(rig.endpoint_port) as client:
        client.get_table(f"other__{OTHER_DATABASE}", "t000")
    progress("stopping the second metastore (catalog other)")
    rig.second.stop()
    databases_after = _timed_databases(rig.endpoint_port, 5)
    warm_while_down = _load(rig.endpoint_port, rig, FAULT_CLIENTS, 3.0)
    databases_later = _timed_databases(rig.endpoint_port, 3)
    assert rig.manager is not None
    rig.manager.catalog("other").refresh()  # REFRESH CATALOG other: its cached names gone, the listing must ask
    databases_cold = _timed_databases(rig.endpoint_port, 3)
    second_down = {
        "get_all_databases_before_stop": listed_before, "get_all_databases_after_stop": databases_after + databases_later,
        "get_all_databases_max_seconds": max(item["seconds"] for item in databases_after + databases_later),
        "get_all_databases_after_refresh_of_other": databases_cold,
        "get_all_databases_after_refresh_max_seconds": max(item["seconds"] for item in databases_cold),
        "endpoint_reports_unreachable": rig.endpoint.health().get("unreachable") if rig.endpoint is not None else None,
        "get_table_hive_while_other_down": warm_while_down,
        "get_table_max_ms": warm_while_down["max_ms"], "goal_max_seconds": 1.0,
    }

    stop_file = rig.scratch / "stop-restart-load"
    config = {"port": rig.endpoint_port, "database": DATABASE, "tables": rig.tables, "clients": FAULT_CLIENTS,
              "seconds": 600.0, "cold": True, "stop_file": str(stop_file)}
    load = subprocess.Popen([sys.executable, str(_LOAD), json.dumps(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3.0)
        progress("restarting the primary metastore under 8 clients")
        before = rig.hive_calls()
        began, stopped_at = time.perf_counter(), time.time()
        rig.primary.stop()
        stopped = time.perf_counter() - began
        rig.primary.start()
        restarted = time.perf_counter() - began
        time.sleep(5.0)
    finally:
        stop_file.touch()
        out, err = load.communicate(timeout=120)
    if load.returncode != 0:
        raise SystemExit(f"the restart load failed:\n{err[-3000:]}")
    during = dict(json.loads(out.strip().splitlines()[-1]))
    hive = rig.manager.catalog("hive").client if rig.manager is not None else None
    return {
        "second_metastore_down": second_down,
        "primary_restart": {
            "clients": FAULT_CLIENTS, "stop_seconds": round(stopped, 2), "down_until_answering_seconds": round(restarted, 2),
            "same_port": rig.primary.uri.endswith(f":{rig.metastore_port}"),
            "warm_calls": during["calls"], "warm_failures": during["failures"]["warm"],
            "warm_max_ms": during["max_ms"], "warm_p95_ms": during["p95_ms"],
            "cold_calls": during["cold_calls"], "cold_failures": during["failures"]["cold"], "cold": during["cold"],
            "connect_failures": during["failures"]["connect"], "first_errors": during["first_errors"],
            "failures_seconds_after_stop": {kind: [round(when - stopped_at, 2) for when in span]
                                            for kind, span in during["failed_at"].items()},
            "failed_calls": during["failed_calls"],
            "grace_seconds": grace_seconds(hive.pool) if isinstance(hive, MetastoreClient) else None,
            "metastore_calls_by_catalog_hive": calls_between(before, rig.hive_calls()), "goal_warm_failures": 0,
        },
    }


SECTIONS: dict[str, Callable[[Rig, argparse.Namespace], dict[str, Any]]] = {
    "get_table": get_table, "filter": partitions_by_filter, "faults": faults,
}
ALL_SECTIONS = [*SECTIONS, "tpcds"]  # tpcds has a metastore of its own: it runs after the rig is gone


def table(report: dict[str, Any]) -> str:
    """The figures that answer the goals, one line each."""
    lines = [f"thrift endpoint vs metastore ({report['cores']} cores)"]
    if "get_table" in report:
        part = report["get_table"]
        for side in ("endpoint", "metastore"):
            figures = part["summary"][side]
            lines.append(f"  get_table x{part['clients']} {side:<9} p50 {figures['p50_ms']:>8.3f} ms  p95 {figures['p95_ms']:>8.3f} ms"
                         f"  {figures['calls_per_second']:>9.1f} calls/s  failures {figures['failures']}")
        lines.append(f"  get_table ratios endpoint/metastore: p50 {part['ratio_p50']}  p95 {part['ratio_p95']}  calls/s "
                     f"{part['ratio_calls_per_second']}  (goal latency <= {GOAL_LATENCY_RATIO}); metastore calls while warm: "
                     f"{part['metastore_calls_during_warm_rounds']['total']}")
    if "filter" in report:
        part = report["filter"]
        lines.append(f"  get_partitions_by_filter ({part['partitions_answered']['endpoint']} partitions): endpoint "
                     f"{part['seconds_median']['endpoint']} s  metastore {part['seconds_median']['metastore']} s  ratio {part['ratio']} "
                     f"(goal <= {GOAL_FILTER_RATIO}); equal answers {part['answers_equal']}; metastore calls "
                     f"{part['metastore_calls_during_warm_calls']['total']}")
    if "faults" in report:
        down, restart = report["faults"]["second_metastore_down"], report["faults"]["primary_restart"]
        lines.append(f"  second metastore down: get_table max {down['get_table_max_ms']} ms; get_all_databases max "
                     f"{down['get_all_databases_max_seconds']} s, other listed after stop: "
                     f"{[item['other_listed'] for item in down['get_all_databases_after_stop']]}; after REFRESH CATALOG other: max "
                     f"{down['get_all_databases_after_refresh_max_seconds']} s, other listed "
                     f"{[item['other_listed'] for item in down['get_all_databases_after_refresh_of_other']]}")
        lines.append(f"  primary restarted ({restart['down_until_answering_seconds']} s): warm {restart['warm_calls']} calls, "
                     f"{restart['warm_failures']} failed (max {restart['warm_max_ms']} ms); cold {restart['cold_calls']} calls, "
                     f"{restart['cold_failures']} failed ({restart['failed_calls'].get('cold', {}).get('at_once', 0)} at once; "
                     f"at {restart['failures_seconds_after_stop'].get('cold')} s after the stop; grace {restart['grace_seconds']} s); "
                     f"reconnect failures {restart['connect_failures']}")
    if "tpcds" in report:
        lines += tpcds_lines(report["tpcds"])
    return "\n".join(lines)


def _section(run: Callable[..., dict[str, Any]], *arguments: Any) -> dict[str, Any]:
    try:
        return run(*arguments)
    except Exception as error:  # noqa: BLE001 - one section's failure is reported; the others still run
        return {"error": f"{type(error).__name__}: {error}"[:2000]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", nargs="+", choices=ALL_SECTIONS, default=ALL_SECTIONS)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each get_table round")
    parser.add_argument("--processes", type=int, default=4, help="child processes the get_table clients are spread over")
    parser.add_argument("--warmup", type=float, default=8.0, help="unmeasured get_table seconds per side first")
    parser.add_argument("--rounds", type=int, default=3, help="alternating get_table rounds per side")
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=1824)
    parser.add_argument("--repeat", type=int, default=5, help="measured calls per side (filter)")
    parser.add_argument("--tpcds-sf", type=float, default=0.1, help="TPC-DS scale factor")
    parser.add_argument("--tpcds-queries", default="default", help="bench_tpcds's --queries: numbers, ranges or a named set")
    parser.add_argument("--tpcds-repeat", type=int, default=2, help="measured runs per query and side, after a warm-up")
    parser.add_argument("--tpcds-data", type=Path, default=None,
                        help="keep the generated data and its metastore in DIR/sf<scale> and reuse them (default: temporary)")
    parser.add_argument("--fault-lead", type=float, default=20.0, help="seconds of queries before the metastore stops")
    parser.add_argument("--fault-after", type=float, default=30.0, help="seconds of queries after it answers again")
    parser.add_argument("--results", default="thrift", help="file name (without .json) under benchmarks/results")
    args = parser.parse_args()
    settings = {key: str(value) if isinstance(value, Path) else value for key, value in vars(args).items()}
    report: dict[str, Any] = {"cores": os.cpu_count(), "settings": settings,
                              "load_average_before": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory(prefix="bench-thrift-") as scratch:
        if any(name in SECTIONS for name in args.sections):
            progress("starting two metastores, their tables and the endpoint")
            rig = Rig(Path(scratch), args.tables, args.partitions)
            try:
                for name in (name for name in args.sections if name in SECTIONS):
                    progress(f"section {name}")
                    report[name] = _section(SECTIONS[name], rig, args)
            finally:
                rig.close()
        if "tpcds" in args.sections:
            progress("section tpcds")
            report["tpcds"] = _section(tpcds, Path(scratch), args)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    report["not_run"] = [name for name in ALL_SECTIONS if name not in args.sections]
    report["notes"] = NOTES
    save(args.results, report)
    failed = {key for key, value in report.items() if isinstance(value, dict) and "error" in value}
    print(table({key: value for key, value in report.items() if key not in failed}))
    for key in sorted(failed):
        print(f"  {key}: {report[key]['error'][:300]}")


if __name__ == "__main__":
    main()
