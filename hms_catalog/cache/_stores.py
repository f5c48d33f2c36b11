"""The cachetools maps a :class:`~hms_catalog.cache.metadata_cache.MetadataCache` keeps its entries in, which
report what they evict (count cap) or expire (TTL), and a key's load in flight."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import cachetools

__all__ = ["CountingLRUCache", "CountingTTLCache", "Load"]


class CountingTTLCache(cachetools.TTLCache[Any, Any]):
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


class CountingLRUCache(cachetools.LRUCache[Any, Any]):
    def __init__(self, maxsize: int, on_evict: Callable[[list[Any]], None]):
        super().__init__(maxsize=maxsize)
        self._on_evict = on_evict

    def popitem(self) -> Any:
        item = super().popitem()
        self._on_evict([item[0]])
        return item


class Load:
    """A key's load in flight: its lock, and how many threads hold or wait for it."""

    __slots__ = ("lock", "holders")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holders = 0
