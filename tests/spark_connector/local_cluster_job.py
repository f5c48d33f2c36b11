"""A Spark driver on ``local-cluster[2,1,1024]``: two executors, each a JVM of its own, that get the connector
only as Spark ships ``spark.jars`` to executors. Through the catalog it makes a database and a partitioned
table (DDL), writes it (INSERT INTO, INSERT OVERWRITE of a static and of dynamic partitions), reads it back,
and asserts each answer; any failure exits non-zero. Prints one JSON line of what it read.

    python local_cluster_job.py <service url> <token> <catalog> <database>
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any


def main(url: str, token: str, catalog: str, database: str) -> None:
    from pyspark.sql import SparkSession

    from hms_catalog.demo.loopback import on_loopback
    from spark_connector import catalog_conf, connector_jar

    started = time.monotonic()
    builder = (on_loopback(SparkSession.builder.master("local-cluster[2,1,1024]").appName("local-cluster-job"))
               .config("spark.jars", str(connector_jar())).config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.session.timeZone", "UTC")
               # the executors' JVMs compile as the tests' drivers do (C1 only: tests/conftest.py)
               .config("spark.executor.extraJavaOptions", os.environ.get("SPARK_SUBMIT_OPTS", "")))
    for key, value in catalog_conf(catalog, url, token).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        _wait_for_executors(spark, 2)  # every task below runs outside the driver's JVM
        print(f"executors up after {time.monotonic() - started:.1f} s", flush=True)
        table = f"{catalog}.{database}.events"
        spark.sql(f"CREATE NAMESPACE {catalog}.{database}")
        spark.sql(f"CREATE TABLE {table} (id BIGINT, label STRING, dt STRING) USING parquet PARTITIONED BY (dt)")
        # Four write tasks (spread over both executors) into three partitions.
        spark.sql(f"INSERT INTO {table} SELECT /*+ REPARTITION(4) */ id, concat('v', id), "
                  "CASE WHEN id % 3 = 0 THEN 'a' WHEN id % 3 = 1 THEN 'b' ELSE 'c' END FROM range(3000)")
        spark.sql(f"INSERT OVERWRITE {table} PARTITION (dt = 'b') SELECT id, 'static' FROM range(7)")
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        spark.sql(f"INSERT OVERWRITE {table} SELECT /*+ REPARTITION(2) */ id, 'dynamic', 'c' FROM range(5)")
        read = {  # a scan of every partition, and one pruned to a single partition
            "counts": {row[0]: [row[1], row[2]] for row in
                       spark.sql(f"SELECT dt, count(*), sum(id) FROM {table} GROUP BY dt").collect()},
            "b": sorted(tuple(row) for row in spark.sql(f"SELECT id, label FROM {table} WHERE dt = 'b'").collect()),
        }
        assert read["counts"] == {"a": [1000, sum(range(0, 3000, 3))], "b": [7, 21], "c": [5, 10]}, read
        assert read["b"] == [(n, "static") for n in range(7)], read
        spark.sql(f"ALTER TABLE {table} ADD PARTITION (dt = 'd')")
        read["partitions"] = sorted(row[0] for row in spark.sql(f"SHOW PARTITIONS {table}").collect())
        assert read["partitions"] == ["dt=a", "dt=b", "dt=c", "dt=d"], read
        print(f"done after {time.monotonic() - started:.1f} s", flush=True)
        print("RESULT " + json.dumps(read), flush=True)
    finally:
        spark.stop()


def _wait_for_executors(spark: Any, wanted: int, timeout: float = 120.0) -> None:
    """Executors register after the session starts; tasks given before would wait for them anyway, but
    asserting they came makes a cluster that never starts them fail here, plainly."""
    deadline = time.monotonic() + timeout
    while (registered := spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1) < wanted:
        assert time.monotonic() < deadline, f"{registered} executors registered within {timeout:g} s, not {wanted}"
        time.sleep(0.5)


if __name__ == "__main__":
    main(*sys.argv[1:5])
