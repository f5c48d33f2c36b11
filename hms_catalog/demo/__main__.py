"""``python -m hms_catalog.demo``: the quickstart behind ``make demo``.

Starts (or reuses) the embedded metastore under ``--dir``, writes a small warehouse, defines a catalog
over it and runs a few statements, printing each with its answer and progress on the slow steps.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hms_catalog.cli.render import TextRenderer
from hms_catalog.client import HmsClientPool
from hms_catalog.demo.warehouse import DATABASE, build_warehouse
from hms_catalog.errors import HmsCatalogError
from hms_catalog.execution import Session
from hms_catalog.manager import CatalogManager
from hms_catalog.metastore import EmbeddedMetastore, MetastoreAlreadyRunning
from hms_catalog.properties import ClientConfig, parse_uris
from hms_catalog.store import CatalogStore

CATALOG = "demo"


def _step(text: str) -> float:
    print(f"==> {text} ...", flush=True)
    return time.monotonic()


def _done(started: float) -> None:
    print(f"    done in {time.monotonic() - started:.1f}s", flush=True)


def run(directory: Path) -> int:
    directory = directory.resolve()
    metastore = EmbeddedMetastore(directory / "metastore", events=True)
    started = _step(f"starting the embedded Hive Metastore in {metastore.directory}")
    try:
        uri = metastore.start()
    except MetastoreAlreadyRunning as running:
        uri = running.uri
        print(f"    already running at {uri}")
    _done(started)

    started = _step("writing the demo warehouse (Parquet files registered through thrift)")
    pool = HmsClientPool(ClientConfig(uris=parse_uris(uri)))
    try:
        made = build_warehouse(pool, metastore.warehouse)
    finally:
        pool.close()
    print(f"    tables written: {', '.join(made) if made else 'none (already there)'}")
    _done(started)

    home = directory / "home"
    store = CatalogStore(home)
    session = Session(CatalogManager(store))
    renderer = TextRenderer()
    existing = store.find(CATALOG)
    if existing is None:
        statements = [
            f"CREATE CATALOG {CATALOG} COMMENT 'the embedded metastore' "
            f"PROPERTIES ('type'='hms', 'hive.metastore.uris'='{uri}')"
        ]
    elif existing.properties.get("hive.metastore.uris") != uri:
        statements = [f"ALTER CATALOG {CATALOG} SET PROPERTIES ('hive.metastore.uris'='{uri}')"]
    else:
        statements = []
    statements += [
        "SHOW CATALOGS",
        f"SHOW DATABASES FROM {CATALOG}",
        f"SHOW TABLES FROM {CATALOG}.{DATABASE}",
        f"DESCRIBE {CATALOG}.{DATABASE}.orders",
    ]
    try:
        for statement in statements:
            print(f"\nhms-catalog> {statement};")
            print(renderer.result(statement, session.run_one(statement)))
        catalog = session.manager.catalog(CATALOG)
        before = catalog.metrics()
        session.run_one(f"REFRESH TABLE {CATALOG}.{DATABASE}.customers")
        session.run_one(f"DESCRIBE {CATALOG}.{DATABASE}.customers")
        cold = catalog.metrics().calls_since(before)
        middle = catalog.metrics()
        session.run_one(f"DESCRIBE {CATALOG}.{DATABASE}.customers")
        warm = catalog.metrics().calls_since(middle)
        print(f"\nmetastore calls for a cold DESCRIBE: {cold or 'none'}; for a warm one: {warm or 'none'}")
    except HmsCatalogError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        session.manager.close()

    print(
        f"\nThe metastore keeps running at {uri}. Try:\n"
        f"  .venv/bin/hms-catalog --home {home} -e \"DESCRIBE {CATALOG}.{DATABASE}.customers\"\n"
        f"  .venv/bin/hms-catalog --home {home}            # an interactive session\n"
        f"Stop it with: make stop"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m hms_catalog.demo", description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path(".demo"), help="where the demo keeps its metastore and catalogs")
    return run(parser.parse_args().dir)


if __name__ == "__main__":
    sys.exit(main())
