"""The metadata cache: expiry, size bound, statistics, single-flight loads and refresh-safe invalidation."""

from __future__ import annotations

import threading
import time

import pytest

from hms_catalog.cache import CatalogCaches, MetadataCache
from hms_catalog.properties import CacheConfig


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_hits_misses_loads_and_load_time_are_counted() -> None:
    clock = Clock()
    cache: MetadataCache[str, int] = MetadataCache("c", ttl_seconds=60, capacity=10, clock=clock)

    def slow_load() -> int:
        clock.now += 0.25
        return 7

    assert cache.get("a", slow_load) == 7
    assert cache.get("a", lambda: pytest.fail("must not reload")) == 7
    stats = cache.stats()
    assert (stats.hits, stats.misses, stats.loads, stats.entries) == (1, 1, 1, 1)
    assert stats.average_load_ms == pytest.approx(250.0)
    assert [entry.hits for _, entry in cache.entries()] == [1]


def test_entries_expire_after_the_ttl_and_count_as_evictions() -> None:
    clock = Clock()
    cache: MetadataCache[str, int] = MetadataCache("c", ttl_seconds=10, capacity=10, clock=clock)
    cache.get("a", lambda: 1)
    clock.now += 9.9
    assert cache.get("a", lambda: 2) == 1
    clock.now += 0.2
    assert cache.get("a", lambda: 2) == 2
    assert cache.stats().loads == 2 and cache.stats().evictions >= 1


def test_minus_one_never_expires_and_the_size_bound_evicts_least_recently_used() -> None:
    clock = Clock()
    cache: MetadataCache[str, int] = MetadataCache("c", ttl_seconds=-1, capacity=2, clock=clock)
    cache.get("a", lambda: 1)
    cache.get("b", lambda: 2)
    clock.now += 10**9
    cache.get("a", lambda: 0)  # a is now more recent than b
    cache.get("c", lambda: 3)
    assert cache.peek("a") == 1 and cache.peek("b") is None and cache.peek("c") == 3
    assert cache.stats().evictions == 1


def test_zero_disables_the_cache() -> None:
    cache: MetadataCache[str, int] = MetadataCache("c", ttl_seconds=0, capacity=10)
    values = iter(range(10))
    assert [cache.get("a", lambda: next(values)) for _ in range(3)] == [0, 1, 2]
    assert len(cache) == 0 and cache.stats().loads == 3
    cache.put("a", 5, ticket=cache.ticket())
    assert cache.peek("a") is None


def test_concurrent_misses_of_one_key_load_once() -> None:
    cache: MetadataCache[str, int] = MetadataCache("c", ttl_seconds=-1, capacity=10)
    loads = []
    barrier = threading.Barrier(32)

    def load() -> int:
        loads.append(1)
        time.sleep(0.05)
        return 42

    results: list[int] = []

    def ask() -> None:
        barrier.wait()
        results.append(cache.get("k", load))

    threads = [threading.Thread(target=ask) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [42] * 32 and len(loads) == 1


def test_a_load_that_hangs_holds_up_no_other_key() -> None:
    """Each key waits only for a load of itself: with the database names' load riding out a stopped metastore's
    retries, every database's table names still load at once (a lock shared by keys made some wait it out)."""
    cache: MetadataCache[tuple[str, ...], tuple[str, ...]] = MetadataCache("names", ttl_seconds=-1, capacity=1000)
    release = threading.Event()
    started = threading.Event()

    def hanging() -> tuple[str, ...]:
        started.set()
        assert release.wait(10)
        return ("db",)

    listing = threading.Thread(target=lambda: cache.get((), hanging))
    listing.start()
    assert started.wait(5)
    try:
        waited = []
        for number in range(500):  # far more keys than any fixed set of locks, so some would have shared the one held
            began = time.monotonic()
            assert cache.get((f"db{number}",), lambda: ("t",)) == ("t",)
            waited.append(time.monotonic() - began)
        assert max(waited) < 1.0, f"a key waited {max(waited):.2f} s on another key's load"
        assert cache.peek(()) is None  # still loading
    finally:
        release.set()
        listing.join()
    assert cache.peek(()) == ("db",) and cache._loading == {}  # nothing left behind once the loads end


def test_a_failed_load_leaves_its_key_loadable_by_the_next_caller() -> None:
    cache: MetadataCache[str, int] = MetadataCache("c", ttl_seconds=-1, capacity=10)

    def failing() -> int:
        raise OSError("metastore refused")

    with pytest.raises(OSError):
        cache.get("k", failing)
    assert cache.get("k", lambda: 7) == 7 and cache._loading == {}


def test_a_load_racing_an_invalidation_does_not_store_its_stale_value() -> None:
    cache: MetadataCache[str, str] = MetadataCache("c", ttl_seconds=-1, capacity=10)
    started, release = threading.Event(), threading.Event()

    def stale_load() -> str:
        started.set()
        release.wait(5)
        return "old"

    worker = threading.Thread(target=lambda: cache.get("k", stale_load))
    worker.start()
    started.wait(5)
    cache.invalidate("k")  # REFRESH while the old definition is being loaded
    release.set()
    worker.join()
    assert cache.peek("k") is None
    assert cache.get("k", lambda: "new") == "new"


def test_a_failed_load_stores_nothing_and_is_counted() -> None:
    cache: MetadataCache[str, int] = MetadataCache("c", ttl_seconds=-1, capacity=10)
    with pytest.raises(RuntimeError):
        cache.get("k", lambda: (_ for _ in ()).throw(RuntimeError("boom")))
    assert cache.peek("k") is None and cache.stats().load_failures == 1
    assert cache.get("k", lambda: 3) == 3


def test_catalog_caches_invalidate_a_table_everywhere_and_nothing_else() -> None:
    caches = CatalogCaches.from_config(CacheConfig())
    caches.names.put(("db",), ("t", "u"), ticket=0)
    caches.names.put((), ("db",), ticket=0)
    caches.schema.put(("db", "t"), "schema-t", ticket=0)
    caches.schema.put(("db", "u"), "schema-u", ticket=0)
    caches.partition_values.put(("db", "t", ""), ("p=1",), ticket=0)
    caches.partitions.put(("db", "t", "p=1"), "partition", ticket=0)
    caches.files.put(("db", "t", "file:///w/t/p=1"), ["f1"], ticket=0)
    caches.files.put(("db2", "t", "file:///w2/t"), ["g1"], ticket=0)

    caches.invalidate_table("DB", "T")
    assert caches.schema.peek(("db", "t")) is None and caches.partitions.peek(("db", "t", "p=1")) is None
    assert caches.files.peek(("db", "t", "file:///w/t/p=1")) is None and caches.partition_values.peek(("db", "t", "")) is None
    assert caches.schema.peek(("db", "u")) == "schema-u"
    assert caches.files.peek(("db2", "t", "file:///w2/t")) == ["g1"]
    assert caches.names.peek(("db",)) == ("t", "u")  # a table refresh keeps the name lists

    caches.invalidate_database("db")
    assert caches.schema.peek(("db", "u")) is None and caches.names.peek(("db",)) is None
    assert caches.names.peek(()) is None
    assert caches.files.peek(("db2", "t", "file:///w2/t")) == ["g1"]

    caches.file_blocks.put(("file:///w/t/p=1/f1", 10, 1), ((0, 10, ("h",)),), ticket=0)
    manifest = "file:///w/ice/metadata/snap-1.avro"
    caches.iceberg_manifests.put(manifest, b"avro", ticket=0)
    caches.invalidate_all()
    assert all(len(cache) == 0 for cache in caches if cache not in (caches.file_blocks, caches.iceberg_manifests))
    assert caches.file_blocks.peek(("file:///w/t/p=1/f1", 10, 1)) is not None  # keyed by identity: never stale
    assert caches.iceberg_manifests.peek(manifest) == b"avro"  # never rewritten: a REFRESH keeps it


def test_cancelling_one_plan_spoils_the_loads_of_that_plan_only() -> None:
    plans = CatalogCaches.from_config(CacheConfig()).iceberg_plans
    ticket = plans.ticket()  # two plans being made at once, one of them cancelled meanwhile
    plans.invalidate("plan-b")
    assert plans.put("plan-a", "tasks of a", ticket=ticket)
    assert not plans.put("plan-b", "tasks of b", ticket=ticket)
    assert plans.peek("plan-a") == "tasks of a" and plans.peek("plan-b") is None


def test_cache_properties_are_validated() -> None:
    from hms_catalog.errors import ConfigurationError
    from hms_catalog.properties import CatalogConfig

    base = {"type": "hms", "hive.metastore.uris": "thrift://h:1"}
    config = CatalogConfig.from_properties({**base, "schema.cache.ttl-second": "-1", "file.meta.cache.ttl-second": "0"})
    assert (config.caches.schema_ttl, config.caches.file_ttl, config.caches.partition_ttl) == (-1, 0, 28800)
    with pytest.raises(ConfigurationError, match="'schema.cache.ttl-second' must be at least -1, got -5"):
        CatalogConfig.from_properties({**base, "schema.cache.ttl-second": "-5"})
    with pytest.raises(ConfigurationError, match="'partition.cache.capacity' must be an integer"):
        CatalogConfig.from_properties({**base, "partition.cache.capacity": "lots"})


def test_a_batch_put_after_an_invalidation_is_not_stored() -> None:
    cache: MetadataCache[str, str] = MetadataCache("c", ttl_seconds=-1, capacity=10)
    ticket = cache.ticket()  # a batch load starts
    cache.invalidate("k")  # REFRESH returns while it runs
    assert cache.put("k", "old", ticket=ticket) is False
    assert cache.peek("k") is None
    assert cache.put("k", "new", ticket=cache.ticket()) is True


def test_looking_at_the_cache_does_not_change_what_is_evicted() -> None:
    cache: MetadataCache[str, int] = MetadataCache("c", ttl_seconds=-1, capacity=3)
    for key in "abc":
        cache.get(key, lambda: 0)
    cache.get("a", lambda: 0)  # a is now the most recent; b the least
    list(cache.entries())
    cache.peek("b")
    cache.get("d", lambda: 0)
    assert cache.peek("b") is None and cache.peek("a") == 0


@pytest.mark.parametrize("ttl", [60, -1])
@pytest.mark.parametrize("item_by_item", [False, True])
def test_clearing_is_not_counted_as_evictions(monkeypatch: pytest.MonkeyPatch, ttl: int, item_by_item: bool) -> None:
    """Whatever the cachetools version: some clear() item by item through popitem (MutableMapping's own)."""
    import collections.abc

    import cachetools

    if item_by_item:
        for kind in (cachetools.Cache, cachetools.TTLCache, cachetools.LRUCache):
            monkeypatch.setattr(kind, "clear", collections.abc.MutableMapping.clear, raising=False)
    cache: MetadataCache[str, int] = MetadataCache("c", ttl_seconds=ttl, capacity=10, clock=Clock())
    for key in "abc":
        cache.get(key, lambda: 1)
    cache.clear()
    stats = cache.stats()
    assert (stats.entries, stats.evictions) == (0, 0)
    cache.get("a", lambda: 2)
    for key in "bcdefghijk":
        cache.get(key, lambda: 3)
    assert cache.stats().evictions == 1  # the size bound still counts after a clear
