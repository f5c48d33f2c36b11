"""What reaching a catalog's storage costs, one section per store (each a function taking the parsed
arguments and a scratch folder and returning its part of the report, saved as ``results/storage.json``).

- ``hadoop_helper``: the Java helper that serves HDFS and other Hadoop filesystems without libhdfs, listing
  10,000 files in 100 folders through Hadoop's own ``file://`` client, against pyarrow's LocalFileSystem
  listing the same folders: one recursive listing of the root, and the 100 folders listed from 8 threads as
  the planner lists partitions (each way warmed up by as many unmeasured listings as measured ones). Its
  start-up (a JVM and Hadoop's client, paid once per service, not per plan) is reported apart.

    python benchmarks/bench_storage.py [--sections hadoop_helper] [--folders 100] [--files-per-folder 100]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow.fs as pafs
from _common import progress, save

from hms_catalog.storage.hadoop import HadoopHelper, hadoop_filesystem

_THREADS = 8  # the planner's listing parallelism by default


def _write_folders(root: Path, folders: int, per_folder: int) -> list[Path]:
    made = []
    for folder in range(folders):
        path = root / f"dt={folder:04d}"
        path.mkdir(parents=True)
        for index in range(per_folder):
            (path / f"part-{index:05d}.parquet").write_bytes(b"x" * (index % 7 + 1))
        made.append(path)
    return made


def _median(action: Callable[[], int], repeat: int, expected: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        found = action()
        times.append(time.perf_counter() - started)
        if found != expected:
            raise SystemExit(f"listed {found} entries where {expected} were expected")
    return round(statistics.median(times), 4)


def hadoop_helper(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    root = scratch / "hadoop" / "t"
    folders = _write_folders(root, args.folders, args.files_per_folder)
    files = args.folders * args.files_per_folder
    entries = files + args.folders  # the recursive listing includes the folders
    progress(f"{files} files in {args.folders} folders written; starting the helper")

    warm = HadoopHelper({})  # compiles the Java source once per version (not measured), then a first start
    warm.start()
    warm.close()
    starts = []
    for _ in range(args.repeat):
        helper = HadoopHelper({})
        started = time.perf_counter()
        helper.start()
        starts.append(time.perf_counter() - started)
        helper.close()

    local = pafs.LocalFileSystem()
    with HadoopHelper({}, name="bench") as helper, ThreadPoolExecutor(_THREADS) as pool:
        helper.start()
        started = time.perf_counter()
        helper.list(f"file://{folders[0]}")
        first_call = time.perf_counter() - started  # Hadoop's local filesystem made on the first call
        through = hadoop_filesystem(helper, "file://")
        progress("warming up (the JVM compiles the listing code in its first few runs), then listing")
        for _ in range(args.repeat):
            helper.list(f"file://{root}", recursive=True)
            local.get_file_info(pafs.FileSelector(str(root), recursive=True))
        measured = {
            "recursive_root": {
                "helper_seconds": _median(lambda: len(helper.list(f"file://{root}", recursive=True)), args.repeat, entries),
                "helper_pyarrow_handler_seconds": _median(
                    lambda: len(through.get_file_info(pafs.FileSelector(str(root), recursive=True))), args.repeat, entries),
                "pyarrow_local_seconds": _median(
                    lambda: len(local.get_file_info(pafs.FileSelector(str(root), recursive=True))), args.repeat, entries),
            },
            f"folders_from_{_THREADS}_threads": {
                "helper_seconds": _median(
                    lambda: sum(pool.map(lambda folder: len(helper.list(f"file://{folder}")), folders)), args.repeat, files),
                "pyarrow_local_seconds": _median(
                    lambda: sum(pool.map(lambda folder: len(local.get_file_info(pafs.FileSelector(str(folder)))), folders)),
                    args.repeat, files),
            },
        }
        starts_during_listing = helper.starts
    for part in measured.values():
        part["ratio_helper_to_pyarrow"] = round(part["helper_seconds"] / part["pyarrow_local_seconds"], 2)
    return {
        "files": files, "folders": args.folders, "filesystem": "Hadoop's file:// client (no NameNode here)",
        "startup_seconds_median": round(statistics.median(starts), 3),
        "startup_seconds_all": [round(value, 3) for value in starts],
        "first_call_seconds": round(first_call, 4),
        "jvm_starts_for_all_listings": starts_during_listing,
        **measured,
    }


def s3_planning(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    from _storage_s3 import plan_on_s3_and_local

    return plan_on_s3_and_local(scratch, partitions=args.partitions, repeat=args.repeat)


SECTIONS: dict[str, Callable[[argparse.Namespace, Path], dict[str, Any]]] = {
    "hadoop_helper": hadoop_helper, "s3_planning": s3_planning,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", nargs="+", choices=sorted(SECTIONS), default=sorted(SECTIONS))
    parser.add_argument("--folders", type=int, default=100)
    parser.add_argument("--files-per-folder", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--partitions", type=int, default=1000)
    args = parser.parse_args()
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as scratch:
        for name in args.sections:
            progress(f"section {name}")
            report[name] = SECTIONS[name](args, Path(scratch) / name)
    save("storage", report)


if __name__ == "__main__":
    main()
