"""The Spark plugin registers every catalog of the service in an application that configures none:
a PySpark job started by spark-submit with only the jar, the plugin and the service's address."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hms_catalog.jdk import spark_jars_dir
from spark_connector import CATALOG_CLASS, PLUGIN_CLASS, connector_jar
from tests.planner.test_hudi_merge import TRIPS, hudi_table, unzip_table
from tests.spark.test_hudi_snapshot import register_snapshot_table
from tests.support.hms import Admin
from tests.support.service import Server

JOB = Path(__file__).with_name("plugin_job.py")
SCALA_JOB = Path(__file__).with_name("scala_job.scala")


def spark_submit(*arguments: str, token: str | None, tool: str = "spark-submit",
                 environment: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    submit = spark_jars_dir().parent / "bin" / tool
    environment = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
                   **(environment or {})}
    token_conf = ["--conf", f"spark.hmscatalog.token={token}"] if token is not None else []
    command = [str(submit), "--master", "local[1]", "--jars", str(connector_jar()), "--conf", f"spark.plugins={PLUGIN_CLASS}",
               "--conf", "spark.ui.enabled=false", *token_conf, *arguments]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300, check=False)


def test_spark_submit_with_the_plugin_sees_every_catalog(connector_service: Server, written: str, admin: Admin,
                                                         unique_name: str, tmp_path: Path) -> None:
    root = unzip_table(TRIPS, tmp_path)
    register_snapshot_table(admin, unique_name, root, hudi_table(root))  # a snapshot with log files to merge
    admin.pool.call("create_table", _partitioned_parquet(written, "submitted"))  # written through the catalog by the job
    done = spark_submit("--conf", f"spark.hmscatalog.uri={connector_service.url}", str(JOB), written,
                        f"{unique_name}.t_rt", token=connector_service.token,
                        environment={"HMS_WRITE_TABLE": f"conn.{written}.submitted"})
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    seen = json.loads(line.removeprefix("RESULT "))
    assert seen["registered"] == CATALOG_CLASS
    assert {"pq", "orc", "txt"} <= set(seen["tables"])
    assert seen["count"] == 3
    # No Python source in this job: a table only it can read fails, saying why and what to do.
    assert "cannot read conn." in seen["refused"] and "Hudi merge-on-read snapshot" in seen["refused"]
    assert "PySpark driver reads it through the Python source" in seen["refused"]
    assert seen["written"] == {"count": 10, "copy": 5}
    assert sorted(admin.pool.call("get_partition_names", written, "submitted", -1)) == ["dt=0", "dt=1"]


def _partitioned_parquet(database: str, name: str) -> Any:
    """A Hive Parquet table (id BIGINT) PARTITIONED BY (dt STRING), as Spark's own DDL makes it."""
    from hms_catalog.client.hive_thrift import ttypes
    from hms_catalog.formats.storage import STORAGE_FORMATS

    parquet = STORAGE_FORMATS["PARQUET"]
    sd = ttypes.StorageDescriptor(cols=[ttypes.FieldSchema("id", "bigint", "")], location=None, inputFormat=parquet.input_format,
                                  outputFormat=parquet.output_format, numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
                                  serdeInfo=ttypes.SerDeInfo(serializationLib=parquet.serde, parameters={}))
    return ttypes.Table(tableName=name, dbName=database, owner="test", sd=sd, partitionKeys=[ttypes.FieldSchema("dt", "string", "")],
                        parameters={}, tableType="MANAGED_TABLE")


def test_the_plugin_without_a_service_address_says_what_is_missing(written: str) -> None:
    done = spark_submit(str(JOB), written, token=None)
    assert done.returncode != 0
    assert "spark.hmscatalog.uri" in done.stderr and "is not set" in done.stderr


def test_a_scala_job_reads_the_catalogs_through_the_plugin(connector_service: Server, written: str, spark: Any) -> None:
    done = spark_submit("--conf", f"spark.hmscatalog.uri={connector_service.url}", "-i", str(SCALA_JOB),
                        token=connector_service.token, tool="spark-shell", environment={"HMS_DB": written})
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    tables, rows = line.removeprefix("RESULT tables=").split(" rows=")
    assert {"pq", "orc", "txt"} <= set(tables.split(","))
    theirs = sorted(f"{row.id}|{row.dt}" for row in spark.sql(f"SELECT id, dt FROM spark_catalog.{written}.pq WHERE hr = 2").collect())
    assert sorted(rows.split(",")) == theirs
