"""``python -m service.thrift.demo``: the Hive Metastore half of ``make demo``, after ``python -m hms_catalog.demo``.

Serves the demo's home with the thrift endpoint on (``hms-catalog serve --thrift-port 0``), starts a plain
SparkSession whose only setting for the catalog is ``hive.metastore.uris`` at the endpoint (Spark's own
Hive support, no connector), and lets it list and query the demo catalog: the catalogs' databases, a
SELECT with a partition filter and a join, and the same SELECT again, which the endpoint answers from its
warm caches. Stops the service afterwards.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from hms_catalog.errors import HmsCatalogError
from hms_catalog.state import open_definitions

CATALOG = "demo"
DATABASE = "sales"
_THRIFT = re.compile(r"hms-catalog thrift endpoint at (thrift://\S+) ")
_QUERY = (f"SELECT c.name, count(*) AS orders, sum(o.amount) AS spent FROM {DATABASE}.orders o "
          f"JOIN {DATABASE}.customers c ON o.customer_id = c.id WHERE o.dt >= '2026-11-02' GROUP BY c.name ORDER BY c.name")


def _step(text: str) -> None:
    print(f"\n== {text}", flush=True)


@contextlib.contextmanager
def _endpoint(home: Path, timeout: float = 60.0) -> Iterator[str]:
    """``hms-catalog serve --port 0 --thrift-port 0`` on ``home`` with the demo catalog as primary; its thrift URI."""
    command = [sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "serve", "--port", "0",
               "--thrift-port", "0", "--thrift-primary", CATALOG]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, daemon=True).start()
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.1))
            except queue.Empty:
                raise HmsCatalogError(f"hms-catalog serve did not start within {timeout:g} s") from None
            if line is None:
                raise HmsCatalogError(f"hms-catalog serve exited with {process.wait()} before serving")
            found = _THRIFT.search(line)
            if found:
                yield found.group(1)
                return
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run(directory: Path) -> int:
    from pyspark.sql import SparkSession

    directory = directory.resolve()
    home = directory / "home"
    if open_definitions(home).find(CATALOG) is None:
        print(f"error: {home} has no catalog {CATALOG}: run python -m hms_catalog.demo --dir {directory} first", file=sys.stderr)
        return 1
    _step(f"serving {home} as a Hive Metastore too (hms-catalog serve --thrift-port 0 --thrift-primary {CATALOG})")
    try:
        with _endpoint(home) as uri:
            print(f"    at {uri}")
            _step(f"starting Spark with its own Hive support and one setting: hive.metastore.uris={uri}")
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            spark = (SparkSession.builder.master("local[2]").appName("hms-catalog-thrift-demo")
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
                again = spark.sql(_QUERY).collect()
                print(f"    the same SELECT again: {len(again)} rows, its tables and partitions from the endpoint's warm caches")
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
