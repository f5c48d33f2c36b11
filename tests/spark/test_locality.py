"""The locality-aware path: the split hosts reach Spark's scheduler, and the rows are right."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from hms_catalog import open_session
from planner import plan_table
from planner.spark.locality import locality_dataframe, splits_rdd
from tests.spark.test_datasource import DB, home, rows_of, tables  # noqa: F401 - the fixtures of that module


def _plan(home: Path, table: str) -> Any:  # noqa: F811
    session = open_session(home)
    catalog = session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(DB, table))
    session.manager.close()
    return plan


def test_each_partition_prefers_its_splits_hosts(spark: Any, tables: str, home: Path) -> None:  # noqa: F811
    plan = _plan(home, "lines")
    placed = dataclasses.replace(plan, splits=tuple(
        split._replace(hosts=(f"node-{i % 3}", "localhost", f"node-{(i + 1) % 3}")) for i, split in enumerate(plan.splits)))
    rdd = splits_rdd(spark, placed)
    scala_rdd = rdd._jrdd.rdd()
    partitions = scala_rdd.partitions()
    assert len(partitions) == len(placed.splits)
    for index, split in enumerate(placed.splits):
        preferred = list(spark.sparkContext._jvm.scala.jdk.javaapi.CollectionConverters.asJava(
            scala_rdd.preferredLocations(partitions[index])))
        assert preferred == [host for host in split.hosts if host != "localhost"]  # as Spark's own file RDDs


def test_rows_read_through_the_locality_path(spark: Any, tables: str, home: Path) -> None:  # noqa: F811
    plan = _plan(home, "parquet_all")
    frame = locality_dataframe(spark, plan)
    assert frame.rdd.getNumPartitions() == len(plan.splits)
    assert rows_of(frame) == rows_of(spark.table(f"{DB}.parquet_all"))
