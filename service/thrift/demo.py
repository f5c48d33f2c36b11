"""``python -m service.thrift.demo``: the Hive Metastore half of ``make demo``, after ``python -m hms_catalog.demo``.

Serves the demo's home through the service's thrift endpoint (what ``hms-catalog serve --thrift-port`` runs),
starts a plain
SparkSession whose only setting for the catalog is ``hive.metastore.uris`` at the endpoint (Spark's own
Hive support, no connector), and lets it list and query the demo catalog: the catalogs' databases, a
SELECT with a partition filter and a join, and the same SELECT again, which the endpoint answers from its
warm caches. Stops the endpoint afterwards.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from hms_catalog.demo.loopback import on_loopback
from hms_catalog.errors import HmsCatalogError
from hms_catalog.manager import CatalogManager
from hms_catalog.state import SharedState, open_definitions
from service.audit import AUDIT_FILE, AuditLog
from service.thrift.server import ThriftEndpoint, ThriftSettings

CATALOG = "demo"
DATABASE = "sales"
_QUERY = (f"SELECT c.name, count(*) AS orders, sum(o.amount) AS spent FROM {DATABASE}.orders o "
          f"JOIN {DATABASE}.customers c ON o.customer_id = c.id WHERE o.dt >= '2026-11-02' GROUP BY c.name ORDER BY c.name")


def _step(text: str) -> None:
    print(f"\n== {text}", flush=True)


@contextlib.contextmanager
def _endpoint(home: Path) -> Iterator[ThriftEndpoint]:
    """The service's thrift endpoint on ``home``'s catalogs, the demo catalog as primary, in this process (the
    REST API is not needed to show it), until the block ends."""
    definitions = open_definitions(home)
    manager = CatalogManager(definitions, shared=SharedState(definitions))
    endpoint = ThriftEndpoint(manager, AuditLog(home / AUDIT_FILE), ThriftSettings(port=0, primary=CATALOG)).start()
    try:
        yield endpoint
    finally:
        endpoint.stop()
        manager.close()


def run(directory: Path) -> int:
    from pyspark.sql import SparkSession

    directory = directory.resolve()
    home = directory / "home"
    if open_definitions(home).find(CATALOG) is None:
        print(f"error: {home} has no catalog {CATALOG}: run python -m hms_catalog.demo --dir {directory} first", file=sys.stderr)
        return 1
    _step(f"serving {home} as a Hive Metastore (the endpoint of hms-catalog serve --thrift-port, primary catalog {CATALOG})")
    try:
        with _endpoint(home) as endpoint:
            uri = endpoint.uri
            print(f"    at {uri}")
            _step(f"starting Spark with its own Hive support and one setting: hive.metastore.uris={uri}")
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            spark = (on_loopback(SparkSession.builder.master("local[2]").appName("hms-catalog-thrift-demo"))
                     .config("spark.sql.catalogImplementation", "hive")
                     .config("spark.hadoop.hive.metastore.uris", uri)
                     .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                     .config("spark.sql.session.timeZone", "UTC")
                     .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={directory / 'spark-thrift'}")
                     .enableHiveSupport().getOrCreate())
            spark.sparkContext.setLogLevel("ERROR")
            try:
                for query in ("SHOW DATABASES", f"SHOW TABLES IN {DATABASE}", _QUERY):
                    print(f"spark.sql> {query}")
                    spark.sql(query).show(truncate=False)
                catalog = endpoint.context.manager.catalog(CATALOG)
                before = catalog.metrics()
                again = spark.sql(_QUERY).collect()
                asked = catalog.metrics().calls_since(before)
                print(f"    the same SELECT again: {len(again)} rows; metastore calls the endpoint made for it: "
                      f"{sum(asked.values())} {asked or ''}".rstrip())
            finally:
                spark.stop()
    except HmsCatalogError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print("\nSpark's own Hive support read the demo catalog through hms-catalog's Hive Metastore endpoint. Serve it yourself:\n"
          f"  .venv/bin/hms-catalog --home {home} serve --thrift-port 9083 --thrift-primary {CATALOG}\n"
          "and point any engine at it: hive.metastore.uris=thrift://127.0.0.1:9083 (docs/thrift-endpoint.md)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m service.thrift.demo", description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path(".demo"), help="the directory python -m hms_catalog.demo used")
    return run(parser.parse_args().dir)


if __name__ == "__main__":
    sys.exit(main())
