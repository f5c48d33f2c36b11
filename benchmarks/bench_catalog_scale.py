"""A catalog of 100,000 tables (issue 43 section 3): the service's resident memory with the catalog warm, under the
default memory budget and under one below what the catalog needs, and what a person or an engine waits for through
the REST API, the thrift endpoint and the console, each against the metastore's own answer in the same run.

The catalog (``_scale_catalog.py``): ``--databases`` x ``--tables`` (1,000 x 100) external Parquet tables of eight
columns and one partition key, on the PostgreSQL-backed embedded metastore, made through the API for a timed sample
and written into its PostgreSQL tables directly when the API would take longer than ``--api-budget`` (15 minutes).

The catalog is defined with ``schema.cache.capacity`` raised to hold every table and its name lists (the default,
100,000 tables since the first runs, when it was 10,000 and kept a tenth of them warm). A fresh service under
``--budget`` (``serve --cache-memory``, 2 GiB: enough for every table) is warmed (``_scale_catalog_calls.warm_up``:
every table loaded) with its resident memory read before and after and what its caches hold; then the operations
(``_scale_catalog_calls.py``) are timed warm, then cold: SHOW DATABASES, SHOW TABLES of one database, get_all_tables
of every database, get_table_meta of every table, a search by name in the whole catalog and in one database, and
DESCRIBE of one table. A cold call follows a REFRESH through the service, and is set against the metastore's own
answer measured after the same REFRESH (``peer after a refresh``: the machine idle for the same few milliseconds);
a warm one against the metastore's answers in a row. Then a fresh service is warmed the same way under each of
``--other-budgets`` (the default 1 GiB, and 64 MiB: below what the catalog needs), showing what it holds, what it
evicted, and that an evicted table is fetched again.

    python benchmarks/bench_catalog_scale.py [--databases 1000] [--tables 100] [--data DIR] [--repeat 5] [--big-repeat 2]
                                             [--budget 2GiB] [--other-budgets default,64MiB] [--operations WORDS]
                                             [--api-budget 900]

``--data DIR`` keeps the metastore (its own PostgreSQL server in DIR/metastore/postgres) for later runs with the same
sizes; every server is stopped at the end either way.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import Service, free_port, machine, progress, run_in_scratch, save
from _scale_catalog import Shape, make_catalog
from _scale_catalog_calls import operations, surfaces, time_operations, warm_up
from _scale_memory import mib, reset_peak, rss
from _scale_planning import audited

from hms_catalog import open_session
from hms_catalog.client import HmsClientPool
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.metastore.embedded import MetastoreAlreadyRunning
from hms_catalog.properties import SCHEMA_CACHE_CAPACITY, SCHEMA_CACHE_CAPACITY_DEFAULT, ClientConfig, parse_uris
from hms_catalog.remote import CatalogServiceClient

BUILT = "bench_catalog_scale.built.json"
CATALOG = "tables"
ROOT = Path(__file__).resolve().parents[1]


def prepare(metastore: EmbeddedMetastore, directory: Path, shape: Shape, budget: float) -> dict[str, Any]:
    """The catalog, made now or by an earlier run with the same sizes."""
    marker = directory / BUILT
    sizes = {"databases": shape.databases, "tables": shape.tables}
    if marker.exists():
        made = json.loads(marker.read_text())
        if made.get("sizes") != sizes:
            raise SystemExit(f"{directory} holds a catalog of {made.get('sizes')}, not {sizes}: give another --data DIR")
        progress(f"reusing the catalog made by an earlier run ({made['report']['method']})")
        return {**made["report"], "reused": True}
    pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri), socket_timeout=3600.0))
    try:
        report = make_catalog(pool, metastore.directory, metastore.warehouse, shape, budget=budget)
    finally:
        pool.close()
    marker.write_text(json.dumps({"sizes": sizes, "report": report}, indent=2))
    return {**report, "reused": False}


def _cache_rows(client: CatalogServiceClient) -> dict[str, Any]:
    """SHOW CACHE of the catalog: each cache that holds or evicted something, and the budget's message."""
    answer = client.cache(CATALOG)
    columns = answer["columns"]
    rows = {row[0]: dict(zip(columns[1:], row[1:])) for row in answer["rows"]}
    return {"caches": {name: row for name, row in rows.items() if row["Entries"] or row["Evictions"]},
            "message": answer.get("message", "")}


def start_service(home: Path, thrift_port: int, budget: str | None) -> tuple[Service, CatalogServiceClient]:
    extra = ["--cache-memory", budget] if budget else []
    service = Service(home, "--thrift-port", str(thrift_port), "--thrift-primary", CATALOG, *extra, timeout=120, cwd=ROOT)
    return service, CatalogServiceClient(service.url, service.token, timeout=3600)


def stop_service(service: Service, client: CatalogServiceClient) -> int:
    client.close()
    return service.stop(timeout=120)


def warmed(metastore: EmbeddedMetastore, service: Service, client: CatalogServiceClient, thrift_port: int, shape: Shape,
           budget: str) -> dict[str, Any]:
    """A fresh service's memory started, then with every table loaded (:func:`warm_up`), and what its caches hold;
    then get_table_meta of every table and DESCRIBE of the first table loaded (which a budget below the catalog's
    needs has evicted: it is fetched again)."""
    pid = service.process.pid
    client.databases(CATALOG)
    time.sleep(1.0)
    before = rss(pid)
    exact = reset_peak(pid)
    progress(f"warming every table up (budget {budget})")
    seconds, calls, loaded = audited(metastore, lambda: warm_up(thrift_port))
    time.sleep(1.0)
    warm = rss(pid)
    with surfaces(metastore, thrift_port, client, service.url, service.token, CATALOG) as where:
        again, again_calls, metas = audited(metastore, lambda: where.endpoint.get_table_meta("*", "*", None))
        database, table = shape.database(0), shape.table(0)
        first, first_calls, _ = audited(metastore, lambda: where.rest.table(CATALOG, database, table))
    report = {"budget": budget, "rss_started_mib": mib(before), "rss_warm_mib": mib(warm),
              "peak_rss_mib": mib(rss(pid, peak=True)), "peak_is_the_warm_up": exact, "tables_loaded": loaded,
              "warm_up_seconds": seconds, "warm_up_calls": calls,
              "then_get_table_meta_all": {"seconds": again, "calls": again_calls, "tables": len(metas)},
              "then_describe_the_first_loaded": {"table": f"{database}.{table}", "seconds": first, "calls": first_calls},
              "rss_end_mib": mib(rss(pid)), **_cache_rows(client)}
    schema = report["caches"].get("schema", {})
    report["tables_held"] = schema.get("Entries")
    report["rss_added_mib"] = round(report["rss_warm_mib"] - report["rss_started_mib"], 1)
    if report["tables_held"]:
        report["kib_per_table_held"] = round(report["rss_added_mib"] * 1024 / report["tables_held"], 1)
    return report


def define_catalog(home: Path, metastore: EmbeddedMetastore, shape: Shape) -> int:
    capacity = max(SCHEMA_CACHE_CAPACITY_DEFAULT, 2 * shape.total)
    session = open_session(home)
    try:
        session.run_one(f"CREATE CATALOG {CATALOG} PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}', "
                        f"'{SCHEMA_CACHE_CAPACITY}'='{capacity}', 'hive.metastore.client.socket.timeout'='600')")
    finally:
        session.manager.close()
    return capacity


def run(directory: Path, scratch: Path, args: argparse.Namespace) -> dict[str, Any]:
    shape = Shape(args.databases, args.tables)
    metastore = EmbeddedMetastore(directory / "metastore", database="postgresql", audit=True, events=False, heap=args.heap)
    with contextlib.suppress(MetastoreAlreadyRunning):
        metastore.start()
    report: dict[str, Any] = {"databases": shape.databases, "tables_per_database": shape.tables, "tables": shape.total,
                              "machine_at_start": machine(),
                              "metastore": "embedded Hive 2.3 metastore, its own PostgreSQL server, events off"}
    home = scratch / "home"
    try:
        report["catalog"] = prepare(metastore, directory, shape, args.api_budget)
        report["schema_cache_capacity"] = define_catalog(home, metastore, shape)
        thrift_port = free_port()
        wanted = [label for label in operations(shape, CATALOG) if any(word in label for word in args.operations.split(","))]
        budgets = [args.budget, *(each for each in args.other_budgets.split(",") if each)]
        report["memory"] = []
        service, client = start_service(home, thrift_port, args.budget)
        try:
            report["memory"].append(warmed(metastore, service, client, thrift_port, shape, args.budget))
            with surfaces(metastore, thrift_port, client, service.url, service.token, CATALOG) as where:
                found = time_operations(metastore, where, shape, repeat=args.repeat, big_repeat=args.big_repeat, cold=False,
                                        only=wanted)
                report["operations"] = time_operations(metastore, where, shape, repeat=args.repeat, big_repeat=args.big_repeat,
                                                       cold=True, only=wanted, found=found)
        finally:
            report["service_exit"] = stop_service(service, client)
        for budget in budgets[1:]:
            service, client = start_service(home, thrift_port, None if budget == "default" else budget)
            try:
                report["memory"].append(warmed(metastore, service, client, thrift_port, shape, budget))
            finally:
                stop_service(service, client)
    finally:
        metastore.stop()
    report["machine_at_end"] = machine()
    return report


def _cell(row: dict[str, Any], key: str) -> str:
    """A surface's median and its ratio to the metastore's own answer measured the same way: a cold call against
    the metastore's answer after the same refresh, a warm one against its answer in a row."""
    found = row.get(key)
    if found is None:
        return f"{'-':>16}"
    return f"{found['seconds']:>9.4f} {found.get('over_peer_after_a_refresh', found['over_peer']):>5.2f}x"


def print_report(report: dict[str, Any]) -> None:
    surfaces = ["thrift cold", "thrift warm", "REST cold", "REST warm", "console cold", "console warm"]
    print(f"{'operation':<44} {'metastore s':>11} {'after refresh':>13} " + " ".join(f"{name:>16}" for name in surfaces))
    for label, row in report["operations"].items():
        after = row.get("peer after a refresh", {}).get("seconds")
        print(f"{label:<44} {row['peer']['seconds']:>11.4f} {'-' if after is None else f'{after:.4f}':>13} "
              + " ".join(_cell(row, name) for name in surfaces))
    for run in report.get("memory", []):
        print(f"memory, budget {run['budget']}: {run['rss_started_mib']} MiB started, {run['rss_warm_mib']} MiB with "
              f"{run['tables_loaded']:,} tables loaded ({run['tables_held']} held; peak {run['peak_rss_mib']} MiB), warm-up "
              f"{run['warm_up_seconds']:.1f} s; {run['message']}")
        for name, cache in run["caches"].items():
            print(f"    {name}: {cache['Entries']} entries, {cache['Bytes']} bytes, {cache['MemoryEvictions']} evicted for memory")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--databases", type=int, default=1000)
    parser.add_argument("--tables", type=int, default=100, help="tables of each database")
    parser.add_argument("--data", type=Path, metavar="DIR", help="keep the metastore and its catalog here, reused by later runs")
    parser.add_argument("--repeat", type=int, default=5, help="calls of each single-object operation (the median is kept)")
    parser.add_argument("--big-repeat", type=int, default=2, help="calls of each operation over the whole catalog")
    parser.add_argument("--budget", default="2GiB", help="the memory budget (serve --cache-memory) the operations are timed under")
    parser.add_argument("--other-budgets", default="default,64MiB",
                        help="budgets whose warm service's memory is measured too ('default': serve's own, 1 GiB)")
    parser.add_argument("--api-budget", type=float, default=900.0,
                        help="seconds the API may take for every table before the rest is written directly")
    parser.add_argument("--heap", default="4g", help="the metastore JVM's heap")
    parser.add_argument("--operations", default="", help="only the operations whose label has one of these words (comma-separated)")
    parser.add_argument("--results", help="the result file's name (default: catalog_scale, or catalog_scale-DxT at other sizes)")
    args = parser.parse_args()
    report = run_in_scratch("bench-catalog-scale-", args.data, lambda directory, scratch: run(directory, scratch, args))
    print_report(report)
    default = args.databases == 1000 and args.tables == 100
    save(args.results or ("catalog_scale" if default else f"catalog_scale-{args.databases}x{args.tables}"), report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
