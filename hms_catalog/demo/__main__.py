"""``python -m hms_catalog.demo``: the quickstart behind ``make demo``.

Starts (or reuses) the embedded metastore under ``--dir``, writes a small warehouse with real writers
(Spark, pyiceberg, Hudi's layout), defines a catalog over it, and runs DESCRIBE, SHOW TABLE STATUS,
EXPLAIN SPLITS and a SELECT with a join and a partition filter on Spark, printing each statement with
its answer and a progress line on each slow step. ``--store s3`` puts the warehouse on a local S3 endpoint
instead (moto's server; see :mod:`hms_catalog.demo.s3`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hms_catalog.cli.render import TextRenderer
from hms_catalog.client import HmsClientPool
from hms_catalog.demo.loopback import on_loopback
from hms_catalog.demo.warehouse import DATABASE, build_warehouse
from hms_catalog.errors import HmsCatalogError
from hms_catalog.execution import Session
from hms_catalog.metastore import EmbeddedMetastore, MetastoreAlreadyRunning, MetastorePortInUse
from hms_catalog.properties import ClientConfig, parse_uris
from hms_catalog.registry import shared_manager
from hms_catalog.state import open_definitions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CATALOG = "demo"
_STARTED = time.monotonic()


def _step(text: str) -> None:
    print(f"==> [{time.monotonic() - _STARTED:5.1f}s] {text} ...", flush=True)


def _spark(uri: str, warehouse: Path, scratch: Path) -> SparkSession:
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        on_loopback(SparkSession.builder.master("local[2]").appName("hms-catalog-demo"))
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.hadoop.hive.metastore.uris", uri)
        .config("spark.sql.warehouse.dir", warehouse.as_uri())
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
        .enableHiveSupport().getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _start_metastore(directory: Path) -> str:
    """The demo's metastore: reused when running, else started on the port it had (the one the demo's catalog
    names); when something else took that port, on a free one, and the catalog is then pointed there."""
    metastore = EmbeddedMetastore(directory, events=True)
    _step(f"starting the embedded Hive Metastore in {metastore.directory}")
    try:
        return metastore.start()
    except MetastoreAlreadyRunning as running:
        print(f"    already running at {running.uri}")
        return running.uri
    except MetastorePortInUse as taken:
        print(f"    port {taken.port}, where it listened before, is taken now: starting on a free port")
        return EmbeddedMetastore(directory, 0, events=True).start()


def run(directory: Path) -> int:
    directory = directory.resolve()
    uri = _start_metastore(directory / "metastore")
    metastore = EmbeddedMetastore(directory / "metastore")
    _step("starting Spark (local, with Hive support on that metastore)")
    spark = _spark(uri, metastore.warehouse, directory / "spark")
    pool = HmsClientPool(ClientConfig(uris=parse_uris(uri)))
    try:
        if not build_warehouse(spark, pool, uri, metastore.warehouse, _step):
            print("    the demo warehouse exists already")
    finally:
        pool.close()

    home = directory / "home"
    store = open_definitions(home)
    session = Session(shared_manager(home))
    renderer = TextRenderer()
    existing = store.find(CATALOG)
    statements = []
    if existing is None:
        statements.append(f"CREATE CATALOG {CATALOG} COMMENT 'the embedded metastore' "
                          f"PROPERTIES ('type'='hms', 'hive.metastore.uris'='{uri}')")
    elif existing.properties.get("hive.metastore.uris") != uri:
        statements.append(f"ALTER CATALOG {CATALOG} SET PROPERTIES ('hive.metastore.uris'='{uri}')")
    statements += [
        f"SHOW TABLE STATUS FROM {CATALOG}.{DATABASE}",
        f"DESCRIBE {CATALOG}.{DATABASE}.orders",
        f"DESCRIBE {CATALOG}.{DATABASE}.returns",
        f"EXPLAIN SPLITS FROM {CATALOG}.{DATABASE}.orders WHERE dt = '2026-11-02'",
        f"SELECT c.name, count(*) AS orders, sum(o.amount) AS spent FROM {CATALOG}.{DATABASE}.orders o "
        f"JOIN {CATALOG}.{DATABASE}.customers c ON o.customer_id = c.id WHERE o.dt >= '2026-11-02' "
        "GROUP BY c.name ORDER BY c.name",
        f"SELECT r.order_id, r.reason, r.refund, t.city FROM {CATALOG}.{DATABASE}.returns r "
        f"LEFT JOIN {CATALOG}.{DATABASE}.trips t ON r.order_id = t.trip_id ORDER BY r.order_id",
    ]
    try:
        for statement in statements:
            _step(f"running {statement.split()[0]} {statement.split()[1]}")
            print(f"hms-catalog> {statement};")
            print(renderer.result(statement, session.run_one(statement)))
    except HmsCatalogError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        session.manager.close()
        spark.stop()

    print(
        f"\nDone in {time.monotonic() - _STARTED:.0f}s. The metastore keeps running at {uri}. Try:\n"
        f"  .venv/bin/hms-catalog --home {home} -e \"SHOW SPLITS FROM {CATALOG}.{DATABASE}.orders WHERE dt = '2026-11-01'\"\n"
        f"  .venv/bin/hms-catalog --home {home}            # an interactive session\n"
        f"Stop it with: make stop"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m hms_catalog.demo", description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path(".demo"), help="where the demo keeps its metastore and catalogs")
    parser.add_argument("--store", choices=("file", "s3"), default="file",
                        help="where the warehouse's files go: the local disk (default), or a local S3 endpoint "
                             "(moto's server), read through the plan's files with pyarrow instead of Spark")
    args = parser.parse_args()
    if args.store == "s3":
        from hms_catalog.demo.s3 import run_s3

        return run_s3(args.dir.resolve(), _step, lambda: time.monotonic() - _STARTED)
    return run(args.dir)


if __name__ == "__main__":
    sys.exit(main())
