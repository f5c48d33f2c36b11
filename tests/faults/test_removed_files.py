"""A data file removed after planning: reading its split fails with the stale-plan error that names the
file, through the readers and through Spark; the other splits still read. (A file removed between the
reader's check and its open: tests/planner/test_vanished_files.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hms_catalog.formats.schema import TableSchema
from planner import Split, SplitPlan, plan_table
from planner.readers import FileChangedError, read_split
from tests.faults._data import partitioned_table
from tests.faults.conftest import FaultsMetastore
from tests.support import hms
from tests.support.sessions import open_catalog, read_hms

pytestmark = [pytest.mark.metastore, pytest.mark.slow]


def _local(path: str) -> Path:
    return Path(path[len("file://"):] if path.startswith("file://") else path.removeprefix("file:"))


def _read(split: Split, schema: TableSchema) -> int:
    columns = [c for c in schema.columns if c.readable]
    target = schema.arrow_schema([c.name for c in columns])
    batches = list(read_split(split, columns, target, table_columns=schema.data_columns))
    return pa.Table.from_batches(batches, schema=target).num_rows


@pytest.fixture
def plan(faults_server: FaultsMetastore, faults_admin: hms.Admin, unique_name: str, home: Path) -> SplitPlan:
    """A plan of three single-file partitions, made before anything is removed."""
    partitioned_table(faults_admin, unique_name, "facts", ["a", "b", "c"])
    session = open_catalog(home, faults_server.uri)
    catalog = session.manager.catalog("hive")
    planned = plan_table(catalog, catalog.table(unique_name, "facts"))
    session.manager.close()
    assert len(planned.splits) == 3
    return planned


def test_a_file_removed_after_planning_is_named_when_its_split_is_read(plan: SplitPlan) -> None:
    gone = plan.splits[1]
    _local(gone.path).unlink()
    with pytest.raises(FileChangedError, match="no longer exists; the plan is stale: run REFRESH TABLE") as raised:
        _read(gone, plan.schema)
    assert gone.path in str(raised.value)
    assert [_read(split, plan.schema) for split in (plan.splits[0], plan.splits[2])] == [10, 10]


def test_spark_names_the_removed_file(spark: Any, plan: SplitPlan, home: Path) -> None:
    from pyspark.errors import PySparkException

    gone = plan.splits[2]
    _local(gone.path).unlink()
    frame = read_hms(spark, home, plan.full_name, plan=plan.dumps())
    with pytest.raises(PySparkException) as raised:  # the worker's error, as Spark carries it back
        frame.collect()
    message = str(raised.value)
    assert "FileChangedError" in message and f"{gone.path} no longer exists" in message
    print(f"\nSpark's error for a file removed after planning: {message.strip().splitlines()[-1][:300]}")
