"""Split arithmetic throughput: the pure rule, and whole splits (with hosts) as the planner makes them.

The requirement is at least 1,000,000 splits per second. The peer is the plain loop reading of the rule
(the way FileSplitter-style planners cut a file), measured on the same files in the same run.

    python benchmarks/bench_split_rule.py [--files 200000]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import save, timed

from hms_catalog.properties import ScanConfig
from planner._gc import paused_gc
from planner.listing import Blocks, FileEntry
from planner.split_rule import split_ranges
from planner.splitter import cut_file

MiB = 1024 * 1024


def plain_loop(length: int, size: int) -> list[tuple[int, int]]:
    splits = []
    offset, remaining = 0, length
    while remaining / size > 1.1:
        splits.append((offset, size))
        offset += size
        remaining -= size
    if remaining > 0:
        splits.append((offset, remaining))
    return splits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=200_000)
    args = parser.parse_args()
    rng = random.Random(7)
    sizes = [rng.choice([rng.randint(1, 128 * MiB), rng.randint(128 * MiB, 4096 * MiB)]) for _ in range(args.files)]
    size = 128 * MiB

    seconds, ranges = timed(lambda: [split_ranges(length, size) for length in sizes])
    count = sum(len(r) for r in ranges)
    loop_seconds, loop_ranges = timed(lambda: [plain_loop(length, size) for length in sizes])
    assert loop_ranges == ranges

    hosts = ("host-a", "host-b", "host-c")
    entries = [
        FileEntry(f"hdfs://nn/warehouse/t/part-{i:06d}.parquet", length, 0,
                  Blocks(tuple(range(0, length, 128 * MiB)) or (0,), (hosts,) * max(1, -(-length // (128 * MiB))), 128 * MiB))
        for i, length in enumerate(sizes)
    ]
    config = ScanConfig()
    def cut_all() -> list[object]:
        with paused_gc():  # as the planners cut
            return [s for e in entries for s in cut_file(e, config, file_format="parquet")]

    cut_seconds, splits = timed(cut_all)
    assert len(splits) == count

    save("split_rule", {
        "files": args.files,
        "splits": count,
        "rule_splits_per_second": round(count / seconds),
        "plain_loop_splits_per_second": round(count / loop_seconds),
        "full_splits_per_second": round(count / cut_seconds),
        "ratios": {"rule_over_plain_loop": round(loop_seconds / seconds, 2)},
        "requirement_splits_per_second": 1_000_000,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
