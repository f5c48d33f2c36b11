"""TPC-DS through the thrift endpoint and straight on the metastore, with Spark's own Hive support (section ``tpcds``).

bench_tpcds's data (``_tpcds_data``: DuckDB's dsdgen, loaded as Parquet Hive tables in database ``tpcds``, the six
fact tables partitioned by their date key) on an embedded metastore of its own, a CatalogManager made as ``serve``
makes it (a SharedState on the home's store, events followed as a service follows them) with catalog ``hive`` on
that metastore, and the endpoint in this process over it. Two PySpark processes with Spark's own Hive support
(tests/support/spark_hive_client.py), one with ``hive.metastore.uris`` at the endpoint, one at the metastore, run
bench_tpcds's query texts (sqlglot's Spark SQL). Each query runs once on each side to warm up, then ``--repeat``
times per side, alternating; the best time is kept, the rows of the warm-up runs are compared.

Metastore calls per warm run: through the endpoint, the calls catalog ``hive`` made while the endpoint side ran;
directly, the metastore's audit log lines written while the direct side ran, less the calls catalog ``hive`` made in
that window (its event follower polls on its own clock). The follower's polls are counted apart from the query's.

Then the fault run: the endpoint side loops over the queries while the metastore is stopped and restarted on its
port; every query that fails is counted, and those that ran while the metastore was down are named.

Loading the data into the metastore runs in a child PySpark process (``python _thrift_tpcds.py load DIR``), so
its JVM is gone before anything is measured.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from _common import progress
from _thrift_setup import calls_between, port_of
from _tpcds_data import DATABASE, generate, load_hive, query_texts, scale_directory
from _tpcds_queries import compare, parse_selection, to_spark, without_limit

from hms_catalog.manager import CatalogManager, EventFollowing
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.state import SharedState, open_definitions
from service.audit import AuditLog
from service.thrift import ThriftEndpoint, ThriftSettings

__all__ = ["FOLLOWER_METHODS", "TpcdsRig", "tpcds"]

# What catalog hive's event follower asks on its own clock, whatever the queries do.
FOLLOWER_METHODS = frozenset({"get_next_notification", "get_current_notificationEventId", "get_notification_events_count"})
SIDES = ("endpoint", "metastore")
GOAL_RATIO = 1.0  # geometric mean of endpoint / metastore wall time, at most
_SPARK_CONF = {"spark.driver.memory": "2g"}


def _split(calls: dict[str, Any]) -> dict[str, Any]:
    """A calls_between answer split into the queries' calls and the event follower's."""
    by_method = calls["by_method"]
    query = {method: count for method, count in by_method.items() if method not in FOLLOWER_METHODS}
    follower = {method: count for method, count in by_method.items() if method in FOLLOWER_METHODS}
    return {"total": sum(query.values()), "by_method": query, "follower": sum(follower.values())}


class TpcdsRig:
    """The TPC-DS metastore (audited), a manager made as ``serve`` makes it, and the endpoint over it."""

    def __init__(self, directory: Path, scratch: Path) -> None:
        self.metastore = EmbeddedMetastore(directory / "metastore", heap="1g", audit=True)
        self.endpoint: ThriftEndpoint | None = None
        self.manager: CatalogManager | None = None
        self.scratch = scratch
        try:
            self.metastore.start()
            home = scratch / "tpcds-home"
            home.mkdir()
            definitions = open_definitions(home, None)
            self.manager = CatalogManager(definitions, shared=SharedState(definitions))
            self.manager.events = EventFollowing.SERVE  # as ServiceState sets it
            self.manager.create("hive", {"type": "hms", "hive.metastore.uris": self.metastore.uri})
            self.endpoint = ThriftEndpoint(self.manager, AuditLog(home / "audit.log"), ThriftSettings(port=0)).start()
            self.endpoint_port = int(self.endpoint.address[1])
            self.metastore_port = port_of(self.metastore.uri)
        except BaseException:
            self.close()
            raise

    def hive_calls(self) -> dict[str, int]:
        assert self.manager is not None
        return dict(self.manager.catalog("hive").metrics().calls)

    def audit_line(self) -> int:
        return self.metastore.audited_calls(10**12)[0]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.endpoint is not None:
                self.endpoint.stop()
        with contextlib.suppress(Exception):
            if self.manager is not None:
                self.manager.close()
        with contextlib.suppress(Exception):
            self.metastore.stop()


def prepare(data: Path, scale_factor: float) -> tuple[Path, dict[str, Any]]:
    """The data generated and loaded under ``data`` (kept there and reused, as bench_tpcds's ``--data``)."""
    directory = scale_directory(data, scale_factor)
    directory.mkdir(parents=True, exist_ok=True)
    rows = generate(directory, scale_factor)
    if not (directory / "loaded-hive.json").is_file():
        progress("loading the TPC-DS tables into the metastore (a child PySpark process)")
        with EmbeddedMetastore(directory / "metastore", heap="1g") as metastore:
            done = subprocess.run([sys.executable, __file__, "load", str(directory), metastore.uri, str(metastore.warehouse)],
                                  timeout=3600)
        if done.returncode != 0:
            raise SystemExit(f"loading TPC-DS failed ({done.returncode})")
    tables = json.loads((directory / "loaded-hive.json").read_text())["tables"]
    return directory, {"rows": rows, "tables": tables}


def _load(directory: Path, uri: str, warehouse: str) -> None:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("bench-thrift-tpcds-load")
             .config("spark.sql.catalogImplementation", "hive").config("spark.hadoop.hive.metastore.uris", uri)
             .config("spark.sql.warehouse.dir", Path(warehouse).as_uri())
             .config("spark.hadoop.hive.exec.dynamic.partition.mode", "nonstrict")
             .config("spark.hadoop.hive.exec.max.dynamic.partitions", "100000")
             .config("spark.hadoop.hive.exec.max.dynamic.partitions.pernode", "100000")
             .config("spark.sql.session.timeZone", "UTC").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "3g").config("spark.pyspark.python", sys.executable)
             .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={directory}")
             .enableHiveSupport().getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        load_hive(spark, directory)
    finally:
        spark.stop()


def _timed(client: Any, sql: str) -> tuple[float, list[tuple[Any, ...]]]:
    started = time.perf_counter()
    rows = client.sql(sql)
    return time.perf_counter() - started, rows


def _same_rows(clients: dict[str, Any], sql: str, rows: dict[str, list[tuple[Any, ...]]]) -> tuple[bool, str]:
    """bench_tpcds's comparison: multisets, numbers within 1e-6, ties at a final LIMIT settled by unlimited runs."""
    same, how = compare(rows["endpoint"], rows["metastore"])
    unlimited = None if same else without_limit(sql)
    if unlimited is None:
        return same, how
    full = [clients[side].sql(unlimited) for side in SIDES]
    return compare(rows["endpoint"], rows["metastore"], (full[0], full[1]))


def _query(rig: TpcdsRig, clients: dict[str, Any], sql: str, repeat: int) -> dict[str, Any]:
    """One query: warm-up on both sides, then ``repeat`` runs per side alternating, each with its metastore calls."""
    rows = {side: clients[side].sql(sql) for side in SIDES}  # warm-up: caches on both sides, JIT, file listings
    times: dict[str, list[float]] = {side: [] for side in SIDES}
    through: dict[str, int] = {}
    direct: dict[str, int] = {}
    follower = 0
    for _ in range(repeat):
        for side in SIDES:
            hive_before, line = rig.hive_calls(), rig.audit_line()
            seconds, _ = _timed(clients[side], sql)
            times[side].append(seconds)
            raw = calls_between(hive_before, rig.hive_calls())
            catalog = _split(raw)
            follower += catalog["follower"]
            if side == "endpoint":
                for method, count in catalog["by_method"].items():
                    through[method] = through.get(method, 0) + count
            else:  # the metastore's log in this window, less what catalog hive asked in it
                audited = rig.metastore.audited_calls(line)[1]
                for method, count in audited.items():
                    left = count - raw["by_method"].get(method, 0)
                    if left > 0:
                        direct[method] = direct.get(method, 0) + left
    best = {side: round(min(values), 3) for side, values in times.items()}
    same, how = _same_rows(clients, sql, rows)
    return {
        "seconds_best": best, "seconds_all": {side: [round(v, 3) for v in values] for side, values in times.items()},
        "ratio": round(best["endpoint"] / best["metastore"], 3) if best["metastore"] else None,
        "rows": len(rows["metastore"]), "rows_equal": same, "rows_compared": how,
        "metastore_calls_per_run_through_endpoint": round(sum(through.values()) / repeat, 2),
        "metastore_calls_per_run_direct": round(sum(direct.values()) / repeat, 2),
        "endpoint_calls_by_method": through, "direct_calls_by_method": direct, "follower_polls_meanwhile": follower,
    }


def _fault_run(rig: TpcdsRig, client: Any, sqls: dict[str, str], lead_seconds: float, after_seconds: float) -> dict[str, Any]:
    """The endpoint side loops over the queries; ``lead_seconds`` in, the metastore stops and starts again on its port;
    the loop goes on ``after_seconds`` past its return."""
    window: dict[str, float] = {}
    restart_error: list[str] = []

    def restart() -> None:
        time.sleep(lead_seconds)
        window["stop"] = time.monotonic()
        try:
            rig.metastore.stop()
            window["stopped"] = time.monotonic()
            rig.metastore.start()
        except Exception as error:  # noqa: BLE001 - reported; the loop ends on its clock
            restart_error.append(f"{type(error).__name__}: {error}"[:500])
        window["up"] = time.monotonic()

    hive_before = rig.hive_calls()
    errors_before = dict(rig.manager.catalog("hive").metrics().errors) if rig.manager else {}
    thread = threading.Thread(target=restart, daemon=True)
    runs: list[dict[str, Any]] = []
    names = list(sqls)
    thread.start()
    began = time.monotonic()
    index = 0
    while True:
        done_at = window.get("up")
        if done_at is not None and time.monotonic() > done_at + after_seconds:
            break
        if time.monotonic() - began > 1800:
            break
        name = names[index % len(names)]
        index += 1
        started = time.monotonic()
        try:
            client.sql(sqls[name])
            error = None
        except Exception as failure:  # noqa: BLE001 - a failed query is what this run counts
            error = str(failure).strip().splitlines()[0][:300] if str(failure).strip() else type(failure).__name__
        runs.append({"query": name, "start": started, "end": time.monotonic(), "error": error})
    thread.join(timeout=300)
    stop, up = window.get("stop", math.inf), window.get("up", math.inf)
    during = [run for run in runs if run["start"] < up and run["end"] > stop]
    failed = [run for run in runs if run["error"]]
    errors_after = dict(rig.manager.catalog("hive").metrics().errors) if rig.manager else {}
    return {
        "queries_run": len(runs), "failed": len(failed), "goal_failed": 0,
        "ran_while_metastore_down": [run["query"] for run in during],
        "failed_while_down": [run["query"] for run in during if run["error"]],
        "first_errors": [f"{run['query']}: {run['error']}" for run in failed[:5]],
        "metastore_down_seconds": round(up - stop, 2) if math.isfinite(up - stop) else None,
        "stop_seconds": round(window["stopped"] - stop, 2) if "stopped" in window else None,
        "same_port": rig.metastore.remembered_port == rig.metastore_port, "restart_error": restart_error or None,
        "metastore_calls_of_catalog_hive": _split(calls_between(hive_before, rig.hive_calls())),
        "catalog_errors_by_method": {method: count - errors_before.get(method, 0) for method, count in errors_after.items()
                                     if count - errors_before.get(method, 0)},
        "seconds": round(time.monotonic() - began, 1),
    }


def _geometric_mean(values: list[float]) -> float | None:
    values = [value for value in values if value]
    return round(math.exp(sum(math.log(value) for value in values) / len(values)), 3) if values else None


def tpcds(scratch: Path, args: argparse.Namespace) -> dict[str, Any]:
    from tests.support.spark_hive_client import SparkHiveClient, SparkHiveError

    data = args.tpcds_data.resolve() if args.tpcds_data is not None else scratch / "tpcds-data"
    directory, facts = prepare(data, args.tpcds_sf)
    texts = query_texts()
    selected = parse_selection(args.tpcds_queries, texts)
    sqls: dict[str, str] = {}
    untranslated: dict[str, str] = {}
    for number in selected:
        try:
            sqls[f"q{number}"] = to_spark(texts[number])
        except ValueError as error:
            untranslated[f"q{number}"] = str(error)[:300]
    progress(f"TPC-DS at scale factor {args.tpcds_sf:g}: {len(sqls)} queries; starting the metastore and the endpoint")
    rig = TpcdsRig(directory, scratch)
    results: dict[str, Any] = {}
    try:
        warehouse = rig.metastore.warehouse
        with SparkHiveClient(f"thrift://127.0.0.1:{rig.endpoint_port}", warehouse, scratch / "tpcds-spark-endpoint",
                             _SPARK_CONF) as through, \
                SparkHiveClient(rig.metastore.uri, warehouse, scratch / "tpcds-spark-metastore", _SPARK_CONF) as direct:
            clients = {"endpoint": through, "metastore": direct}
            for client in clients.values():
                client.sql(f"USE {DATABASE}")
            for position, (name, sql) in enumerate(sqls.items(), 1):
                try:
                    results[name] = _query(rig, clients, sql, args.tpcds_repeat)
                except SparkHiveError as error:
                    results[name] = {"error": str(error)[:1000]}
                progress(f"[{position}/{len(sqls)}] {name}: {_line(results[name])}")
            startup = {"endpoint": round(through.startup_seconds, 1), "metastore": round(direct.startup_seconds, 1)}
            progress("fault run: the metastore restarted under the endpoint side's queries")
            measured = {name: sqls[name] for name in sqls if "error" not in results.get(name, {"error": ""})}
            fault = _fault_run(rig, through, measured, args.fault_lead, args.fault_after)
    finally:
        rig.close()
    ratios = [entry["ratio"] for entry in results.values() if entry.get("ratio")]
    measured_entries = [entry for entry in results.values() if "ratio" in entry]
    return {
        "scale_factor": args.tpcds_sf, "repeat": args.tpcds_repeat, "selection": args.tpcds_queries, "data": facts,
        "startup_seconds": startup, "untranslated": untranslated, "queries": results,
        "summary": {
            "queries_measured": len(measured_entries), "geometric_mean_ratio": _geometric_mean(ratios),
            "goal_geometric_mean_at_most": GOAL_RATIO,
            "worst": max(((name, entry["ratio"]) for name, entry in results.items() if "ratio" in entry),
                         key=lambda item: item[1], default=None),
            "rows_different": sorted(name for name, entry in results.items() if entry.get("rows_equal") is False),
            "failed": sorted(name for name, entry in results.items() if "error" in entry),
            "metastore_calls_per_run_through_endpoint_total": round(
                sum(entry["metastore_calls_per_run_through_endpoint"] for entry in measured_entries), 2),
            "queries_with_endpoint_metastore_calls": sorted(
                name for name, entry in results.items() if entry.get("metastore_calls_per_run_through_endpoint")),
            "metastore_calls_per_run_direct_total": round(
                sum(entry["metastore_calls_per_run_direct"] for entry in measured_entries), 2),
        },
        "fault_run": fault,
    }


def _line(entry: dict[str, Any]) -> str:
    if "error" in entry:
        return "FAILED " + entry["error"].splitlines()[0][:200]
    best = entry["seconds_best"]
    return (f"endpoint {best['endpoint']:>7.3f} s  metastore {best['metastore']:>7.3f} s  ratio {entry['ratio']:>6.3f}  "
            f"{'same rows' if entry['rows_equal'] else 'DIFFERENT'}  metastore calls/run: via endpoint "
            f"{entry['metastore_calls_per_run_through_endpoint']:g}, direct {entry['metastore_calls_per_run_direct']:g}")


def lines(part: dict[str, Any]) -> list[str]:
    """The table bench_thrift prints for this section."""
    out = [f"  TPC-DS sf {part['scale_factor']:g}, Spark's own Hive support, best of {part['repeat']} after a warm-up:"]
    out += [f"  {name:<5} {_line(entry)}" for name, entry in part["queries"].items()]
    summary, fault = part["summary"], part["fault_run"]
    out.append(f"  geometric mean endpoint/metastore over {summary['queries_measured']} queries: {summary['geometric_mean_ratio']} "
               f"(goal <= {GOAL_RATIO}); worst {summary['worst']}; rows different {summary['rows_different'] or 'none'}; "
               f"failed {summary['failed'] or 'none'}")
    out.append(f"  metastore calls per warm run, all queries: via endpoint {summary['metastore_calls_per_run_through_endpoint_total']}"
               f" (queries with any: {summary['queries_with_endpoint_metastore_calls'] or 'none'}), direct "
               f"{summary['metastore_calls_per_run_direct_total']}")
    out.append(f"  fault run: metastore down {fault['metastore_down_seconds']} s (same port {fault['same_port']}); "
               f"{fault['queries_run']} queries, {fault['failed']} failed; {len(fault['ran_while_metastore_down'])} ran while "
               f"it was down, failed of those: {fault['failed_while_down'] or 'none'}")
    return out


if __name__ == "__main__" and sys.argv[1:2] == ["load"]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    _load(Path(sys.argv[2]), sys.argv[3], sys.argv[4])
