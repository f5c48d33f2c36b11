"""``hms-catalog serve --spark-connect``: a Spark Connect server with every catalog of the service as a
Spark catalog; the CLI's SELECT through ``--server`` runs there, and any PySpark client can connect."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog import open_session
from tests.support.service import Server, served

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

CLIENT = """
import json, sys
from pyspark.sql.connect.session import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).create()
database = sys.argv[2]
tables = sorted(row.tableName for row in spark.sql(f"SHOW TABLES IN conn.{database}").collect())
rows = sorted(tuple(row) for row in spark.sql(f"SELECT id, dt FROM conn.{database}.pq WHERE hr = 2").collect())
print("RESULT " + json.dumps({"tables": tables, "rows": rows}))
spark.stop()
"""


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.fixture(scope="module")
def with_connect(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str) -> Iterator[tuple[Server, str]]:
    home = tmp_path_factory.mktemp("connect") / "home"
    session = open_session(home)
    session.run_one(f"CREATE CATALOG conn PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}')")
    session.manager.close()
    with served(home, "--spark-connect", "--spark-connect-port", "0") as server:
        deadline = time.monotonic() + 240
        while True:
            health = server.request("GET", "/v1/health").json()["spark-connect"]
            if health["state"] != "starting":
                break
            assert time.monotonic() < deadline, "the Spark Connect server did not start"
            time.sleep(1)
        assert health["state"] == "ready", health
        yield server, health["url"]


def test_the_server_listens_on_the_services_host(with_connect: tuple[Server, str]) -> None:
    _, url = with_connect
    assert url.startswith("sc://127.0.0.1:")
    connect = [pid for pid in with_connect[0].descendants() if "SparkConnectServer" in _cmdline(pid)]
    assert connect, "no Spark Connect server among the service's processes"
    assert "spark.hmscatalog.token" not in _cmdline(connect[0])  # the token goes by environment


def test_a_pyspark_connect_client_queries_the_catalogs(with_connect: tuple[Server, str], written: str, spark: Any) -> None:
    _, url = with_connect
    done = subprocess.run([sys.executable, "-c", CLIENT, url, written], capture_output=True, text=True, timeout=300,
                          check=False, env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT ")).removeprefix("RESULT "))
    assert {"pq", "orc", "txt"} <= set(seen["tables"])
    theirs = sorted([row.id, row.dt] for row in spark.sql(f"SELECT id, dt FROM spark_catalog.{written}.pq WHERE hr = 2").collect())
    assert seen["rows"] == theirs


def test_the_clis_select_through_the_server_runs_on_spark_connect(with_connect: tuple[Server, str], written: str,
                                                                 spark: Any) -> None:
    server, _ = with_connect
    query = f"SELECT id, name, dt FROM conn.{written}.orc WHERE dt = '2024-01-01'"
    done = subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--server", server.url, "--token", server.token,
                           "--format", "json", "-e", query], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    rows = sorted(tuple(row) for row in answer["rows"])
    theirs = sorted(tuple(row) for row in spark.sql(query.replace("conn.", "spark_catalog.")).collect())
    assert rows == theirs
    # the service started no Spark of its own: its only JVM is the Spark Connect server
    assert not [pid for pid in server.descendants() if "pyspark-shell" in _cmdline(pid)]


def test_a_hudi_snapshot_with_log_files_reads_through_the_python_source_there(with_connect: tuple[Server, str], admin: Any,
                                                                              unique_name: str, tmp_path: Path) -> None:
    from tests.planner.test_hudi_merge import TRIPS, hudi_table, unzip_table
    from tests.spark.test_hudi_snapshot import register_snapshot_table, snapshot_of

    server, _ = with_connect
    root = unzip_table(TRIPS, tmp_path)
    table = hudi_table(root)
    register_snapshot_table(admin, unique_name, root, table)
    query = f"SELECT count(*) AS n, count(DISTINCT rider) AS riders FROM conn.{unique_name}.t_rt"
    done = subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--server", server.url, "--token", server.token,
                           "--format", "json", "-e", query], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = snapshot_of(table)
    assert json.loads(done.stdout.strip().splitlines()[-1])["rows"] == [[theirs.num_rows, len(set(theirs["rider"].to_pylist()))]]


WRITER = """
import json, sys
from pyspark.sql.connect.session import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).create()
table = sys.argv[2]
spark.sql(f"INSERT INTO {table} VALUES (1, 'x'), (2, 'y')")
spark.createDataFrame([(3, "x")], "id INT, dt STRING").writeTo(table).overwritePartitions()
spark.sql(f"CREATE TABLE {table}_ctas USING parquet AS SELECT * FROM {table}")
print("RESULT " + json.dumps(sorted(tuple(row) for row in spark.table(table + "_ctas").collect())))
spark.stop()
"""


def test_a_spark_connect_client_writes_through_the_catalogs(with_connect: tuple[Server, str], written: str, spark: Any) -> None:
    _, url = with_connect
    spark.sql(f"CREATE TABLE spark_catalog.{written}.connect_written (id INT) PARTITIONED BY (dt STRING) STORED AS PARQUET")
    done = subprocess.run([sys.executable, "-c", WRITER, url, f"conn.{written}.connect_written"], capture_output=True, text=True,
                          timeout=300, check=False, env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT ")).removeprefix("RESULT "))
    assert seen == [[2, "y"], [3, "x"]]
    spark.catalog.refreshTable(f"spark_catalog.{written}.connect_written")
    assert sorted(tuple(r) for r in spark.table(f"spark_catalog.{written}.connect_written").collect()) == [(2, "y"), (3, "x")]
