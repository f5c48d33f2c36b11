"""Promoting a folder of 10,000 files (1,000 partitions) to a table: how much is listed and opened.

Measured in one run on the same folder, through one counting filesystem (pyarrow's own handler interface
over the local filesystem), against the peer every Python engineer reaches for, ``pyarrow.dataset``
discovery with hive partitioning:
- ours: one recursive listing and a sample of files opened (the format and schema), then the kept
  layout makes a later session's DESCRIBE open nothing;
- pyarrow.dataset: its discovery of the same folder (listing, and the files it opens for the schema).

    python benchmarks/bench_filesystem.py [--partitions 1000] [--files-per-partition 10]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from _common import progress, save

from hms_catalog import open_session
from hms_catalog.filesystem.detect import detect_table, list_table
from tests.support.counting_fs import CountingHandler


def write_folder(root: Path, partitions: int, per_partition: int) -> int:
    table = pa.table({"id": pa.array(range(100), pa.int64()), "name": [f"n{i}" for i in range(100)],
                      "amount": [i * 0.5 for i in range(100)]})
    for partition in range(partitions):
        folder = root / f"shard={partition}"
        folder.mkdir(parents=True, exist_ok=True)
        for index in range(per_partition):
            pq.write_table(table, folder / f"part-{index:05d}.parquet")
        if partition % 200 == 199:
            progress(f"wrote {partition + 1} partitions")
    return partitions * per_partition


def ours(path: Path) -> dict[str, object]:
    handler = CountingHandler()
    counting = pafs.PyFileSystem(handler)
    started = time.perf_counter()
    listing = list_table(counting, str(path))
    assert listing is not None
    layout = detect_table(counting, listing, 8)
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 3), "listings": handler.listings, "files_opened": len(set(handler.opened)),
            "format": layout.format, "partition_keys": [list(key) for key in layout.partition_keys],
            "columns": len(layout.columns)}


def pyarrow_discovery(path: Path) -> dict[str, object]:
    handler = CountingHandler()
    counting = pafs.PyFileSystem(handler)
    started = time.perf_counter()
    dataset = ds.dataset(str(path), format="parquet", partitioning="hive", filesystem=counting)
    schema = dataset.schema
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 3), "listings": handler.listings, "files_opened": len(set(handler.opened)),
            "files": len(dataset.files), "columns": len(schema)}


def catalog_sessions(root: Path, home: Path) -> dict[str, object]:
    """The whole path through a filesystem catalog: the first DESCRIBE promotes, a later session's reads the kept layout."""
    session = open_session(home)
    session.run_one(f"CREATE CATALOG lake PROPERTIES ('type'='filesystem', 'root'='{root.as_uri()}')")
    started = time.perf_counter()
    session.run_one("DESCRIBE lake.db.events")
    first = time.perf_counter() - started
    session.manager.close()
    from hms_catalog.manager import CatalogManager
    from hms_catalog.state import open_definitions

    later = CatalogManager(open_definitions(home))
    started = time.perf_counter()
    later.catalog("lake").table("db", "events").schema  # noqa: B018 - loads it
    second = time.perf_counter() - started
    detections = later.catalog("lake").metrics().calls.get("detect", 0)
    later.close()
    return {"first_describe_seconds": round(first, 3), "later_session_describe_seconds": round(second, 4),
            "later_session_detections": detections}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--files-per-partition", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-filesystem-") as scratch:
        root = Path(scratch) / "lake"
        folder = root / "db" / "events"
        files = write_folder(folder, args.partitions, args.files_per_partition)
        progress(f"{files} files written; promoting")
        ours_first = ours(folder)  # the OS's directory cache is warm for both after this one
        peer = pyarrow_discovery(folder)
        ours_again = ours(folder)
        whole = catalog_sessions(root, Path(scratch) / "home")
    report = {
        "files": files, "partitions": args.partitions,
        "hms_catalog_promotion": ours_again, "hms_catalog_promotion_cold": ours_first,
        "pyarrow_dataset_discovery": peer,
        "ratio_seconds_ours_to_pyarrow": round(float(ours_again["seconds"]) / float(peer["seconds"]), 2),  # type: ignore[arg-type]
        "catalog": whole,
    }
    save("filesystem", report)


if __name__ == "__main__":
    main()
