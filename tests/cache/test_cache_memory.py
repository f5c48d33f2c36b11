"""Metadata caches under one memory budget: every entry weighed and charged while it is held, the least recently
used evicted across caches and catalogs, evicted entries loaded again, and the guarantees of the caches (loads
once, nothing loaded before an invalidation stored after it) kept."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.cache import CatalogCaches, MetadataCache
from hms_catalog.cache.budget import MemoryBudget
from hms_catalog.cache.metadata_cache import ENTRY_OVERHEAD, Tracking
from hms_catalog.cache.sizing import deep_size
from hms_catalog.errors import ConfigurationError
from hms_catalog.manager import CatalogManager
from hms_catalog.properties import CacheConfig
from hms_catalog.store import CatalogStore

BLOB = 1000  # the weight of a test value, besides the entry's own bytes


def weighed(value: Any) -> int:
    """Values weigh what they say (``("v", weight)``), so the tests can reason in round numbers."""
    return int(value[1])


def cache(budget: MemoryBudget, name: str = "c", **options: Any) -> MetadataCache[str, tuple[str, int]]:
    options.setdefault("ttl_seconds", -1)
    options.setdefault("capacity", 1000)
    return MetadataCache(name, budget=budget, tracking=Tracking(weigh=weighed), **options)


def entry_bytes(key: str, weight: int = BLOB) -> int:
    return weight + deep_size(key) + ENTRY_OVERHEAD


def charged(*caches: MetadataCache[Any, Any]) -> int:
    """What the caches' live entries weigh, by their own account (which the budget's books must match)."""
    return sum(entry.size for each in caches for _, entry in each.entries())


def test_entries_are_charged_while_held_and_released_however_they_leave() -> None:
    budget = MemoryBudget(None)
    one = cache(budget)
    one.get("a", lambda: ("a", BLOB))
    one.put("b", ("b", 2 * BLOB), ticket=one.ticket())
    assert one.stats().bytes == budget.held == entry_bytes("a") + entry_bytes("b", 2 * BLOB) == charged(one)
    one.invalidate("a")
    assert budget.held == entry_bytes("b", 2 * BLOB)
    one.put("b", ("b", 3 * BLOB), ticket=one.ticket())  # a new value replaces the old one's charge
    assert budget.held == entry_bytes("b", 3 * BLOB) == one.stats().bytes
    one.clear()
    assert budget.held == 0 and one.stats().bytes == 0


def test_entries_leaving_by_count_cap_or_expiry_are_released() -> None:
    budget = MemoryBudget(None)
    now = [0.0]
    capped = cache(budget, "capped", capacity=2)
    expiring = cache(budget, "expiring", ttl_seconds=10, clock=lambda: now[0])
    for key in "abc":
        capped.get(key, lambda key=key: (key, BLOB))
        expiring.get(key, lambda key=key: (key, BLOB))
    assert capped.stats().entries == 2 and capped.stats().bytes == charged(capped) == 2 * entry_bytes("a")
    now[0] += 11
    assert len(expiring) == 0 and expiring.stats().bytes == 0
    assert budget.held == charged(capped, expiring)
    assert capped.stats().memory_evictions == expiring.stats().memory_evictions == 0  # not for memory


def test_past_the_budget_the_least_recently_used_go_across_caches_and_come_back_when_asked() -> None:
    size = entry_bytes("k0")
    budget = MemoryBudget(4 * size)
    schema, files = cache(budget, "schema"), cache(budget, "files")
    loads: list[str] = []

    def loader(key: str) -> Any:
        return lambda: loads.append(key) or (f"value of {key}", BLOB)

    for key in ("k0", "k1"):
        schema.get(key, loader(key))
    for key in ("k2", "k3"):
        files.get(key, loader(key))
    schema.get("k0", loader("k0"))  # a hit: k0 is now the most recent
    files.peek("k2", used=True)  # a planner's read is a use too
    schema.peek("k1")  # a probe is not
    files.get("k4", loader("k4"))  # five entries for a budget of four: the least recent (k1) goes
    assert schema.peek("k1") is None and schema.peek("k0") is not None
    assert (schema.stats().memory_evictions, files.stats().memory_evictions) == (1, 0)
    files.get("k5", loader("k5"))  # then k3, the next least recent
    assert files.peek("k3") is None and files.stats().memory_evictions == 1
    assert budget.held == charged(schema, files) <= budget.limit
    assert schema.get("k1", loader("k1")) == ("value of k1", BLOB)  # evicted: loaded again, as it is now
    assert loads == ["k0", "k1", "k2", "k3", "k4", "k5", "k1"] and schema.peek("k0") is None  # k0 was next
    assert schema.stats().evictions == schema.stats().memory_evictions == 2 and schema.stats().misses == 3


def test_an_entry_larger_than_the_budget_is_served_but_not_kept_nor_its_older_value() -> None:
    budget = MemoryBudget(10 * BLOB)
    one = cache(budget)
    one.get("small", lambda: ("small", BLOB))
    one.get("k", lambda: ("k", BLOB))
    assert one.get("k2", lambda: ("huge", 20 * BLOB)) == ("huge", 20 * BLOB)
    assert one.peek("k2") is None and one.peek("small") is not None  # the others were not evicted for it
    assert not one.put("k", ("huge", 20 * BLOB), ticket=one.ticket())
    assert one.peek("k") is None  # its older value is dropped: a newer one exists
    assert one.stats().memory_evictions == 2 and budget.held == charged(one) == entry_bytes("small")


def test_a_closed_cache_frees_its_share_and_keeps_nothing_more() -> None:
    budget = MemoryBudget(None)
    config = CacheConfig()
    old, new = CatalogCaches.from_config(config, budget=budget), CatalogCaches.from_config(config, budget=budget)
    old.schema.get(("db", "t"), lambda: ("old",))
    new.schema.get(("db", "t"), lambda: ("new",))
    assert budget.held == old.schema.stats().bytes + new.schema.stats().bytes
    old.close()
    assert old.schema.stats().bytes == 0 and budget.held == new.schema.stats().bytes > 0
    assert not old.schema.put(("db", "u"), ("late",), ticket=old.schema.ticket())
    assert old.schema.get(("db", "u"), lambda: ("late",)) == ("late",) and len(old.schema) == 0


def test_a_load_spoiled_by_an_invalidation_is_not_stored_under_a_budget_and_an_eviction_spoils_none() -> None:
    budget = MemoryBudget(3 * entry_bytes("k0"))
    one = cache(budget)
    ticket = one.ticket()
    one.invalidate("late")  # a REFRESH while "late" was being loaded
    assert not one.put("late", ("stale", BLOB), ticket=ticket) and budget.held == 0
    ticket = one.ticket()
    for key in ("k0", "k1", "k2", "k3"):  # evicts k0 for memory: not a change of anything
        one.get(key, lambda key=key: (key, BLOB))
    assert one.peek("k0") is None and one.stats().memory_evictions == 1
    assert one.put("fresh", ("fresh", BLOB), ticket=ticket)  # a load begun before the eviction is still good
    assert one.versions.changes().changes == ()


def test_a_cold_key_loads_once_however_many_ask_under_a_tiny_budget_and_again_once_evicted() -> None:
    budget = MemoryBudget(entry_bytes("other"))  # room for one entry
    one = cache(budget)
    loads = []
    barrier = threading.Barrier(16)

    def load() -> tuple[str, int]:
        loads.append(1)
        time.sleep(0.05)
        return ("v", BLOB)

    answers: list[Any] = []

    def ask() -> None:
        barrier.wait()
        answers.append(one.get("k", load))

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(loads) == 1 and answers == [("v", BLOB)] * 16
    assert one.get("other", lambda: ("o", BLOB)) == ("o", BLOB) and one.peek("k") is None  # no room for both
    assert one.get("k", load) == ("v", BLOB) and len(loads) == 2


def test_many_threads_over_many_caches_stay_under_the_budget_and_keep_true_books() -> None:
    """Threads store, read, invalidate and clear in caches of two catalogs under one small budget: no deadlock
    (each ends), nothing above the budget once they are done, and the budget's books match the entries held."""
    limit = 40 * entry_bytes("k000")
    budget = MemoryBudget(limit)
    caches = [cache(budget, f"c{number}", capacity=25) for number in range(6)]
    failures: list[BaseException] = []

    def work(seed: int) -> None:
        pick = random.Random(seed)
        try:
            for _ in range(2000):
                target = pick.choice(caches)
                key = f"k{pick.randrange(60):03d}"
                roll = pick.random()
                if roll < 0.6:
                    value = target.get(key, lambda key=key: (key, pick.choice((BLOB // 2, BLOB, 2 * BLOB))))
                    assert value[0] == key
                elif roll < 0.8:
                    target.peek(key, used=True)
                elif roll < 0.95:
                    target.invalidate(key)
                else:
                    target.clear()
        except BaseException as error:  # noqa: BLE001 - reported by the test thread
            failures.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a thread is stuck: a lock cycle"
    assert failures == []
    assert budget.held == charged(*caches) <= limit
    assert sum(each.stats().bytes for each in caches) == budget.held
    assert sum(each.stats().memory_evictions for each in caches) > 0


@pytest.mark.parametrize("ttl", [-1, 3600])
def test_a_batch_is_weighed_by_sample_and_charged_entry_by_entry(ttl: int) -> None:
    budget = MemoryBudget(None)
    partitions = cache(budget, ttl_seconds=ttl)
    weighed_values: list[Any] = []
    partitions._weigh = lambda value: weighed_values.append(value) or weighed(value)  # type: ignore[method-assign]
    items = [(f"p{number:04d}", (f"p{number}", BLOB)) for number in range(1000)]
    assert partitions.put_all(items, ticket=partitions.ticket()) == 1000
    assert len(weighed_values) == 16 and partitions.stats().entries == 1000
    assert budget.held == charged(partitions) == sum(entry_bytes(key) for key, _ in items)


def test_a_manager_takes_its_budget_as_a_size_or_a_shared_object_and_hands_it_to_every_catalog(tmp_path: Path) -> None:
    shared = MemoryBudget.parse("256MiB")
    managers = [CatalogManager(CatalogStore(tmp_path / name), cache_memory=shared) for name in ("a", "b")]
    assert all(manager.cache_budget is shared for manager in managers)
    assert CatalogManager(CatalogStore(tmp_path / "c"), cache_memory="512MiB").cache_budget.limit == 512 * 1024**2
    assert CatalogManager(CatalogStore(tmp_path / "d")).cache_budget.limit == 1024**3
    assert CatalogManager(CatalogStore(tmp_path / "e"), cache_memory="unlimited").cache_budget.limit is None
    with pytest.raises(ConfigurationError, match="cache_memory .*'lots'"):
        CatalogManager(CatalogStore(tmp_path / "f"), cache_memory="lots")
    manager = managers[0]
    manager.create("hive", {"type": "hms", "hive.metastore.uris": "thrift://127.0.0.1:1"})  # never reached
    catalog = manager.catalog("hive")
    try:
        assert all(each.budget is shared for each in catalog.caches) and catalog.caches.budget is shared
    finally:
        manager.close()


def test_dropping_an_iceberg_plan_spoils_no_load_of_the_catalog() -> None:
    caches = CatalogCaches.from_config(CacheConfig(), budget=MemoryBudget(None))
    ticket = caches.schema.ticket()
    caches.iceberg_plans.put("plan-1", ("tasks",), ticket=caches.iceberg_plans.ticket())
    caches.iceberg_plans.invalidate("plan-1")  # a cancelled plan
    assert caches.schema.put(("db", "t"), ("table",), ticket=ticket)  # a table's load in flight is still good
