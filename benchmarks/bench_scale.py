"""A metastore at production scale (issue 43 section 2): one table of a million partitions on the PostgreSQL-backed
embedded metastore, planned cold by us and by Spark's own Hive support in the same run.

The table (``_scale_table.py``): ``bench_scale.big``, ``--partitions`` partitions (10,000 regions x ``--fanout`` 100 days
by default), made with batched ``add_partitions`` for a timed sample and, when that rate would take longer than
``--api-budget`` (15 minutes), written into the metastore's PostgreSQL tables directly with the rows the API wrote,
then checked through the API. Only the partitions some measured predicate keeps have a folder, with one small Parquet
file; the others' folders are absent (the planner skips absent locations).

Sections (``--sections``, all by default):
- ``planning``: the four predicate shapes of the 120,000-partition measurement (leading key ``=``, second key ``=``,
  ranges on both keys, ``IN`` on the second key), cold, through the Python API, the CLI and the service, with
  Spark's own planning of the same query as the peer (``_scale_planning.py``). Goal: at most 1.5 s and 5 calls.
- ``half``: a predicate that keeps half the partitions (500,000 of a million), through the Python API (the plan
  streamed and written as JSON, a batch of partitions at a time: the planning process's peak memory) and the service
  (which streams it too: the service's); also what the default ``max_partitions_per_scan`` does.
- ``listing``: every partition name, through the service (``SHOW PARTITIONS``, REST) and its thrift endpoint
  (``get_partition_names``), against the metastore's own ``get_partition_names`` (``_scale_listing.py``).

Every case runs once through the Python API before anything is timed, so the metastore's database has every query
shape warm for both sides, as bench_planning does. Metastore calls are counted at the server (Hive's audit log).
The machine's cores and load average are recorded with the figures.

    python benchmarks/bench_scale.py [--partitions 1000000] [--fanout 100] [--data DIR] [--sections planning,half,listing]
                                     [--no-spark] [--no-show-partitions] [--api-sample 5000] [--api-budget 900]

``--data DIR`` keeps the metastore (its own PostgreSQL server in DIR/metastore/postgres) and the table's files in DIR,
reused by later runs with the same sizes; every server is stopped at the end either way.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import free_port, machine, progress, run_in_scratch, save
from _scale_anatomy import anatomy, sent_filter
from _scale_listing import listing, print_listing
from _scale_planning import (
    Rig,
    cli_startup,
    ours_api,
    ours_cli,
    ours_service,
    spark_plan,
    start_service,
    start_spark,
    stop_service,
    total,
)
from _scale_table import Grid, make_files, make_partitions

from hms_catalog import open_session
from hms_catalog.client import HmsClientPool
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.metastore.embedded import MetastoreAlreadyRunning
from hms_catalog.properties import ClientConfig, parse_uris

GOAL_SECONDS = 1.5
GOAL_CALLS = 5
BUILT = "bench_scale.built.json"
CATALOG = "scale"  # the catalog properties' defaults
BIG_CATALOG = "scale_big"  # a scan may read every partition, and a call may take ten minutes
ROOT = Path(__file__).resolve().parents[1]


def prepare(metastore: EmbeddedMetastore, directory: Path, grid: Grid, args: argparse.Namespace) -> dict[str, Any]:
    """The table, made now or by an earlier run with the same sizes (``BUILT`` keeps what was done, and which
    part is done: a run that stopped after the partitions goes on with the files)."""
    marker = directory / BUILT
    sizes = {"partitions": grid.partitions, "fanout": grid.fanout}
    made: dict[str, Any] = json.loads(marker.read_text()) if marker.exists() else {"sizes": sizes, "done": [], "report": {}}
    if made.get("sizes") != sizes:
        raise SystemExit(f"{directory} holds a table of {made.get('sizes')}, not {sizes}: give another --data DIR")
    reused = made["done"] == ["partitions", "files"]
    if "partitions" not in made["done"]:
        pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri), socket_timeout=3600.0))
        try:
            made["report"].update(make_partitions(pool, metastore.directory, metastore.warehouse, grid, sample=args.api_sample,
                                                  budget=args.api_budget))
        finally:
            pool.close()
        made["done"].append("partitions")
        marker.write_text(json.dumps(made, indent=2))
    if "files" not in made["done"]:
        made["report"].update(make_files(metastore.warehouse, grid))
        made["done"].append("files")
        marker.write_text(json.dumps(made, indent=2))
    if reused:
        progress(f"reusing the table made by an earlier run ({made['report']['method']})")
    return {**made["report"], "reused": reused}


def define_catalogs(home: Path, metastore: EmbeddedMetastore, grid: Grid) -> None:
    session = open_session(home)
    try:
        session.run_one(f"CREATE CATALOG {CATALOG} PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}')")
        session.run_one(f"CREATE CATALOG {BIG_CATALOG} PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}', "
                        f"'max_partitions_per_scan'='{grid.partitions}', 'hive.metastore.client.socket.timeout'='600')")
    finally:
        session.manager.close()


def per_partition(row: dict[str, Any]) -> dict[str, Any]:
    """The memory a plan added over what the process held before, per partition it kept."""
    peak = row.get("peak_rss_mib", row.get("service_peak_rss_mib"))
    before = row.get("rss_before_mib", row.get("service_rss_before_mib"))
    if row.get("partitions") and peak is not None and before is not None:
        row["peak_growth_kib_per_partition"] = round((peak - before) * 1024 / row["partitions"], 2)
    return row


def goals(row: dict[str, Any]) -> bool:
    return row["seconds"] <= GOAL_SECONDS and total(row["calls"]) <= GOAL_CALLS


def compare(cases: dict[str, str], ours: dict[str, dict[str, Any]], theirs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    rows = {}
    for label, where in cases.items():
        api, cli, service = ours["api"][label], ours["cli"][label], ours["service"].get(label)
        peer = theirs.get(label)
        row = {
            "where": where, "partitions": api.get("partitions"), "splits": api.get("splits"),
            "api_seconds": api["seconds"], "api_calls": total(api["calls"]), "api_metastore_seconds": api.get("metastore_seconds"),
            "api_listing_seconds": api.get("listing_seconds"), "api_peak_rss_mib": api["peak_rss_mib"],
            "cli_seconds": cli["seconds"], "cli_calls": total(cli["calls"]), "cli_peak_rss_mib": cli["peak_rss_mib"],
            "service_seconds": service and service["seconds"], "service_calls": service and total(service["calls"]),
            "spark_seconds": peer and peer["seconds"], "spark_calls": peer and total(peer["calls"]),
            "spark_files": peer and peer["files"],
            "api_goals_met": goals(api), "service_goals_met": service is not None and goals(service),
        }
        if peer:
            row["api_over_spark"] = round(api["seconds"] / max(peer["seconds"], 1e-6), 3)
            row["cli_over_spark"] = round(cli["seconds"] / max(peer["seconds"], 1e-6), 3)
            if service:
                row["service_over_spark"] = round(service["seconds"] / max(peer["seconds"], 1e-6), 3)
        rows[label] = row
    return rows


def print_planning(rows: dict[str, Any]) -> None:
    print(f"{'case':<22} {'parts':>7} {'API s':>7} {'calls':>5} {'hms s':>6} {'MiB':>6} {'CLI s':>6} {'svc s':>7} {'calls':>5} "
          f"{'Spark s':>8} {'calls':>5} {'API/Spark':>9}  goals (API; service)")
    def num(row: dict[str, Any], key: str, width: int, fmt: str = ".3f") -> str:
        value = row.get(key)
        return f"{'-':>{width}}" if value is None else f"{value:>{width}{fmt}}"

    for label, row in rows.items():
        print(f"{label:<22} {row['partitions'] or 0:>7} {row['api_seconds']:>7.3f} {row['api_calls']:>5} "
              f"{num(row, 'api_metastore_seconds', 6, '.2f')} {row['api_peak_rss_mib']:>6.0f} {row['cli_seconds']:>6.2f} "
              f"{num(row, 'service_seconds', 7)} {num(row, 'service_calls', 5, '')} "
              f"{num(row, 'spark_seconds', 8)} {num(row, 'spark_calls', 5, '')} "
              f"{num(row, 'api_over_spark', 9)}  {'met' if row['api_goals_met'] else 'MISSED'}; "
              f"{'met' if row['service_goals_met'] else 'MISSED'}")


def run(directory: Path, scratch: Path, args: argparse.Namespace) -> dict[str, Any]:
    grid = Grid(args.partitions, args.fanout)
    sections = set(args.sections.split(","))
    metastore = EmbeddedMetastore(directory / "metastore", database="postgresql", audit=True, events=False, heap=args.heap)
    with contextlib.suppress(MetastoreAlreadyRunning):
        metastore.start()
    report: dict[str, Any] = {"partitions": grid.partitions, "fanout": grid.fanout, "machine_at_start": machine(),
                              "metastore": "embedded Hive 2.3 metastore, its own PostgreSQL server, events off"}
    rig = Rig(metastore, scratch / "home", ROOT)
    spark = None
    try:
        report["table"] = prepare(metastore, directory, grid, args)
        define_catalogs(rig.home, metastore, grid)
        cases = grid.predicates()
        metastore_port = int(metastore.uri.rsplit(":", 1)[1])
        ours: dict[str, dict[str, Any]] = {"api": {}, "cli": {}, "service": {}}
        if "planning" in sections:
            progress("warming the metastore up: every case once")
            for where in cases.values():
                ours_api(rig, CATALOG, where)
            report["cli_startup"] = cli_startup(rig)
            for label, where in cases.items():
                progress(f"ours, {label}: API, then CLI")
                ours["api"][label] = ours_api(rig, CATALOG, where)
                ours["cli"][label] = ours_cli(rig, CATALOG, where)
                expression = sent_filter(ours["api"][label].get("notes", []))
                if expression is not None:
                    report.setdefault("anatomy", {})[label] = anatomy(metastore_port, expression)
        if "half" in sections:
            progress(f"ours, {grid.half()} ({grid.partitions // 2:,} partitions): API")
            report["half"] = {"where": grid.half(), "api": per_partition(ours_api(rig, BIG_CATALOG, grid.half(), stream=True))}
            if grid.partitions // 2 > 100_000:
                progress("the same with the default max_partitions_per_scan")
                report["half"]["api_default_limit"] = ours_api(rig, CATALOG, grid.half())
        thrift_port = free_port()
        start_service(rig, thrift_port, CATALOG)
        if "planning" in sections:
            for label, where in cases.items():
                progress(f"service, {label}")
                ours["service"][label] = ours_service(rig, CATALOG, where)
        if "half" in sections:
            progress(f"service, {grid.half()}: a fresh service")
            stop_service(rig)
            start_service(rig, thrift_port, CATALOG)
            report["half"]["service"] = per_partition(ours_service(rig, BIG_CATALOG, grid.half()))
        if "listing" in sections:
            report["listing"] = listing(rig, CATALOG, thrift_port, show_partitions=not args.no_show_partitions)
        report["service_exit"] = stop_service(rig)
        theirs: dict[str, dict[str, Any]] = {}
        if "planning" in sections and not args.no_spark:
            progress("Spark: starting, warming up on another table")
            spark = start_spark(metastore, scratch)
            for label, where in cases.items():
                progress(f"Spark, {label}")
                theirs[label] = spark_plan(spark, metastore, where)
        if "planning" in sections:
            report["comparison"] = compare(cases, ours, theirs)
            report["hms_catalog"] = ours
            report["spark"] = theirs
    finally:
        if spark is not None:
            spark.stop()
        stop_service(rig)
        metastore.stop()
    report["machine_at_end"] = machine()
    if "comparison" in report:
        print_planning(report["comparison"])
        print(f"(the CLI's figures include its start: SHOW CATALOGS takes {report['cli_startup']['seconds']:.2f} s)")
    if "half" in report:
        half = report["half"]
        for side in ("api", "api_default_limit", "service"):
            if side in half:
                row = half[side]
                print(f"half ({half['where']}), {side}: {row['seconds']:.1f} s, {total(row['calls'])} calls, "
                      f"splits {row.get('splits')}, peak {row.get('peak_rss_mib', row.get('service_peak_rss_mib'))} MiB"
                      + (f", {row['error']}" if row.get("error") else ""))
    for label, row in report.get("anatomy", {}).items():
        print(f"get_partitions_by_filter, {label}: {row['partitions']} partitions in {row['seconds']:.2f} s: metastore "
              f"{row['metastore_seconds']:.2f} s, transfer and decoding {row['transfer_and_decode_seconds']:.2f} s (decoding "
              f"alone {row['decode_alone_seconds']:.2f} s), {row['answer_mib']} MiB")
    if "listing" in report:
        print_listing(report["listing"])
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--fanout", type=int, default=100, help="values of the second key (days per region)")
    parser.add_argument("--data", type=Path, metavar="DIR", help="keep the metastore and the table here, reused by later runs")
    parser.add_argument("--sections", default="planning,half,listing")
    parser.add_argument("--no-spark", action="store_true", help="leave Spark's planning out")
    parser.add_argument("--no-show-partitions", action="store_true",
                        help="leave the service's SHOW PARTITIONS of the whole table out (it fetches every partition)")
    parser.add_argument("--api-sample", type=int, default=5000, help="partitions added through the API, timed")
    parser.add_argument("--api-budget", type=float, default=900.0,
                        help="seconds the API may take for the whole table before the rest is written directly")
    parser.add_argument("--heap", default="4g", help="the metastore JVM's heap")
    args = parser.parse_args()
    report = run_in_scratch("bench-scale-", args.data, lambda directory, scratch: run(directory, scratch, args))
    save("scale" if args.partitions == 1_000_000 else f"scale-{args.partitions}", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
