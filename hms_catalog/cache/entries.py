"""What a metadata cache keeps and reports: an entry, its statistics, and how its keys map onto catalog objects.

Apart from :mod:`hms_catalog.cache.metadata_cache` so that the cache's module holds the cache's behaviour only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from hms_catalog.cache.versions import CatalogObject, Members

__all__ = ["ENTRY_OVERHEAD", "CacheStats", "CachedEntry", "Tracking"]

V = TypeVar("V")

# Bytes an entry costs besides its key and value: its CachedEntry, its slots in the cachetools maps and
# the LRU order, its group's set, and its place in the budget's order (measured with tracemalloc).
ENTRY_OVERHEAD = 600


@dataclass
class CachedEntry(Generic[V]):
    """A cached value with when it was loaded (wall clock) and how many times it was served."""

    value: V
    loaded_at: float
    hits: int = 0
    version: int = 0
    size: int = 0  # bytes charged to the memory budget (0: none)


@dataclass(frozen=True)
class Tracking:
    """How a cache's keys map onto catalog objects, for versions, the change log and group invalidation.

    ``object_of``: the object a key holds (None: only whole-catalog invalidations concern it).
    ``group_of``: the group a key belongs to (None: no group), and ``group_object`` the object standing
    for a whole group. ``summary``: what a load found, as (fingerprint, children) for the change log. ``weigh``: the bytes a
    value holds, for the memory budget (None: :func:`~hms_catalog.cache.sizing.deep_size` of it). ``weigh_batch``:
    the bytes of each of the values :meth:`MetadataCache.put_all` stores together (None: a sample weighed and the
    others charged its median, :func:`~hms_catalog.cache.sizing.batch_sizes`).
    """

    object_of: Callable[[Any], CatalogObject | None] = lambda key: None
    group_of: Callable[[Any], Hashable | None] = lambda key: None
    group_object: Callable[[Hashable], CatalogObject | None] = lambda group: None
    summary: Callable[[Any, Any], tuple[Hashable | None, Members | Iterable[CatalogObject] | None]] = (
        lambda key, value: (None, None))
    weigh: Callable[[Any], int] | None = None
    weigh_batch: Callable[[Sequence[Any]], list[int]] | None = None


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
    bytes: int = 0  # charged to the memory budget
    memory_evictions: int = 0  # of ``evictions``, those made to keep the memory budget

    @property
    def average_load_ms(self) -> float:
        return (self.total_load_seconds / self.loads * 1000.0) if self.loads else 0.0
