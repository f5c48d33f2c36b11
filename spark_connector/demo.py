"""``python -m spark_connector.demo``: the native half of ``make demo``, after ``python -m hms_catalog.demo``.

Serves the demo's home (``hms-catalog serve`` on a free port), starts a SparkSession whose only hms-catalog
setting is the connector (jar, plugin, service address), and lets plain Spark SQL read the demo catalog:
SHOW TABLES, a SELECT with a partition filter and a join, and the physical plan showing the connector's
scan. Stops the service afterwards.
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

from hms_catalog.demo.loopback import SPARK_LOOPBACK_SETTINGS, keep_spark_on_loopback
from hms_catalog.errors import HmsCatalogError
from hms_catalog.state import open_definitions
from spark_connector.session import native_session

CATALOG = "demo"
DATABASE = "sales"
_ADDRESS = re.compile(r"hms-catalog service at (\S+) ")


def _step(text: str) -> None:
    print(f"\n== {text}", flush=True)


@contextlib.contextmanager
def _service(home: Path, timeout: float = 60.0) -> Iterator[str]:
    """``hms-catalog serve --port 0`` on ``home``; its URL, until the block ends."""
    process = subprocess.Popen([sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "serve", "--port", "0"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
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
            found = _ADDRESS.search(line)
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
    home = directory.resolve() / "home"
    if open_definitions(home).find(CATALOG) is None:
        print(f"error: {home} has no catalog {CATALOG}: run python -m hms_catalog.demo --dir {directory} first", file=sys.stderr)
        return 1
    _step(f"serving {home} (hms-catalog serve)")
    try:
        with _service(home) as url:
            print(f"    at {url}")
            _step("starting Spark with the native connector: spark.jars, spark.plugins and the service's address only")
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            keep_spark_on_loopback()
            spark = native_session(url, home=home, master="local[2]", conf={
                "spark.app.name": "hms-catalog-native-demo", "spark.ui.enabled": "false",
                "spark.ui.showConsoleProgress": "false", "spark.sql.session.timeZone": "UTC",
                "spark.pyspark.python": sys.executable, **SPARK_LOOPBACK_SETTINGS})
            spark.sparkContext.setLogLevel("ERROR")
            try:
                queries = [
                    f"SHOW TABLES IN {CATALOG}.{DATABASE}",
                    f"SELECT c.name, count(*) AS orders, sum(o.amount) AS spent FROM {CATALOG}.{DATABASE}.orders o "
                    f"JOIN {CATALOG}.{DATABASE}.customers c ON o.customer_id = c.id WHERE o.dt >= '2026-11-02' "
                    "GROUP BY c.name ORDER BY c.name",
                ]
                for query in queries:
                    print(f"spark.sql> {query}")
                    spark.sql(query).show(truncate=False)
                scan = f"SELECT * FROM {CATALOG}.{DATABASE}.orders WHERE dt = '2026-11-02'"
                plan = spark.sql(scan)._jdf.queryExecution().executedPlan().toString()
                line = next((text.strip(" +-*()0123456789") for text in plan.splitlines() if "BatchScan" in text), plan)
                print(f"spark.sql> {scan}\n    read by: {line}")
            finally:
                spark.stop()
    except HmsCatalogError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print("\nSpark read the demo catalog natively (its Parquet reader over hms-catalog's split plans). Serve it yourself:\n"
          f"  .venv/bin/hms-catalog --home {home} serve --spark-connect\n"
          "and query it from any PySpark: SparkSession.builder.remote('sc://127.0.0.1:15002').getOrCreate(),\n"
          f"or browse it at http://127.0.0.1:8181/ui (sign in with the token in {home / 'server.token'})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m spark_connector.demo", description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path(".demo"), help="the directory python -m hms_catalog.demo used")
    return run(parser.parse_args().dir)


if __name__ == "__main__":
    sys.exit(main())
