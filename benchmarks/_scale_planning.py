"""Cold planning of the scale table: ours through the Python API, the CLI and the service; Spark's own as the peer.

Each of ours is cold:
- **API**: ``plan_table`` in a fresh process (``_scale_worker.py``), timed as bench_planning times it (the connection
  opened and the table's handle made before the clock starts); its peak memory is the plan's.
- **CLI**: ``hms-catalog --home HOME --format json -e "EXPLAIN SPLITS FROM ..."``, the whole command (interpreter
  start, imports and all), with the process's peak resident set from ``wait4``.
- **service**: ``POST .../plan`` to a running ``hms-catalog serve`` after ``POST .../refresh`` of the catalog (its caches
  dropped); the service's peak resident set is reset before the request (see :mod:`_scale_memory`).

Spark is cold as bench_planning makes it: its JVM warmed up on another table, the table refreshed, and the planning
timed as ``spark.sql(query).inputFiles()`` (analysis, partition pruning, file listing; no data read). Calls of every
side are counted at the metastore, in its audit log.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import Service, timed
from _scale_memory import mib, reset_peak, rss, run_measured
from _scale_table import DATABASE, TABLE, WARM_TABLE

from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.remote import CatalogServiceClient
from planner import PlanReader, SplitPlan

__all__ = ["Rig", "audited", "cli_startup", "ours_api", "ours_cli", "ours_service", "spark_plan", "start_service", "start_spark",
           "stop_service", "total"]

WORKER = Path(__file__).resolve().with_name("_scale_worker.py")
_SETTLE = 0.3  # the metastore writes its audit log asynchronously


@dataclass
class Rig:
    """What the measurements share: the metastore, the home holding the catalogs' definitions, the source tree the
    child processes run (``root``), and the service once started."""

    metastore: EmbeddedMetastore
    home: Path
    root: Path
    service: Service | None = None
    client: CatalogServiceClient | None = None


def total(calls: dict[str, int]) -> int:
    return sum(calls.values())


def audited(metastore: EmbeddedMetastore, action: Callable[[], Any]) -> tuple[float, dict[str, int], Any]:
    time.sleep(0.1)
    mark, _ = metastore.audited_calls()
    seconds, value = timed(action)
    time.sleep(_SETTLE)
    _, calls = metastore.audited_calls(mark)
    return round(seconds, 4), calls, value


def ours_api(rig: Rig, catalog: str, where: str, *, stream: bool = False) -> dict[str, Any]:
    """``stream``: the plan streamed and written as JSON (to the null device), its splits never held."""
    job = {"home": str(rig.home), "catalog": catalog, "database": DATABASE, "table": TABLE, "where": where,
           "metastore": str(rig.metastore.directory), "stream": stream}
    _, code, out, err, process_peak = run_measured([sys.executable, str(WORKER), json.dumps(job)], cwd=rig.root)
    if code != 0 or not out.strip():
        raise SystemExit(f"the planning worker failed ({code}) for {where!r}:\n{err[-3000:]}")
    found = json.loads(out.strip().splitlines()[-1])
    found["process_peak_rss"] = process_peak
    for key in ("rss_before", "peak_rss", "process_peak_rss"):
        found[key + "_mib"] = mib(found.pop(key))
    return found


def ours_cli(rig: Rig, catalog: str, where: str) -> dict[str, Any]:
    statement = f"EXPLAIN SPLITS FROM {catalog}.{DATABASE}.{TABLE} WHERE {where}"
    command = [sys.executable, "-m", "hms_catalog.cli", "--home", str(rig.home), "--format", "json", "-e", statement]
    seconds, calls, (_, code, out, err, peak) = audited(rig.metastore, lambda: run_measured(command, cwd=rig.root))
    answer = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
    if code != 0 or "rows" not in answer:
        raise SystemExit(f"{statement} failed ({code}): {answer.get('error') or err[-3000:]}")
    rows = dict((str(row[0]), row[1]) for row in answer["rows"] if row[0] != "note")
    return {"seconds": seconds, "calls": calls, "peak_rss_mib": mib(peak), "splits": int(rows["splits"]),
            "partitions": int(rows["partitions_scanned"]), "metastore_seconds": float(rows["hms_seconds"]),
            "listing_seconds": float(rows["listing_seconds"]), "splitting_seconds": float(rows["splitting_seconds"]),
            "plan_calls": rows["metastore_calls"]}


def cli_startup(rig: Rig) -> dict[str, Any]:
    """The CLI doing nearly nothing (``SHOW CATALOGS``): what every CLI figure pays before it plans."""
    command = [sys.executable, "-m", "hms_catalog.cli", "--home", str(rig.home), "--format", "json", "-e", "SHOW CATALOGS"]
    seconds, code, _, err, peak = run_measured(command, cwd=rig.root)
    if code != 0:
        raise SystemExit(f"SHOW CATALOGS failed ({code}): {err[-3000:]}")
    return {"seconds": round(seconds, 3), "peak_rss_mib": mib(peak)}


def start_service(rig: Rig, thrift_port: int, primary: str) -> None:
    rig.service = Service(rig.home, "--thrift-port", str(thrift_port), "--thrift-primary", primary, timeout=120, cwd=rig.root)
    rig.client = CatalogServiceClient(rig.service.url, rig.service.token, timeout=3600)


def stop_service(rig: Rig) -> int | None:
    """Stop the service (SIGTERM); its exit code, None when none ran."""
    if rig.client is not None:
        rig.client.close()
        rig.client = None
    service, rig.service = rig.service, None
    return None if service is None else service.stop()


def service_pid(rig: Rig) -> int:
    assert rig.service is not None
    return rig.service.process.pid


def cold_service_call(rig: Rig, catalog: str, action: Callable[[CatalogServiceClient], Any]) -> dict[str, Any]:
    """``action`` on the service with its catalog's caches dropped first: time, calls, and the service's memory."""
    assert rig.client is not None
    client = rig.client
    client.refresh(catalog)
    pid = service_pid(rig)
    before = rss(pid)
    exact = reset_peak(pid)
    seconds, calls, value = audited(rig.metastore, lambda: action(client))
    return {"seconds": seconds, "calls": calls, "service_rss_before_mib": mib(before),
            "service_peak_rss_mib": mib(rss(pid, peak=True)), "service_rss_after_mib": mib(rss(pid)),
            "peak_is_the_calls": exact, "value": value}


def ours_service(rig: Rig, catalog: str, where: str) -> dict[str, Any]:
    """The service's plan, read as it streams it (``PlanReader``): the service holds a batch, not the plan."""
    received = [0]

    def read(client: CatalogServiceClient) -> SplitPlan:
        reader = PlanReader()

        def piece(data: bytes) -> None:
            received[0] += len(data)
            reader.feed(data)

        client.plan(catalog, DATABASE, TABLE, where, into=piece)
        return reader.plan()

    found = cold_service_call(rig, catalog, read)
    plan = found.pop("value")
    summary = plan.summary
    return {**found, "splits": len(plan.splits), "partitions": summary.partitions_scanned,
            "metastore_seconds": summary.hms_seconds, "listing_seconds": summary.listing_seconds,
            "splitting_seconds": summary.splitting_seconds, "answer_mib": mib(received[0])}


def start_spark(metastore: EmbeddedMetastore, scratch: Path) -> Any:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]").appName("bench-scale")
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.hadoop.hive.metastore.uris", metastore.uri)
        .config("spark.hadoop.hive.metastore.client.socket.timeout", "600")
        .config("spark.sql.warehouse.dir", metastore.warehouse.as_uri())
        .config("spark.driver.memory", "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
        .enableHiveSupport().getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql(f"SELECT * FROM {DATABASE}.{WARM_TABLE}").inputFiles()  # the JVM warmed up on another table
    return spark


def spark_plan(spark: Any, metastore: EmbeddedMetastore, where: str) -> dict[str, Any]:
    query = f"SELECT * FROM {DATABASE}.{TABLE} WHERE {where}"
    spark.catalog.refreshTable(f"{DATABASE}.{TABLE}")
    seconds, calls, files = audited(metastore, lambda: spark.sql(query).inputFiles())
    return {"seconds": seconds, "calls": calls, "files": len(files)}
