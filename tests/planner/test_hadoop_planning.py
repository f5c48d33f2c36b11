"""Planning a table on a Hadoop filesystem through the catalog's Java helper (no libhdfs): a folder catalog
on ``viewfs://`` (a mount table over local folders, from the catalog's properties) is listed, detected,
pruned, given its block hosts by Hadoop, and its splits read back through the helper."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hms_catalog import open_session
from planner import plan_table
from planner.hadoop_blocks import StorageBlockLocator
from planner.listing import LocalBlockLocator
from planner.readers import read_split

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

CLUSTER = "lakecluster"


def test_a_viewfs_folder_catalog_plans_with_hadoop_block_hosts(tmp_path: Path, home: Path) -> None:
    lake = tmp_path / "mounted"
    for day, ids in (("2026-01-01", [1, 2]), ("2026-01-02", [3, 4, 5])):
        folder = lake / "db" / "events" / f"dt={day}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"id": ids}), folder / "part-0.parquet")
    session = open_session(home)
    session.run_one(
        "CREATE CATALOG vlake PROPERTIES ('type'='filesystem', "
        f"'root'='viewfs://{CLUSTER}/lake', 'fs.viewfs.mounttable.{CLUSTER}.link./lake'='{lake.as_uri()}')"
    )
    catalog = session.manager.catalog("vlake")
    try:
        table = catalog.table("db", "events")
        locator = StorageBlockLocator(catalog.storage, LocalBlockLocator(host="fallback"))
        plan = plan_table(catalog, table, "dt = '2026-01-02'", locator=locator)
        assert plan.summary.partitions_scanned == 1  # pruned: one of the two days
        assert [split.path for split in plan.splits] == [f"viewfs://{CLUSTER}/lake/db/events/dt=2026-01-02/part-0.parquet"]
        assert locator.calls == 1 and plan.splits[0].hosts == ("localhost",)  # Hadoop's answer, not the fallback's
        columns = [c for c in plan.schema.columns if c.name == "id"]
        rows = [row for split in plan.splits
                for batch in read_split(split, columns, plan.schema.arrow_schema(["id"]), storage=catalog.storage)
                for row in batch.to_pylist()]
        assert sorted(row["id"] for row in rows) == [3, 4, 5]
        assert catalog.storage.hadoop_helper().starts == 1  # one JVM for the listing, blocks and reads
    finally:
        session.close()
        session.manager.close()  # the catalog's Java helper with it
