"""The memory budget on its own: sizes as people write them, and the books it keeps of fake caches' entries
(what is charged, released and used, and which entries go, least recently used first, across caches)."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from hms_catalog.cache.budget import DEFAULT_CACHE_MEMORY, MemoryBudget, format_size, parse_size
from hms_catalog.errors import ConfigurationError


class FakeCache:
    """A cache as the budget sees one: entries it keeps (key -> token) and what the budget evicted of them."""

    def __init__(self, budget: MemoryBudget) -> None:
        self.budget = budget
        self.kept: dict[Hashable, object] = {}
        self.evicted: list[Hashable] = []

    def store(self, key: Hashable, size: int) -> object:
        token = self.kept[key] = object()
        self.budget.charge(self, key, token, size)
        self.budget.enforce()
        return token

    def evict_for_memory(self, key: Hashable, token: object) -> None:
        if self.kept.get(key) is token:
            del self.kept[key]
            self.evicted.append(key)


@pytest.mark.parametrize(("text", "size"), [
    ("512MiB", 512 * 1024**2), ("2GiB", 2 * 1024**3), ("2gib", 2 * 1024**3), ("1.5GB", 1_500_000_000),
    ("64k", 65536), ("64 KiB", 65536), ("100kb", 100_000), ("1048576", 1048576), ("3T", 3 * 1024**4), ("10B", 10),
    (4096, 4096), ("unlimited", None), (" Unlimited ", None),
])
def test_sizes_are_read_as_people_write_them(text: str | int, size: int | None) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "1 GiBs", "-5MiB", "0", "0.1B", "1,5GB", 0, -1, "1e9", "1.7"])
def test_a_size_that_cannot_be_read_is_refused_naming_the_setting_and_the_value(text: str | int) -> None:
    with pytest.raises(ConfigurationError) as raised:
        parse_size(text, "--cache-memory")
    assert "--cache-memory" in str(raised.value) and str(text) in str(raised.value)


def test_sizes_are_shown_in_binary_units() -> None:
    assert [format_size(n) for n in (300, 2048, 5 * 1024**2 + 1, DEFAULT_CACHE_MEMORY, None)] == [
        "300 B", "2.0 KiB", "5.0 MiB", "1.0 GiB", "unlimited"]
    assert MemoryBudget.parse("1GiB").limit == DEFAULT_CACHE_MEMORY == MemoryBudget().limit
    assert MemoryBudget.parse("unlimited").limit is None


def test_charges_and_releases_are_counted_per_cache_and_in_total() -> None:
    budget = MemoryBudget(1000)
    one, two = FakeCache(budget), FakeCache(budget)
    one.store("a", 100)
    one.store("b", 200)
    two.store("a", 300)  # the same key in another cache is another entry
    assert (budget.held, budget.held_by(one), budget.held_by(two)) == (600, 300, 300)
    one.store("a", 50)  # a new value of a key replaces its charge
    assert (budget.held, budget.held_by(one)) == (550, 250)
    budget.release(one, "b")
    budget.release(one, "b")  # twice, or a key never charged: nothing
    budget.release(two, "nope")
    assert (budget.held, budget.held_by(one), budget.held_by(two)) == (350, 50, 300)
    budget.release(one, "a")
    budget.release(two, "a")
    assert budget.held == 0 and budget.held_by(one) == 0 and budget._by_holder == {}


def test_past_the_limit_the_least_recently_used_entries_go_whichever_cache_holds_them() -> None:
    budget = MemoryBudget(1000)
    one, two = FakeCache(budget), FakeCache(budget)
    one.store("a", 300)
    two.store("b", 300)
    one.store("c", 300)
    budget.touch(one, "a")  # used: now the most recent
    two.store("d", 300)  # 1200 > 1000: the least recent (b, in the other cache) goes
    assert two.evicted == ["b"] and one.evicted == [] and budget.held == 900
    one.store("e", 450)  # 1350: c, then a (touched before d was stored), until it fits
    assert one.evicted == ["c", "a"] and set(one.kept) == {"e"} and set(two.kept) == {"d"}
    assert budget.held == 750


def test_a_victim_replaced_before_its_eviction_is_left_alone() -> None:
    budget = MemoryBudget(100)
    cache = FakeCache(budget)
    old = cache.store("k", 60)
    newer = cache.kept["k"] = object()  # replaced in the cache, its charge not yet made
    cache.evict_for_memory("k", old)
    assert cache.kept["k"] is newer and cache.evicted == []


def test_an_unlimited_budget_keeps_books_and_evicts_nothing() -> None:
    budget = MemoryBudget(None)
    cache = FakeCache(budget)
    for number in range(100):
        cache.store(number, 10**9)
    assert cache.evicted == [] and budget.held == 100 * 10**9 and budget.fits(10**15)
    assert budget.enforce() == 0


def test_an_entry_larger_than_the_whole_budget_does_not_fit() -> None:
    budget = MemoryBudget(1000)
    assert budget.fits(1000) and not budget.fits(1001)
    with pytest.raises(ConfigurationError):
        MemoryBudget(0)
