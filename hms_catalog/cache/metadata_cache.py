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
- Hits, misses, loads, load time and evictions (size and expiry) are counted; each entry knows when it
  was loaded and how often it was served, so users can see what the cache holds (SHOW CACHE).

``ttl_seconds``: -1 keeps entries until evicted for size or invalidated, 0 disables the cache (every get
loads, nothing is kept), a positive number expires entries that many seconds after they were loaded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import cachetools

from hms_catalog.cache.versions import CATALOG, CatalogObject, CatalogVersions

__all__ = ["MetadataCache", "CacheStats", "CachedEntry", "Tracking"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass
class CachedEntry(Generic[V]):
    """A cached value with when it was loaded (wall clock) and how many times it was served."""

    value: V
    loaded_at: float
    hits: int = 0
    version: int = 0


@dataclass(frozen=True)
class Tracking:
    """How a cache's keys map onto catalog objects, for versions, the change log and group invalidation.

    ``object_of``: the object a key holds (None: only whole-catalog invalidations concern it).
    ``group_of``: the group a key belongs to (None: no group), and ``group_object`` the object standing
    for a whole group. ``summary``: what a load found, as (fingerprint, children) for the change log.
    """

    object_of: Callable[[Any], CatalogObject | None] = lambda key: None
    group_of: Callable[[Any], Hashable | None] = lambda key: None
    group_object: Callable[[Hashable], CatalogObject | None] = lambda group: None
    summary: Callable[[Any, Any], tuple[Hashable | None, Iterable[CatalogObject] | None]] = lambda key, value: (None, None)


@dataclass(frozen=True)
class CacheStats:
    name: str
    entries: int
    capacity: int
    ttl_seconds: int
    hits: int
    misses: int
    loads: int
    load_failures: int
    evictions: int
    total_load_seconds: float

    @property
    def average_load_ms(self) -> float:
        return (self.total_load_seconds / self.loads * 1000.0) if self.loads else 0.0


class _CountingTTLCache(cachetools.TTLCache[Any, Any]):
    def __init__(self, maxsize: int, ttl: float, timer: Callable[[], float], on_evict: Callable[[list[Any]], None]):
        super().__init__(maxsize=maxsize, ttl=ttl, timer=timer)
        self._on_evict = on_evict

    def popitem(self) -> Any:
        item = super().popitem()
        self._on_evict([item[0]])
        return item

    def expire(self, time: float | None = None) -> Any:
        expired = super().expire(time)
        if expired:
            self._on_evict([key for key, _ in expired])
        return expired


class _CountingLRUCache(cachetools.LRUCache[Any, Any]):
    def __init__(self, maxsize: int, on_evict: Callable[[list[Any]], None]):
        super().__init__(maxsize=maxsize)
        self._on_evict = on_evict

    def popitem(self) -> Any:
        item = super().popitem()
        self._on_evict([item[0]])
        return item


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
        self._loading: dict[K, _Load] = {}  # the keys being loaded now, each with its own lock
        self.versions = versions if versions is not None else CatalogVersions()
        self._tracking = tracking if tracking is not None else Tracking()
        self._groups: dict[Hashable, set[K]] = {}
        self._hits = self._misses = self._loads = self._failures = self._evictions = 0
        self._load_seconds = 0.0
        self._clock = clock
        self._data: cachetools.Cache[K, CachedEntry[V]] = self._empty_store()

    def _empty_store(self) -> cachetools.Cache[K, CachedEntry[V]]:
        if self.ttl_seconds > 0:
            return _CountingTTLCache(self.capacity, self.ttl_seconds, self._clock, self._evicted)
        return _CountingLRUCache(self.capacity, self._evicted)

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

    def peek(self, key: K) -> V | None:
        """The cached value without loading, counting a hit, or touching its place in LRU order."""
        with self._lock:
            entry = self._untouched(key)
            return entry.value if entry is not None else None

    def put(self, key: K, value: V, *, ticket: int) -> bool:
        """Store a value loaded elsewhere (a batch load fills many keys with one call).

        ``ticket`` is :meth:`ticket` read before the load began: nothing is stored if the key's object was
        invalidated or dropped since, so a REFRESH or a drop during the load is not undone. Returns
        whether it was stored.
        """
        return self._store(key, value, ticket)

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
            self._data = self._empty_store()
            self._groups.clear()

    def _store(self, key: K, value: V, ticket: int) -> bool:
        if not self.enabled:
            return False
        obj = self._tracking.object_of(key)
        with self._lock:
            if self.versions.spoiled(obj, ticket):
                return False
            fingerprint, children = self._tracking.summary(key, value)
            version = self.versions.loaded(obj, fingerprint, children)
            self._data[key] = CachedEntry(value, loaded_at=self._wall(), version=version)
            group = self._tracking.group_of(key)
            if group is not None:
                self._groups.setdefault(group, set()).add(key)
            return True

    def _pop(self, key: K) -> None:
        """Forget ``key`` (callers hold the lock)."""
        self._data.pop(key, None)
        self._unindex([key])

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
            )

    def _lookup(self, key: K) -> CachedEntry[V] | None:
        with self._lock:
            entry = self._data.get(key)
            if entry is not None:
                entry.hits += 1
                self._hits += 1
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
                load = self._loading[key] = _Load()
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
        self._evictions += len(keys)
        self._unindex(keys)

    def __repr__(self) -> str:
        return f"MetadataCache({self.name!r}, ttl={self.ttl_seconds}, capacity={self.capacity})"


class _Load:
    """A key's load in flight: its lock, and how many threads hold or wait for it."""

    __slots__ = ("lock", "holders")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holders = 0
