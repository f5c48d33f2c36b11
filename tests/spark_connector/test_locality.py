"""Where the connector's scan tasks ask to run: the hosts Spark's own scans of the same files ask for.

Spark holds a task that prefers a host with an executor on it until its locality wait passes, and in local
mode nothing offers the executor again once the tasks running have finished: a stage that mixes such tasks
with tasks preferring a host no executor has waits for ever (TPC-DS q75 stopped with no task running, the
connector's scans and coalesced shuffle reads in one stage, when its scans preferred the machine's name).
Hadoop's local filesystem places every block on ``localhost``, which Spark's file partitions never prefer:
the planner says the same, so local splits ask for no host, as Spark's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planner import LocalBlockLocator
from tests.support.spark_plans import preferred_hosts

LOCAL = f"locality{os.getpid()}"


@pytest.fixture(scope="module")
def table(spark: Any, connected: str) -> Iterator[str]:
    spark.sql(f"DROP DATABASE IF EXISTS {LOCAL} CASCADE")
    spark.sql(f"CREATE DATABASE {LOCAL}")
    spark.sql(f"CREATE TABLE {LOCAL}.events (id BIGINT, note STRING) PARTITIONED BY (day INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {LOCAL}.events PARTITION (day) SELECT id, concat('n', id), CAST(id % 3 AS INT) "
              "FROM range(300) DISTRIBUTE BY 2")
    yield f"{LOCAL}.events"
    spark.sql(f"DROP DATABASE IF EXISTS {LOCAL} CASCADE")


def test_scan_tasks_prefer_the_hosts_spark_prefers_for_its_own_scan_of_the_same_files(spark: Any, connected: str,
                                                                                    table: str) -> None:
    ours = preferred_hosts(spark, spark.sql(f"SELECT * FROM {connected}.{table}")._jdf.queryExecution().toRdd())
    theirs = preferred_hosts(spark, spark.sql(f"SELECT * FROM spark_catalog.{table}")._jdf.queryExecution().toRdd())
    assert ours == theirs, f"the connector's scan prefers {sorted(ours)}, Spark's own {sorted(theirs)}"
    assert not ours  # local files: no host to wait for (that the hosts reach Spark: tests/spark_connector/test_reads.py)


def test_local_blocks_are_placed_where_hadoops_local_filesystem_places_them(spark: Any, tmp_path: Path) -> None:
    data = tmp_path / "part-0.parquet"
    data.write_bytes(b"x" * 4096)
    jvm = spark._jvm
    local = jvm.org.apache.hadoop.fs.FileSystem.getLocal(spark.sparkContext._jsc.hadoopConfiguration())
    status = local.getFileStatus(jvm.org.apache.hadoop.fs.Path(data.as_uri()))
    hadoop_hosts = {host for block in local.getFileBlockLocations(status, 0, status.getLen()) for host in block.getHosts()}
    blocks = LocalBlockLocator().locate(data.as_uri(), 4096, 1 << 25)
    assert set(blocks.hosts[0]) == hadoop_hosts == {"localhost"}
