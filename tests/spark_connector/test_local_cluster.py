"""The connector on ``local-cluster``: executors in JVMs of their own, where splits, write tasks and the
connector's settings must be serialised and shipped to reach them (in ``local[n]``, as the rest of the suite
runs, a part that never reaches an executor cannot fail). The driver runs in a subprocess: a Python process
holds one SparkSession, and this one's is ``local[2]``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.spark_connector.conftest import CATALOG
from tests.support.hms import Admin
from tests.support.service import Server

JOB = Path(__file__).with_name("local_cluster_job.py")


@pytest.mark.slow  # a driver and two executor JVMs, about a minute
def test_reads_writes_and_ddl_on_executors_of_their_own(connector_service: Server, admin: Admin, unique_name: str) -> None:
    environment = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    try:
        done = subprocess.run([sys.executable, str(JOB), connector_service.url, connector_service.token, CATALOG, unique_name],
                              capture_output=True, text=True, env=environment, timeout=300, check=False,
                              cwd=Path(__file__).parents[2])
        assert done.returncode == 0, done.stdout + done.stderr[-4000:]
        line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
        assert json.loads(line.removeprefix("RESULT "))["counts"]["b"] == [7, 21]
        print(done.stdout)  # how long the cluster took to come up, and the job
        # What the metastore holds, read without Spark: the partitions committed, each folder with its rows.
        import pyarrow.parquet as pq

        partitions = admin.pool.call("get_partitions", unique_name, "events", -1)
        assert sorted(p.values[0] for p in partitions) == ["a", "b", "c", "d"]
        rows = {p.values[0]: sum(pq.read_table(f).num_rows for f in Path(urlsplit(p.sd.location).path).iterdir()
                                 if not f.name.startswith((".", "_")))
                for p in partitions}
        assert rows == {"a": 1000, "b": 7, "c": 5, "d": 0}
    finally:
        if unique_name in admin.pool.call("get_all_databases"):
            admin.drop_database(unique_name)
