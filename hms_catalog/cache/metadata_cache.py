"""One metadata cache: a cachetools map with expiry, a size bound, statistics and single-flight loads.

What it adds to cachetools, and why:
- ``get(key, loader)`` loads a missing key once however many threads ask at the same moment (per-key
  locks), so a cold table asked for by 32 threads costs one metastore call.
- Invalidation is safe against loads in flight: every invalidation bumps an epoch, and a load that
  started before it does not store its (possibly stale) value. After ``invalidate*`` returns, no later
  reader is served what was loaded before it.
- Hits, misses, loads, load time and evictions (size and expiry) are counted; each entry knows when it
  was loaded and how often it was served, so users can see what the cache holds (SHOW CACHE).

``ttl_seconds``: -1 keeps entries until evicted for size or invalidated, 0 disables the cache (every get
loads, nothing is kept), a positive number expires entries that many seconds after they were loaded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import cachetools

__all__ = ["MetadataCache", "CacheStats", "CachedEntry"]

K = TypeVar("K", bound=Hashable)
_LOAD_STRIPES = 64
V = TypeVar("V")


@dataclass
class CachedEntry(Generic[V]):
    """A cached value with when it was loaded (wall clock) and how many times it was served."""

    value: V
    loaded_at: float
    hits: int = 0


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


class _CountingTTLCache(cachetools.TTLCache):  # type: ignore[type-arg]
    def __init__(self, maxsize: int, ttl: float, timer: Callable[[], float], on_evict: Callable[[int], None]):
        super().__init__(maxsize=maxsize, ttl=ttl, timer=timer)
        self._on_evict = on_evict

    def popitem(self) -> Any:
        item = super().popitem()
        self._on_evict(1)
        return item

    def expire(self, time: float | None = None) -> Any:
        expired = super().expire(time)
        if expired:
            self._on_evict(len(expired))
        return expired


class _CountingLRUCache(cachetools.LRUCache):  # type: ignore[type-arg]
    def __init__(self, maxsize: int, on_evict: Callable[[int], None]):
        super().__init__(maxsize=maxsize)
        self._on_evict = on_evict

    def popitem(self) -> Any:
        item = super().popitem()
        self._on_evict(1)
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
        self._load_locks = tuple(threading.Lock() for _ in range(_LOAD_STRIPES))
        self._epoch = 0
        self._hits = self._misses = self._loads = self._failures = self._evictions = 0
        self._load_seconds = 0.0
        self._clock = clock
        self._data: cachetools.Cache[K, CachedEntry[V]]
        if ttl_seconds > 0:
            self._data = _CountingTTLCache(capacity, ttl_seconds, clock, self._evicted)
        else:
            self._data = _CountingLRUCache(capacity, self._evicted)

    @property
    def enabled(self) -> bool:
        return self.ttl_seconds != 0

    def get(self, key: K, loader: Callable[[], V]) -> V:
        """The cached value of ``key``, loading it with ``loader`` (once, whoever asks) when missing."""
        found = self._lookup(key)
        if found is not None:
            return found.value
        with self._lock_for(key):
            found = self._lookup(key)  # another thread may have loaded it while this one waited
            if found is not None:
                return found.value
            with self._lock:
                self._misses += 1
                epoch = self._epoch
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
            with self._lock:
                if self.enabled and epoch == self._epoch:
                    self._data[key] = CachedEntry(value, loaded_at=self._wall())
            return value

    @property
    def epoch(self) -> int:
        """Bumped by every invalidation; pass it to :meth:`put` for a value loaded outside :meth:`get`."""
        with self._lock:
            return self._epoch

    def peek(self, key: K) -> V | None:
        """The cached value without loading, counting a hit, or touching its place in LRU order."""
        with self._lock:
            entry = self._untouched(key)
            return entry.value if entry is not None else None

    def put(self, key: K, value: V, *, epoch: int | None = None) -> bool:
        """Store a value loaded elsewhere (a batch load fills many keys with one call).

        With ``epoch`` (read before the load began), nothing is stored if an invalidation happened since,
        so a REFRESH that returned during the load is not undone. Returns whether it was stored.
        """
        if not self.enabled:
            return False
        with self._lock:
            if epoch is not None and epoch != self._epoch:
                return False
            self._data[key] = CachedEntry(value, loaded_at=self._wall())
            return True

    def invalidate(self, key: K) -> None:
        with self._lock:
            self._epoch += 1
            self._data.pop(key, None)

    def invalidate_where(self, predicate: Callable[[K], bool]) -> int:
        """Drop every key for which ``predicate`` holds; returns how many entries were dropped."""
        with self._lock:
            self._epoch += 1
            doomed = [key for key in list(self._data.keys()) if predicate(key)]
            for key in doomed:
                self._data.pop(key, None)
            return len(doomed)

    def clear(self) -> None:
        with self._lock:
            self._epoch += 1
            self._data.clear()

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
            return cachetools.Cache.__getitem__(self._data, key)  # type: ignore[no-any-return]
        except KeyError:
            return None

    def _lock_for(self, key: K) -> threading.Lock:
        """Loads of one key are serialised by a striped lock: bounded memory, whatever the key count."""
        return self._load_locks[hash(key) % _LOAD_STRIPES]

    def _evicted(self, count: int) -> None:
        self._evictions += count

    def __repr__(self) -> str:
        return f"MetadataCache({self.name!r}, ttl={self.ttl_seconds}, capacity={self.capacity})"
