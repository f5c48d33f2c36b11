"""The load of bench_events.py: writers changing the metastore at a paced rate, a subscriber of a service's change
feed and a reader keeping its caches warm, each on a thread of its own; and the metastore's own view of the log."""

from __future__ import annotations

import collections
import os
import random
import threading
import time
from pathlib import Path

from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.properties import ClientConfig, parse_uris
from hms_catalog.remote import CatalogServiceClient
from tests.support.hms import Admin

__all__ = ["CATALOG", "DATABASE", "SEED_PARTITIONS", "Key", "Reader", "Subscriber", "Writer", "current_event",
           "event_ids", "make_tables", "percentile", "process_cpu"]

DATABASE, CATALOG = "bench_events", "hive"
SEED_PARTITIONS = 20  # per table, before the services start: lists worth caching
Key = tuple[str, str]  # (kind, object) as the feed names a change
_TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, every thread) a process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


class Writer(threading.Thread):
    """Changes its own tables at its share of the rate; remembers when each call returned, by feed key."""

    def __init__(self, index: int, uri: str, tables: list[ttypes.Table], start: float, period: float,
                 changes: int) -> None:
        super().__init__(name=f"writer-{index}", daemon=True)
        self.index, self.uri, self.tables = index, uri, tables
        self.start_at, self.period, self.changes = start, period, changes
        self.returned: dict[Key, list[float]] = collections.defaultdict(list)
        self.call_seconds: list[float] = []
        self.counts: collections.Counter[str] = collections.Counter()
        self.errors: list[str] = []

    def run(self) -> None:
        pool = HmsClientPool(ClientConfig(uris=parse_uris(self.uri), pool_size=1, socket_timeout=120))
        rng = random.Random(self.index)
        added: dict[str, collections.deque[str]] = {t.tableName: collections.deque() for t in self.tables}
        try:
            for n in range(self.changes):
                time.sleep(max(0.0, self.start_at + n * self.period - time.monotonic()))
                table = self.tables[n % len(self.tables)]
                name, roll = table.tableName, rng.random()
                began = time.monotonic()
                try:
                    if roll < 0.2:
                        table.parameters["bench.n"] = str(n)
                        pool.call("alter_table", DATABASE, name, table)
                        key, op = ("changed", f"table {DATABASE}.{name}"), "alter_table"
                    elif roll < 0.55 and added[name]:
                        value = added[name].popleft()
                        pool.call("drop_partition", DATABASE, name, [value], False)
                        key, op = ("dropped", f"partition {DATABASE}.{name} p={value}"), "drop_partition"
                    else:
                        value = f"w{self.index}n{n}"
                        sd = ttypes.StorageDescriptor(**{**table.sd.__dict__, "location": f"{table.sd.location}/p={value}"})
                        pool.call("add_partitions", [ttypes.Partition(values=[value], dbName=DATABASE, tableName=name,
                                                                       sd=sd, parameters={})])
                        added[name].append(value)
                        key, op = ("added", f"partition {DATABASE}.{name} p={value}"), "add_partition"
                except Exception as error:  # noqa: BLE001 - counted and reported, the run goes on
                    self.errors.append(f"{type(error).__name__}: {error}")
                    continue
                now = time.monotonic()
                self.returned[key].append(now)
                self.call_seconds.append(now - began)
                self.counts[op] += 1
        finally:
            pool.close()


class Subscriber(threading.Thread):
    """Follows a service's change feed with long polls; remembers when each event-sourced change arrived."""

    def __init__(self, client: CatalogServiceClient, since: int) -> None:
        super().__init__(name="subscriber", daemon=True)
        self.client, self.since = client, since
        self.arrived: dict[Key, list[float]] = collections.defaultdict(list)
        self.answers = 0
        self.truncated = 0
        self.catalog_invalidations = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            log = self.client.changes(CATALOG, since=self.since, wait=2)
            now = time.monotonic()
            self.answers += 1
            self.truncated += bool(log["truncated"])
            for change in log["changes"]:
                if change["source"] == "event":
                    self.arrived[(change["kind"], change["object"])].append(now)
                    self.catalog_invalidations += change["object"] == "catalog"
            self.since = log["current"]

    def seen(self) -> int:
        return sum(len(times) for times in self.arrived.values())


class Reader(threading.Thread):
    """Lists partitions of the tables through a service, so that their lists are cached when events come."""

    def __init__(self, client: CatalogServiceClient, names: list[str], per_second: float) -> None:
        super().__init__(name="reader", daemon=True)
        self.client, self.names, self.period = client, names, 1.0 / per_second if per_second > 0 else 0.0
        self.reads = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        index = 0
        while self.period and not self.stopping.wait(self.period):
            self.client.partitions(CATALOG, DATABASE, self.names[index % len(self.names)])
            self.reads += 1
            index += 1


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def make_tables(uri: str, warehouse: Path, count: int) -> list[ttypes.Table]:
    pool = HmsClientPool(ClientConfig(uris=parse_uris(uri), pool_size=1, socket_timeout=120))
    try:
        admin = Admin(pool, warehouse)
        admin.create_database(DATABASE)
        tables = []
        for index in range(count):
            table = admin.create_table(DATABASE, f"t{index:03d}", [("id", "bigint")], partition_keys=[("p", "string")])
            pool.call("add_partitions", [
                ttypes.Partition(values=[f"seed{n}"], dbName=DATABASE, tableName=table.tableName, parameters={},
                                 sd=ttypes.StorageDescriptor(**{**table.sd.__dict__, "location": f"{table.sd.location}/p=seed{n}"}))
                for n in range(SEED_PARTITIONS)])
            tables.append(pool.call("get_table", DATABASE, table.tableName))
        return tables
    finally:
        pool.close()


def current_event(uri: str) -> int:
    pool = HmsClientPool(ClientConfig(uris=parse_uris(uri), pool_size=1))
    try:
        return int(pool.call("get_current_notificationEventId").eventId)
    finally:
        pool.close()


def event_ids(pool: HmsClientPool, after: int) -> dict[str, int]:
    """The metastore's own log after ``after``: how many events, and how many distinct ids they have (Hive 2.3's
    ObjectStore can hand one id to two events committed concurrently, HIVE-16886: a follower by id misses the
    one committed after it read past the id)."""
    events: list[int] = []
    last = after
    while batch := pool.call("get_next_notification", ttypes.NotificationEventRequest(lastEvent=last, maxEvents=1000)).events:
        events += [event.eventId for event in batch]
        last = batch[-1].eventId
    return {"events": len(events), "distinct_ids": len(set(events)), "first": after + 1, "last": last}
