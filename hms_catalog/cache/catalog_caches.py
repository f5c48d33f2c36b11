"""The four metadata caches of one catalog, and invalidation at table, database and catalog level.

Keys all start with ``(database, table)`` so that REFRESH TABLE can drop a table's entries from every
cache with one predicate, including entries of a cache the table never touched or whose entries were
already evicted (dropping nothing is fine; leaving something is not).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any

from hms_catalog.cache.metadata_cache import MetadataCache
from hms_catalog.properties import CacheConfig

__all__ = ["CatalogCaches", "FILE_BLOCKS", "NAMES", "SCHEMA", "PARTITION_VALUES", "PARTITIONS", "FILES", "DATABASE_NAMES_KEY"]

NAMES = "names"
SCHEMA = "schema"
PARTITION_VALUES = "partition_values"
PARTITIONS = "partitions"
FILES = "files"
FILE_BLOCKS = "file_blocks"
DATABASE_NAMES_KEY: tuple[str, ...] = ()


def _belongs_to(database: str, table: str | None) -> Callable[[Hashable], bool]:
    def test(key: Hashable) -> bool:
        if not isinstance(key, tuple) or not key:
            return False
        if key[0] != database:
            return False
        return table is None or (len(key) > 1 and key[1] == table)

    return test


@dataclass(frozen=True)
class CatalogCaches:
    """Name lists, schema (per table), partition values (per table), partitions and file listings.

    Keys: names ``()`` for the database names and ``(db,)`` for a database's table names (they expire
    with the schema TTL); schema ``(db, table)``; partition values ``(db, table, spec)`` (spec ``""`` for
    the full list); partitions ``(db, table, partition_name)``; files ``(db, table, location)``; file
    blocks ``(path, size, mtime)``, which REFRESH keeps because a changed file gets a new key. Names are
    lower-case.
    """

    names: MetadataCache[tuple[str, ...], tuple[str, ...]]
    schema: MetadataCache[tuple[str, str], Any]
    partition_values: MetadataCache[tuple[str, str], Any]
    partitions: MetadataCache[tuple[str, str, str], Any]
    files: MetadataCache[tuple[str, str, str], Any]
    file_blocks: MetadataCache[tuple[str, int, int], Any]

    @classmethod
    def from_config(cls, config: CacheConfig) -> CatalogCaches:
        return cls(
            names=MetadataCache(NAMES, ttl_seconds=config.schema_ttl, capacity=config.schema_capacity),
            schema=MetadataCache(SCHEMA, ttl_seconds=config.schema_ttl, capacity=config.schema_capacity),
            partition_values=MetadataCache(
                PARTITION_VALUES, ttl_seconds=config.partition_ttl, capacity=config.partition_values_capacity
            ),
            partitions=MetadataCache(PARTITIONS, ttl_seconds=config.partition_ttl, capacity=config.partition_capacity),
            files=MetadataCache(FILES, ttl_seconds=config.file_ttl, capacity=config.file_capacity),
            file_blocks=MetadataCache(FILE_BLOCKS, ttl_seconds=config.file_ttl, capacity=config.file_capacity),
        )

    def __iter__(self) -> Iterator[MetadataCache[Any, Any]]:
        return iter((self.names, self.schema, self.partition_values, self.partitions, self.files, self.file_blocks))

    def invalidate_table(self, database: str, table: str) -> None:
        matches = _belongs_to(database.lower(), table.lower())
        for cache in self:
            cache.invalidate_where(matches)

    def invalidate_database(self, database: str) -> None:
        """Everything of the database, its table-name list, and the database-name list."""
        matches = _belongs_to(database.lower(), None)
        for cache in self:
            cache.invalidate_where(matches)
        self.names.invalidate(DATABASE_NAMES_KEY)

    def invalidate_all(self) -> None:
        """Everything but the block locations, which are keyed by file identity (path, size, mtime) and so
        cannot be stale: a file that changed gets a new key."""
        for cache in self:
            if cache is not self.file_blocks:
                cache.clear()
