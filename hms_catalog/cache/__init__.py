"""Per-catalog metadata caches (cachetools) with statistics, precise invalidation and one memory budget."""

from __future__ import annotations

from hms_catalog.cache.budget import MemoryBudget
from hms_catalog.cache.catalog_caches import CatalogCaches
from hms_catalog.cache.metadata_cache import CachedEntry, CacheStats, MetadataCache

__all__ = ["CacheStats", "CachedEntry", "CatalogCaches", "MemoryBudget", "MetadataCache"]
