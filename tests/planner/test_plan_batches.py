"""A Hive plan a batch of partitions at a time, on the real metastore: no more than one batch of partition
objects is alive while its splits are read, and a scan over ``max_partitions_per_scan`` is refused before any
partition object is asked for, on every route (names, leading-key spec, filter)."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import PlanningError
from hms_catalog.execution import Session
from planner import plan_table, plan_table_stream
from planner.partitions import choose_partitions, partition_batches
from tests.support.hms import Admin
from tests.support.sessions import open_catalog

PARTITIONS = 50
BATCH = 7
OBJECT_CALLS = {"get_partitions", "get_partitions_by_filter", "get_partitions_by_names", "get_partitions_ps"}


@pytest.fixture(scope="module")
def many(admin: Admin) -> Iterator[str]:
    """``batches.t`` (s string, n int): 50 partitions ``s=s{i % 10}/n={i}``, each a folder of two small files."""
    database = "batches"
    admin.create_database(database)
    struct = admin.create_table(database, "t", [("x", "int")], partition_keys=[("s", "string"), ("n", "int")])
    root = admin.warehouse / f"{database}.db" / "t"
    added = []
    for index in range(PARTITIONS):
        values = [f"s{index % 10}", str(index)]
        folder = root / f"s={values[0]}" / f"n={values[1]}"
        folder.mkdir(parents=True, exist_ok=True)
        for part in range(2):
            (folder / f"part-{part}.parquet").write_bytes(b"x" * 16)
        sd = ttypes.StorageDescriptor(**{**struct.sd.__dict__, "location": f"file://{folder}"})
        added.append(ttypes.Partition(values=values, dbName=database, tableName="t", sd=sd, parameters={}))
    admin.pool.call("add_partitions", added)
    yield database
    admin.pool.call("drop_database", database, False, True)


class _Watched:
    """The catalog's metastore client, noting the names each get_partitions_by_names asks and counting the
    partition objects answered that are still alive (a finalizer on each): what some part of the plan holds,
    and the most it ever held (calls come on the plan's threads, finalizers wherever the last reference goes)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self.batches: list[int] = []
        self.alive = 0
        self.most_alive = 0

    def _dropped(self) -> None:
        with self._lock:
            self.alive -= 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get_partitions_by_names(self, *args: Any, **kwargs: Any) -> list[ttypes.Partition]:
        answered: list[ttypes.Partition] = self._inner.get_partitions_by_names(*args, **kwargs)
        with self._lock:
            self.batches.append(len(args[2]))
            for partition in answered:
                self.alive += 1
                weakref.finalize(partition, self._dropped)
            self.most_alive = max(self.most_alive, self.alive)
        return answered


def _catalog_table(session: Session, database: str) -> tuple[Any, Any]:
    """The catalog ``hive`` and its table ``database.t``, the table's definition loaded: the calls after are the plan's."""
    catalog = session.manager.catalog("hive")
    table = catalog.table(database, "t")
    _ = table.metadata
    return catalog, table


def _uncached(home: Path, uri: str, **properties: str) -> Session:
    """Partition objects are not kept by the catalog's cache either: every one alive is the plan's."""
    return open_catalog(home, uri, **{"partition.cache.ttl-second": "0", **properties})


def test_a_plan_holds_at_most_two_batches_of_partition_objects(many: str, home: Path, metastore_uri: str) -> None:
    """The batch being listed and the next, asked for meanwhile."""
    session = _uncached(home, metastore_uri, **{"planner.partition.batch": str(BATCH)})
    whole = _uncached(home / "whole", metastore_uri)
    try:
        catalog, table = _catalog_table(session, many)
        watched = _Watched(catalog.client)
        catalog.client = watched
        stream = plan_table_stream(catalog, table)  # no predicate: every name, then the objects batch by batch
        assert watched.batches == []  # the names are settled; no object asked for yet
        splits = list(stream)
        plan = stream.finished()
        assert watched.batches == [BATCH] * (PARTITIONS // BATCH) + [PARTITIONS % BATCH]
        assert BATCH <= watched.most_alive <= 2 * BATCH
        assert plan.summary.partitions_scanned == PARTITIONS and plan.summary.splits == len(splits) == 2 * PARTITIONS
        assert plan.summary.metastore_calls == {"get_partition_names": 1, "get_partitions_by_names": -(-PARTITIONS // BATCH)}
        other = whole.manager.catalog("hive")
        handle = other.table(many, "t")
        _ = handle.metadata
        at_once = plan_table(other, handle)
        assert sorted(splits) == sorted(at_once.splits)
        assert at_once.summary.metastore_calls == {"get_partition_names": 1, "get_partitions_by_names": 1}
    finally:
        session.manager.close()
        whole.manager.close()


def test_no_partition_object_outlives_its_batch_once_the_planner_has_it(many: str, home: Path, metastore_uri: str) -> None:
    """Batch by batch, with no fetch left after the last: while the caller holds the last batch (its
    locations and values), no partition object of any batch is alive any more. It failed twice before: the
    batch's last object kept by a loop variable of the generator's, and the first batch by the cycle of the
    metastore's refusal of the projected call (Hive 2.3 knows no get_partitions_with_specs)."""
    session = _uncached(home, metastore_uri)
    try:
        catalog, table = _catalog_table(session, many)
        watched = _Watched(catalog.client)
        choice = choose_partitions(watched, catalog.caches, table.metadata.table, None, max_partitions=PARTITIONS)
        generator = partition_batches(choice, BATCH)
        batches = [next(generator) for _ in range(-(-PARTITIONS // BATCH))]  # the generator stands at its last yield
        assert [len(batch) for batch in batches] == [BATCH] * (PARTITIONS // BATCH) + [PARTITIONS % BATCH]
        assert watched.batches == [BATCH] * (PARTITIONS // BATCH) + [PARTITIONS % BATCH]
        assert watched.alive == 0 and BATCH <= watched.most_alive <= 2 * BATCH
        assert next(generator, None) is None
        assert sorted(p.name for batch in batches for p in batch) == sorted(choice.kept)
    finally:
        session.manager.close()


def test_the_summary_of_a_streamed_plan_is_the_whole_plans(many: str, home: Path, metastore_uri: str) -> None:
    session = _uncached(home, metastore_uri, **{"planner.partition.batch": str(BATCH)})
    try:
        catalog = session.manager.catalog("hive")
        table = catalog.table(many, "t")
        streamed = plan_table_stream(catalog, table, "n >= 5", statistics=True).collect()
        whole = plan_table(catalog, table, "n >= 5", statistics=True)
        assert streamed.splits == whole.splits
        ignored = ("metastore_calls", "hms_seconds", "listing_seconds", "splitting_seconds")
        assert {k: v for k, v in streamed.summary.to_json().items() if k not in ignored} == \
               {k: v for k, v in whole.summary.to_json().items() if k not in ignored}
        assert streamed.summary.partitions_scanned == PARTITIONS - 5
        assert streamed.statistics == whole.statistics and streamed.statistics is not None
    finally:
        session.manager.close()


@pytest.mark.parametrize(("where", "route", "kept"), [
    (None, {"get_partition_names": 1}, PARTITIONS),
    ("s = 's1'", {"get_partition_names_ps": 1}, 5),  # the leading key: names by partial spec
    # a filter the metastore takes: asked for one more than the bound (5 objects, the most a refusal costs),
    # 5 back, so over the bound: counted exactly on names
    ("n >= 10", {"get_partitions_by_filter": 1, "get_partition_names": 1}, PARTITIONS - 10),
])
def test_too_many_partitions_are_refused_before_more_objects_than_the_bound(many: str, home: Path, metastore_uri: str,
                                                                            where: str | None, route: dict[str, int],
                                                                            kept: int) -> None:
    session = _uncached(home, metastore_uri, max_partitions_per_scan="4")
    try:
        catalog, table = _catalog_table(session, many)
        before = catalog.metrics()
        with pytest.raises(PlanningError, match=f"would read {kept} partitions, more than max_partitions_per_scan=4"):
            plan_table_stream(catalog, table, where)
        calls = catalog.metrics().calls_since(before)
        assert calls == route and OBJECT_CALLS & set(calls) <= {"get_partitions_by_filter"}
    finally:
        session.manager.close()


def test_a_filter_counting_more_than_the_bound_is_planned_when_fewer_are_kept(many: str, home: Path,
                                                                               metastore_uri: str) -> None:
    """The filter's answer is of a superset (``NOT`` is not pushed): over the bound, the exact count on names decides."""
    session = _uncached(home, metastore_uri, max_partitions_per_scan="4")
    try:
        catalog, table = _catalog_table(session, many)
        plan = plan_table(catalog, table, "n >= 10 AND NOT (s <> 's1')")
        assert sorted(str(dict(split.partition_values)["n"]) for split in plan.splits[::2]) == ["11", "21", "31", "41"]
        assert plan.summary.metastore_calls == {"get_partitions_by_filter": 1, "get_partition_names": 1,
                                                "get_partitions_by_names": 1}
        assert any("more than 4 partitions for filter" in note for note in plan.summary.notes)
    finally:
        session.manager.close()


@pytest.mark.parametrize(("capacity", "kept"), [("10", 0), ("100", PARTITIONS)])
def test_a_scan_larger_than_the_caches_leaves_them_as_they_were(many: str, home: Path, metastore_uri: str,
                                                                 capacity: str, kept: int) -> None:
    """Scan-resistant: 50 partitions through caches of 10 would only evict each other (and every other table's)."""
    session = open_catalog(home, metastore_uri, **{"partition.cache.capacity": capacity,
                                                   "file.meta.cache.capacity": capacity,
                                                   "planner.partition.batch": str(BATCH)})
    try:
        catalog = session.manager.catalog("hive")
        plan = plan_table(catalog, catalog.table(many, "t"))
        assert plan.summary.partitions_scanned == PARTITIONS
        assert len(catalog.caches.partitions) == kept and len(catalog.caches.files) == kept
    finally:
        session.manager.close()


class _CollectorNoted:
    """The catalog's metastore client, noting whether Python's collector ran during each call for partitions."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.calls: list[tuple[str, bool]] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)
        if not name.startswith("get_partitions"):
            return method

        def noted(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, gc.isenabled()))
            return method(*args, **kwargs)
        return noted


@pytest.mark.parametrize(("where", "call"), [(None, "get_partitions_by_names"), ("n >= 3", "get_partitions_by_filter")])
def test_the_collector_is_paused_while_partitions_are_fetched_and_running_when_splits_are_handed_on(
        many: str, home: Path, metastore_uri: str, where: str | None, call: str) -> None:
    """Partition objects are decoded by the thousand with the collector paused (planner._gc), but no pause
    lasts into the caller's code: the consumer of the stream runs with the collector on."""
    session = _uncached(home, metastore_uri, **{"planner.partition.batch": str(BATCH)})
    try:
        catalog, table = _catalog_table(session, many)
        noted = _CollectorNoted(catalog.client)
        catalog.client = noted
        assert gc.isenabled()
        handed_on = [gc.isenabled() for _ in plan_table_stream(catalog, table, where)]
        assert len(handed_on) > BATCH and all(handed_on)
        assert {name for name, _ in noted.calls} == {call} and not any(running for _, running in noted.calls)
        assert gc.isenabled()
    finally:
        session.manager.close()
