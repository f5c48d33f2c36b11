"""Events at rate (issue 43 §4): other clients change the metastore 10,000 times in a minute while catalog
services follow its notification log; how long until a service has dropped what each change made stale and its
change feed announces it.

One embedded metastore (Derby, or ``--db postgresql://...``), one database of ``--tables`` partitioned tables,
``--writers`` threads each with its own thrift connection and its own tables, paced together to ``--changes``
changes in ``--seconds``: partitions added (one per call), partitions dropped (one the writer added) and tables
altered (a parameter set). Two catalog services (``hms-catalog serve``, a process each) follow the log every
``--interval-ms``: this tree ("after") and, as the peer in the same run, a git worktree of ``--before`` (the
last commit without batched events). A reader thread per service keeps the tables' partition lists warm in its
caches (``--reads`` a second) so that events drop real entries.

The lag of a change is the time from the writer's call returning (the metastore committed its event before
answering) to a subscriber of the service's change feed (``GET .../changes?wait=``, a long poll, as a client
follows it) receiving the change, matched by object (``added partition db.t p=v``, ``dropped ...``, ``changed
table db.t``, in order per table). A follower drops the cache entries of a batch before it announces the
batch, so the feed's answer is also when the caches were dropped. At the end each service's partition lists are
checked against the metastore's, and each side's follower replays the run's whole log as fast as it can (a
process of its own, from its own tree): its capacity, apart from what the metastore can take and from the
polling interval. ``--profile FILE`` records this tree's service with py-spy (collapsed stacks).

    python benchmarks/bench_events.py [--changes 10000] [--seconds 60] [--writers 8] [--tables 32]
        [--interval-ms 1000] [--before 1b98000 | --no-before] [--db derby|postgresql://...] [--profile FILE]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import Service, progress, save
from _events_load import (
    CATALOG,
    DATABASE,
    SEED_PARTITIONS,
    Reader,
    Subscriber,
    Writer,
    current_event,
    event_ids,
    make_tables,
    percentile,
    process_cpu,
)

from hms_catalog.client import HmsClientPool
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris
from hms_catalog.remote import CatalogServiceClient

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "1b98000"  # the last commit whose follower applied events one at a time
GOAL_SECONDS = 5.0
_REPLAY = """
import json, sys, time
from hms_catalog import open_session
uri, home, after, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
session = open_session(home)
session.run_one(f"CREATE CATALOG replay PROPERTIES ('type'='hms', 'hive.metastore.uris'='{uri}', "
                f"'hive.enable_hms_events_incremental_sync'='true', 'hive.hms_events_batch_size_per_rpc'='{batch}')")
follower = session.manager.catalog("replay").follower
follower.lease.anchor(lambda: after)
assert follower.lease.hold()
follower.begin()
began, cpu = time.perf_counter(), time.process_time()
follower.poll()
seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
events = follower.status().events
session.manager.close()
print(json.dumps({"events": events, "seconds": round(seconds, 2), "events_per_second": round(events / seconds),
                  "cpu_ms_per_event": round(cpu * 1000 / max(1, events), 3)}))
"""


def replay(tree: Path, uri: str, home: Path, after: int, batch_size: int) -> dict[str, Any]:
    """The run's events applied again from ``after`` by a follower in a process of its own from ``tree``, as fast
    as it can (a catalog of a session on a home of its own, following under its lease as a service does)."""
    done = subprocess.run([sys.executable, "-c", _REPLAY, uri, str(home), str(after), str(batch_size)], cwd=tree,
                          capture_output=True, text=True, check=False, timeout=1800)
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def worktree(ref: str, directory: Path) -> Path:
    """A checkout of ``ref`` beside this one (its own sources; the same virtualenv), as bench_gate makes one."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(directory), ref], check=True,
                   capture_output=True, text=True)
    return directory


def follower_figures(client: CatalogServiceClient) -> dict[str, Any]:
    """The follower's counters from /v1/health and its lines from /metrics (none before they existed)."""
    health = client.health()["followers"].get(CATALOG, {})
    lines = [line for line in client.metrics_text().splitlines()
             if line.startswith("hms_catalog_events") and f'catalog="{CATALOG}"' in line]
    return {"health": health, "metrics": lines}


class Side:
    """One followed service: its process, its catalog, its feed's subscriber and its reader."""

    def __init__(self, name: str, tree: Path, home: Path, uri: str, args: argparse.Namespace, names: list[str]) -> None:
        self.name, self.tree = name, tree
        self.service = Service(home, cwd=tree)
        self.admin = self.service.client()
        self.admin.create_catalog(CATALOG, {
            "type": "hms", "hive.metastore.uris": uri, "hive.enable_hms_events_incremental_sync": "true",
            "hive.hms_events_polling_interval_ms": str(args.interval_ms),
            "hive.hms_events_batch_size_per_rpc": str(args.batch_size)})
        for table in names:
            self.admin.partitions(CATALOG, DATABASE, table)  # warm
        self.subscriber = Subscriber(self.service.client(), self.admin.changes(CATALOG)["current"])
        self.reader = Reader(self.service.client(), names, args.reads)
        self.cpu = 0.0

    def start(self) -> None:
        self.cpu = process_cpu(self.service.process.pid)
        self.subscriber.start()
        self.reader.start()

    def finish(self, names: list[str], check: HmsClientPool) -> dict[str, Any]:
        """Stop reading and following the feed; the follower's figures and the partition lists that are wrong."""
        cpu = process_cpu(self.service.process.pid) - self.cpu
        for thread in (self.reader, self.subscriber):
            thread.stopping.set()
            thread.join()
        wrong = [name for name in names if sorted(self.admin.partitions(CATALOG, DATABASE, name))
                 != sorted(check.call("get_partition_names", DATABASE, name, -1))]
        return {"service_cpu_seconds": round(cpu, 1), "follower": follower_figures(self.admin),
                "partition_lists_wrong": wrong}

    def close(self, log: str) -> None:
        self.admin.close()
        self.service.stop()
        if log:
            Path(log).write_text("".join(self.service.lines), encoding="utf-8")


def lags(writers: list[Writer], subscriber: Subscriber) -> tuple[list[float], int, int]:
    """Each change's lag, matched in order per feed key; how many changes the feed never announced; and how many
    announced ones were left untimed: when one of several changes of one object (the alters of a table) was
    never announced, which one cannot be told, and matching the rest in order would time each against the
    next one's call."""
    found: list[float] = []
    missing = untimed = 0
    for writer in writers:
        for key, returned in writer.returned.items():
            arrived = subscriber.arrived.get(key, [])
            if len(arrived) < len(returned):
                missing += len(returned) - len(arrived)
                if len(returned) > 1:
                    untimed += len(arrived)
                    continue
            found += [max(0.0, at - sent) for sent, at in zip(returned, arrived)]
    return found, missing, untimed


def lag_summary(writers: list[Writer], side: Side, drained: float | None) -> dict[str, Any]:
    found, missing, untimed = lags(writers, side.subscriber)
    return {
        "lag_from_write_to_feed": {
            "changes_timed": len(found), "p50_seconds": round(statistics.median(found), 3),
            "p95_seconds": round(percentile(found, 0.95), 3), "p99_seconds": round(percentile(found, 0.99), 3),
            "max_seconds": round(max(found), 3), "mean_seconds": round(statistics.fmean(found), 3)} if found else {},
        "goal_p95_under_5s": bool(found) and percentile(found, 0.95) < GOAL_SECONDS,
        "feed": {"announced": side.subscriber.seen(), "never_announced": missing, "announced_untimed": untimed,
                 "long_poll_answers": side.subscriber.answers, "truncated_answers": side.subscriber.truncated,
                 "catalog_invalidations": side.subscriber.catalog_invalidations,
                 "drained_after_writes_seconds": None if drained is None else round(drained, 2)},
    }


def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    trees = {"after": ROOT} if args.no_before else {"before": worktree(args.before, root / "before"), "after": ROOT}
    try:
        return measure(args, root, trees)
    finally:
        if "before" in trees:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(trees["before"])],
                           capture_output=True, check=False)


def measure(args: argparse.Namespace, root: Path, trees: dict[str, Path]) -> dict[str, Any]:
    load_at_start = os.getloadavg()
    sides: dict[str, Side] = {}
    profiler: subprocess.Popen[bytes] | None = None
    with EmbeddedMetastore(root / "metastore", database=args.db) as metastore:
        try:
            progress(f"making {args.tables} tables of {SEED_PARTITIONS} partitions")
            tables = make_tables(metastore.uri, metastore.warehouse, args.tables)
            names = [table.tableName for table in tables]
            for name, tree in trees.items():
                progress(f"starting the service of {name}")
                sides[name] = Side(name, tree, root / f"home-{name}", metastore.uri, args, names)
            first_event = current_event(metastore.uri)
            metastore_pid = metastore.status().pid or 0
            metastore_cpu = process_cpu(metastore_pid)
            for side in sides.values():
                side.start()
            if args.profile:
                profiler = subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid",
                                             str(sides["after"].service.process.pid), "--format", "raw", "--rate", "50",
                                             "--nonblocking", "--output", args.profile, "--duration", "3600"],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            progress(f"{args.writers} writers: {args.changes} changes in {args.seconds:g} s; services polling every "
                     f"{args.interval_ms} ms")
            start = time.monotonic() + 1.0
            share = args.changes // args.writers
            period = args.seconds / share
            writers = [Writer(index, metastore.uri, tables[index::args.writers], start + index * period / args.writers,
                              period, share) for index in range(args.writers)]
            for writer in writers:
                writer.start()
            for writer in writers:
                writer.join()
            written_in = time.monotonic() - start
            made = sum(sum(len(times) for times in writer.returned.values()) for writer in writers)
            progress(f"{made} changes made in {written_in:.1f} s; waiting for the feeds")
            deadline = time.monotonic() + args.drain
            drained: dict[str, float] = {}
            while len(drained) < len(sides) and time.monotonic() < deadline:
                for name, side in sides.items():
                    if name not in drained and side.subscriber.seen() >= made:
                        drained[name] = time.monotonic() - start - written_in
                time.sleep(0.2)
            if profiler is not None:
                profiler.send_signal(signal.SIGINT)  # py-spy writes what it sampled on SIGINT
                profiler.wait(timeout=60)
            metastore_cpu = process_cpu(metastore_pid) - metastore_cpu
            progress("checking each service's partition lists against the metastore's")
            check = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri), pool_size=1))
            finished = {name: side.finish(names, check) for name, side in sides.items()}
            ids = event_ids(check, first_event)
            check.close()
            for name, side in sides.items():
                progress(f"replaying the run's events with the follower of {name}")
                finished[name]["replay"] = replay(side.tree, metastore.uri, root / f"replay-{name}", first_event,
                                                  args.batch_size)
        finally:
            if profiler is not None and profiler.poll() is None:
                profiler.kill()
            for name, side in sides.items():
                side.close(f"{args.service_log}.{name}" if args.service_log else "")

    calls = [seconds for writer in writers for seconds in writer.call_seconds]
    ops: collections.Counter[str] = collections.Counter()
    for writer in writers:
        ops.update(writer.counts)
    report: dict[str, Any] = {
        "setup": {"changes": args.changes, "seconds": args.seconds, "writers": args.writers, "tables": args.tables,
                  "events_polling_interval_ms": args.interval_ms, "events_batch_size": args.batch_size,
                  "reads_per_second": args.reads, "metastore_database": "derby" if args.db == "derby" else "postgresql",
                  "before": None if args.no_before else args.before, "cores": os.cpu_count(),
                  "load_average_at_start": [round(x, 2) for x in load_at_start]},
        "writes": {"made": made, "by_kind": dict(ops), "errors": sum(len(w.errors) for w in writers),
                   "first_errors": [e for w in writers for e in w.errors][:3], "seconds": round(written_in, 1),
                   "per_minute": round(made * 60 / written_in), "call_p50_ms": round(statistics.median(calls) * 1000, 1)
                   if calls else None, "call_p95_ms": round(percentile(calls, 0.95) * 1000, 1) if calls else None,
                   "metastore_cpu_seconds": round(metastore_cpu, 1)},
        "metastore_log": ids,
    }
    for name, side in sides.items():
        report[name] = {**lag_summary(writers, side, drained.get(name)), **finished[name]}
    if "before" in sides:
        report["after_over_before"] = {
            key: round(report["after"]["lag_from_write_to_feed"][key] / report["before"]["lag_from_write_to_feed"][key], 2)
            for key in ("p50_seconds", "p95_seconds", "max_seconds")}
        report["after_over_before"]["service_cpu"] = round(
            report["after"]["service_cpu_seconds"] / max(0.1, report["before"]["service_cpu_seconds"]), 2)
        before_replay, after_replay = report["before"]["replay"], report["after"]["replay"]
        if "events_per_second" in before_replay and "events_per_second" in after_replay:
            report["after_over_before"]["replay_events_per_second"] = round(
                after_replay["events_per_second"] / before_replay["events_per_second"], 1)
    return report



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--tables", type=int, default=32)
    parser.add_argument("--interval-ms", type=int, default=1000, help="the service's events polling interval")
    parser.add_argument("--batch-size", type=int, default=500, help="hive.hms_events_batch_size_per_rpc")
    parser.add_argument("--reads", type=float, default=10.0, help="partition listings a second through the service")
    parser.add_argument("--db", default="derby", help="the metastore's database: derby, or postgresql[://...]")
    parser.add_argument("--label", default="", help="saved as results/events[-LABEL].json")
    parser.add_argument("--before", default=BEFORE, help=f"the commit to compare with (default {BEFORE}, the last "
                        "without batched events)")
    parser.add_argument("--no-before", action="store_true", help="follow with this tree's service only")
    parser.add_argument("--drain", type=float, default=60.0, help="seconds to wait for the feeds after the writes")
    parser.add_argument("--profile", default="", help="record this tree's service with py-spy into this file (collapsed)")
    parser.add_argument("--service-log", default="", help="write each service's stderr into FILE.before, FILE.after")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-events-") as scratch:
        report = run(args, Path(scratch))
    save("events" + (f"-{args.label}" if args.label else ""), report)


if __name__ == "__main__":
    main()
