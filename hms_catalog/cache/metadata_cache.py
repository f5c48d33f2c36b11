"""One metadata cache: a cachetools map with expiry, a size bound, statistics and single-flight loads.

What it adds to cachetools, and why:
- ``get(key, loader)`` loads a missing key once however many threads ask at the same moment (per-key
  locks), so a cold table asked for by 32 threads costs one metastore call.
- Invalidation is safe against loads in flight: a load reads the catalog's version counter before it
  starts (its ticket), and does not store its value when the key's object, or anything above it, was
  invalidated or dropped after that (see :mod:`hms_catalog.cache.versions`). After ``invalidate*``
  returns, no later reader is served what was loaded before it.
- Keys may belong to groups (a table's entries): ``invalidate_group`` drops a group's entries without
  scanning the others, so an event about a table that was never loaded costs a dictionary lookup.
- Hits, misses, loads, load time and evictions (count cap, expiry, memory) are counted; each entry knows
  when it was loaded and how often it was served, so users can see what the cache holds (SHOW CACHE).
- Under a :class:`~hms_catalog.cache.budget.MemoryBudget` each entry is weighed as it is stored (the
  tracking's ``weigh``, by default :func:`~hms_catalog.cache.sizing.deep_size` of the value, plus its key
  and ``ENTRY_OVERHEAD``), and the budget evicts the least recently used entries of all its caches when
  they hold more than it allows. An entry evicted for memory is loaded again when next asked, like one
  evicted by the count cap: eviction is not a change, so it cuts no version and logs nothing.

``ttl_seconds``: -1 keeps entries until evicted for size or invalidated, 0 disables the cache (every get
loads, nothing is kept), a positive number expires entries that many seconds after they were loaded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

import cachetools

from hms_catalog.cache._stores import CountingLRUCache, CountingTTLCache, Load
from hms_catalog.cache.budget import MemoryBudget
from hms_catalog.cache.entries import ENTRY_OVERHEAD, CachedEntry, CacheStats, Tracking
from hms_catalog.cache.sizing import batch_sizes, deep_size
from hms_catalog.cache.versions import CATALOG, CatalogObject, CatalogVersions

__all__ = ["ENTRY_OVERHEAD", "MetadataCache", "CacheStats", "CachedEntry", "Tracking"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class MetadataCache(Generic[K, V]):
    """A named, bounded, expiring cache of metadata values keyed by ``K``."""

    def __init__(
        self,
        name: str,
        *,
        ttl_seconds: int,
        capacity: int,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        versions: CatalogVersions | None = None,
        tracking: Tracking | None = None,
        budget: MemoryBudget | None = None,
    ) -> None:
        if ttl_seconds < -1:
            raise ValueError(f"ttl_seconds must be -1, 0 or positive, got {ttl_seconds}")
        if capacity < 1:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.name = name
        self.ttl_seconds = ttl_seconds
        self.capacity = capacity
        self._wall = wall_clock
        self._lock = threading.RLock()
        self._loading: dict[K, Load] = {}  # the keys being loaded now, each with its own lock
        self.versions = versions if versions is not None else CatalogVersions()
        self._tracking = tracking if tracking is not None else Tracking()
        self._groups: dict[Hashable, set[K]] = {}
        self._hits = self._misses = self._loads = self._failures = self._evictions = self._memory_evictions = 0
        self.budget = budget
        self._weigh = self._tracking.weigh or deep_size
        self._closed = False
        self._load_seconds = 0.0
        self._clock = clock
        self._data: cachetools.Cache[K, CachedEntry[V]] = self._empty_store()

    def _empty_store(self) -> cachetools.Cache[K, CachedEntry[V]]:
        if self.ttl_seconds > 0:
            return CountingTTLCache(self.capacity, self.ttl_seconds, self._clock, self._evicted)
        return CountingLRUCache(self.capacity, self._evicted)

    @property
    def enabled(self) -> bool:
        return self.ttl_seconds != 0

    def get(self, key: K, loader: Callable[[], V]) -> V:
        """The cached value of ``key``, loading it with ``loader`` (once, whoever asks) when missing."""
        found = self._lookup(key)
        if found is not None:
            return found.value
        with self._loading_of(key):
            found = self._lookup(key)  # another thread may have loaded it while this one waited
            if found is not None:
                return found.value
            with self._lock:
                self._misses += 1
            ticket = self.versions.ticket
            started = self._clock()
            try:
                value = loader()
            except BaseException:
                with self._lock:
                    self._failures += 1
                raise
            finally:
                elapsed = self._clock() - started
                with self._lock:
                    self._loads += 1
                    self._load_seconds += elapsed
            self._store(key, value, ticket)
            return value

    def ticket(self) -> int:
        """Read before a load made outside :meth:`get`; pass it to :meth:`put` with the loaded value."""
        return self.versions.ticket

    def peek(self, key: K, *, used: bool = False) -> V | None:
        """The cached value without loading or counting a hit. ``used``: the caller serves it (a planner's
        batch read), so it becomes the most recent entry, for the count cap and the memory budget; otherwise
        (a probe: is it cached?) its place in either order is left as it was."""
        with self._lock:
            entry = self._untouched(key)
            if entry is not None and used:
                self._data.get(key)  # moves it to the end of the LRU order
                if self.budget is not None:
                    self.budget.touch(self, key)
            return entry.value if entry is not None else None

    def put(self, key: K, value: V, *, ticket: int) -> bool:
        """Store a value loaded elsewhere (a batch load fills many keys with one call).

        ``ticket`` is :meth:`ticket` read before the load began: nothing is stored if the key's object was
        invalidated or dropped since, so a REFRESH or a drop during the load is not undone. Returns
        whether it was stored.
        """
        return self._store(key, value, ticket)

    def put_all(self, items: Sequence[tuple[K, V]], *, ticket: int) -> int:
        """:meth:`put` of values one call loaded together (a batch of one table's partitions), which are alike:
        a sample of them is weighed and the others are charged from it (:func:`~.sizing.batch_sizes`, or the
        tracking's ``weigh_batch``), so weighing a batch costs a few values' walk, not all of theirs. Returns
        how many were stored."""
        if not self.enabled or self._closed or not items:  # nothing will be kept: weigh nothing
            return 0
        values = [value for _, value in items]
        if self.budget is None:
            sizes = [0] * len(items)
        elif self._tracking.weigh_batch is not None:
            sizes = self._tracking.weigh_batch(values)
        else:
            sizes = batch_sizes(values, self._weigh)
        return self._store_all(items, ticket, sizes)

    def version_of(self, key: K) -> int | None:
        """The version the cached value of ``key`` was loaded at, without touching it."""
        with self._lock:
            entry = self._untouched(key)
            return entry.version if entry is not None else None

    def invalidate(self, key: K) -> None:
        self.versions.cut(self._tracking.object_of(key) or CATALOG)
        with self._lock:
            self._pop(key)

    def invalidate_group(self, group: Hashable) -> int:
        """Drop the entries of one group (looked up, not scanned for); returns how many were dropped."""
        self.versions.cut(self._tracking.group_object(group) or CATALOG)
        with self._lock:
            doomed = list(self._groups.get(group, ()))
            for key in doomed:
                self._pop(key)
            return len(doomed)

    def groups(self) -> list[Hashable]:
        """The groups that have entries (or had, until their last entry expired unseen)."""
        with self._lock:
            return list(self._groups)

    def invalidate_where(self, predicate: Callable[[K], bool]) -> int:
        """Drop every key for which ``predicate`` holds; returns how many entries were dropped.

        It cannot know which objects the predicate names, so it spoils every load in flight.
        """
        self.versions.cut(CATALOG)
        with self._lock:
            doomed = [key for key in list(self._data.keys()) if predicate(key)]
            for key in doomed:
                self._pop(key)
            return len(doomed)

    def clear(self) -> None:
        """Drop every entry. Not evictions: a fresh store is swapped in, because cachetools' own
        ``clear`` pops item by item through ``popitem`` in some versions the declared range allows,
        which would count every cleared entry as evicted and make SHOW CACHE depend on the version."""
        self.versions.cut(CATALOG)
        with self._lock:
            self._drop_all()

    def close(self) -> None:
        """Drop every entry and keep none from now on (the catalog was closed or replaced): its budget is
        freed for the caches that go on, and a load still in flight stores nothing."""
        with self._lock:
            self._closed = True
            self._drop_all()

    def _drop_all(self) -> None:
        """Swap in an empty store and release every key of the old one from the budget (callers hold the lock)."""
        dropped = list(cachetools.Cache.__iter__(self._data))
        self._data = self._empty_store()
        self._groups.clear()
        if self.budget is not None:
            for key in dropped:
                self.budget.release(self, key)

    def _store(self, key: K, value: V, ticket: int, size: int | None = None) -> bool:
        return self._store_all([(key, value)], ticket, [size]) == 1

    def _store_all(self, items: Sequence[tuple[K, V]], ticket: int, sizes: Sequence[int | None]) -> int:
        """Store ``items`` (``sizes``: each value's weight, None to weigh it here) under one taking of the lock, and
        then hold the budget to its limit once: a planner's listing threads store thousands of entries a second,
        and taking the lock for each was most of the time they spent storing. How many were stored."""
        if not self.enabled or self._closed:
            return 0
        budget = self.budget
        charged: list[int] = []
        if budget is not None:  # weighed before the lock is taken: no other thread waits for the walk
            charged = [(self._weigh(value) if size is None else size) + deep_size(key) + ENTRY_OVERHEAD
                       for (key, value), size in zip(items, sizes)]
        objects = [self._tracking.object_of(key) for key, _ in items]
        stored = 0
        with self._lock:
            for index, (key, value) in enumerate(items):
                stored += self._keep(key, value, objects[index], ticket, charged[index] if charged else 0)
        if budget is not None and stored:
            budget.enforce()  # holding no lock of this cache's: the victims may be in any cache
        return stored

    def _keep(self, key: K, value: V, obj: CatalogObject | None, ticket: int, size: int) -> bool:
        """Store one entry (callers hold the lock) unless its object changed since ``ticket`` or it outweighs
        the whole budget."""
        if self._closed or self.versions.spoiled(obj, ticket):
            return False
        fingerprint, children = self._tracking.summary(key, value)
        version = self.versions.loaded(obj, fingerprint, children)
        entry = CachedEntry(value, loaded_at=self._wall(), version=version, size=size)
        budget = self.budget
        if budget is not None and not budget.fits(entry.size):
            self._pop(key)  # larger than the whole budget: served to its caller, not kept (nor an older value)
            self._evictions += 1
            self._memory_evictions += 1
            return False
        self._data[key] = entry
        group = self._tracking.group_of(key)
        if group is not None:
            self._groups.setdefault(group, set()).add(key)
        if budget is not None:
            budget.charge(self, key, entry, entry.size)
        return True

    def evict_for_memory(self, key: Any, token: object) -> None:
        """The budget's victim: drop ``key`` unless its entry was replaced since it was chosen (``token``)."""
        with self._lock:
            if self._untouched(key) is token:
                self._data.pop(key, None)
                self._unindex([key])
                self._evictions += 1
                self._memory_evictions += 1

    def _pop(self, key: K) -> None:
        """Forget ``key`` (callers hold the lock)."""
        self._data.pop(key, None)
        self._unindex([key])
        if self.budget is not None:
            self.budget.release(self, key)

    def _unindex(self, keys: list[K]) -> None:
        for key in keys:
            group = self._tracking.group_of(key)
            members = self._groups.get(group) if group is not None else None
            if members is not None:
                members.discard(key)
                if not members:
                    del self._groups[group]

    def entries(self) -> Iterator[tuple[K, CachedEntry[V]]]:
        """A snapshot of the live entries (expired ones are not shown); reading it changes no LRU order."""
        with self._lock:
            if isinstance(self._data, cachetools.TTLCache):
                self._data.expire()
            keys = list(cachetools.Cache.__iter__(self._data))
            return iter([(key, cachetools.Cache.__getitem__(self._data, key)) for key in keys])

    def __len__(self) -> int:
        with self._lock:
            if isinstance(self._data, cachetools.TTLCache):
                self._data.expire()
            return len(self._data)

    def stats(self) -> CacheStats:
        entries = len(self)
        with self._lock:
            return CacheStats(
                name=self.name, entries=entries, capacity=self.capacity, ttl_seconds=self.ttl_seconds,
                hits=self._hits, misses=self._misses, loads=self._loads, load_failures=self._failures,
                evictions=self._evictions, total_load_seconds=self._load_seconds,
                bytes=self.budget.held_by(self) if self.budget is not None else 0, memory_evictions=self._memory_evictions,
            )

    def _lookup(self, key: K) -> CachedEntry[V] | None:
        with self._lock:
            entry = self._data.get(key)
            if entry is not None:
                entry.hits += 1
                self._hits += 1
                if self.budget is not None:
                    self.budget.touch(self, key)
            return entry

    def _untouched(self, key: K) -> CachedEntry[V] | None:
        """The live entry of ``key`` read past the LRU/TTL bookkeeping (callers hold the lock)."""
        if isinstance(self._data, cachetools.TTLCache):
            self._data.expire()
        try:
            return cachetools.Cache.__getitem__(self._data, key)
        except KeyError:
            return None

    @contextmanager
    def _loading_of(self, key: K) -> Iterator[None]:
        """Held while ``key`` is loaded, so one thread loads it and the others wait for its value. One lock a key
        in flight, dropped by the last thread to leave: a lock shared by several keys (striped) made a key wait
        out an unrelated slow load, as a listing riding out a stopped metastore's retries held up every key
        that hashed beside it."""
        with self._lock:
            load = self._loading.get(key)
            if load is None:
                load = self._loading[key] = Load()
            load.holders += 1
        try:
            with load.lock:
                yield
        finally:
            with self._lock:
                load.holders -= 1
                if not load.holders:
                    del self._loading[key]

    def _evicted(self, keys: list[Any]) -> None:
        """Keys cachetools evicted (count cap) or expired (TTL), under this cache's lock."""
        self._evictions += len(keys)
        self._unindex(keys)
        if self.budget is not None:
            for key in keys:
                self.budget.release(self, key)

    def __repr__(self) -> str:
        return f"MetadataCache({self.name!r}, ttl={self.ttl_seconds}, capacity={self.capacity})"
