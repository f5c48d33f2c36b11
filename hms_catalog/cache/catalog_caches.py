"""The metadata caches of one catalog, and invalidation at partition, table, database and catalog level.

Keys start with ``(database, table)`` and are grouped by it, so REFRESH TABLE or an event about a table
finds the table's entries in every cache by lookup, not by scanning: an event for a table that was never
loaded costs nothing. Every invalidation also cuts the object in the catalog's versions, so a load in
flight does not store what it fetched before the change (dropping nothing is fine; leaving something is not).

Every cache of a catalog, and of every other catalog of the process, is under one memory budget when the
manager passes one (:mod:`hms_catalog.cache.budget`); each cache's entries are weighed as they are stored.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from hms_catalog.cache.budget import MemoryBudget
from hms_catalog.cache.filter_refusals import FilterRefusals
from hms_catalog.cache.metadata_cache import MetadataCache, Tracking
from hms_catalog.cache.self_events import SelfEvents
from hms_catalog.cache.sizing import collection_sizes, deep_size
from hms_catalog.cache.versions import CatalogObject, CatalogVersions, Members
from hms_catalog.properties import CacheConfig

__all__ = ["CatalogCaches", "FILE_BLOCKS", "FOOTERS", "NAMES", "SCHEMA", "PARTITION_VALUES", "PARTITIONS", "FILES",
           "ICEBERG_METADATA", "ICEBERG_MANIFESTS", "ICEBERG_PLANS", "DATABASE_NAMES_KEY"]

NAMES = "names"
SCHEMA = "schema"
PARTITION_VALUES = "partition_values"
PARTITIONS = "partitions"
FILES = "files"
FILE_BLOCKS = "file_blocks"
FOOTERS = "footers"
ICEBERG_METADATA = "iceberg_metadata"
ICEBERG_MANIFESTS = "iceberg_manifests"
ICEBERG_PLANS = "iceberg_plans"
DATABASE_NAMES_KEY: tuple[str, ...] = ()
ICEBERG_METADATA_CAPACITY = 256  # parsed metadata files (they never change: a commit writes a new one)
ICEBERG_MANIFESTS_CAPACITY = 4096  # manifest lists and manifests, as bytes (never rewritten either)
ICEBERG_PLANS_CAPACITY = 32  # scan plans, kept while a client fetches their pages
UNLOADED_SCHEMA_FACTOR = 1.5  # a schema not loaded yet, counted at this times its thrift columns' bytes


def _table_group(key: Hashable) -> Hashable | None:
    return key[:2] if isinstance(key, tuple) and len(key) >= 2 else None


def _table_of_group(group: Hashable) -> CatalogObject | None:
    return CatalogObject.for_table(*group) if isinstance(group, tuple) and len(group) == 2 else None


def _names_object(key: Hashable) -> CatalogObject:
    return CatalogObject("databases") if key == DATABASE_NAMES_KEY else CatalogObject("tables", key[0])  # type: ignore[index]


def _names_summary(key: Hashable, names: Any) -> tuple[Hashable | None, Members | None]:
    if key == DATABASE_NAMES_KEY:
        return (), Members(tuple(names), CatalogObject.for_database)
    return (), Members(tuple(names), functools.partial(CatalogObject.for_table, key[0]))  # type: ignore[index]


def _table_summary(key: Hashable, metadata: Any) -> tuple[Hashable | None, None]:
    """A table's definition as far as readers care: where it is, its columns, keys, kind and parameters."""
    table = getattr(metadata, "table", None)
    if table is None:
        return None, None
    sd = table.sd
    parameters = tuple(sorted((k, v) for k, v in (table.parameters or {}).items() if k != "transient_lastDdlTime"))
    columns = tuple((c.name, c.type) for c in (sd.cols or ())) if sd is not None else ()
    keys = tuple((c.name, c.type) for c in (table.partitionKeys or ()))
    formats = (sd.location, sd.inputFormat, sd.serdeInfo.serializationLib if sd.serdeInfo else None) if sd else ()
    return hash((columns, keys, formats, table.tableType, parameters)), None


def _partition_names_summary(key: Hashable, names: Any) -> tuple[Hashable | None, Members | None]:
    database, table, spec = cast("tuple[str, str, str]", key)  # the partition values cache's key
    if spec != "":
        return None, None  # a narrowed list says nothing about partitions outside it
    return (), Members(tuple(names), functools.partial(CatalogObject, "partition", database, table))


def _listing_summary(key: Hashable, entries: Any) -> tuple[Hashable | None, None]:
    try:
        return hash(tuple((e.path, e.size, e.modification_time) for e in entries)), None
    except (AttributeError, TypeError):
        return None, None


def _table_metadata_size(metadata: Any) -> int:
    """A table's entry: its thrift struct and detection, and its schema. The schema is loaded on first use,
    after the entry is stored and weighed, so one not loaded yet is counted at 1.5 times the thrift columns it
    will be made of (the ratio of the two on tables of 3 to 100 columns). The catalog's storage and IO
    properties, which every entry shares, are not the entry's."""
    table = getattr(metadata, "table", None)
    if table is None:
        return deep_size(metadata)
    if metadata.schema_loaded:
        return deep_size((table, metadata.detection, metadata.schema))
    columns = deep_size(((table.sd.cols if table.sd is not None else None), table.partitionKeys))
    return deep_size((table, metadata.detection)) + int(columns * UNLOADED_SCHEMA_FACTOR)


_NAMES = Tracking(object_of=_names_object, group_of=lambda key: key, group_object=_names_object,
                  summary=_names_summary)
_SCHEMA = Tracking(object_of=lambda key: CatalogObject.for_table(*key), group_of=_table_group,
                   group_object=_table_of_group, summary=_table_summary, weigh=_table_metadata_size)
_PARTITION_VALUES = Tracking(object_of=lambda key: CatalogObject("partitions", key[0], key[1]), group_of=_table_group,
                             group_object=_table_of_group, summary=_partition_names_summary)
_PARTITIONS = Tracking(object_of=lambda key: CatalogObject("partition", *key), group_of=_table_group,
                       group_object=_table_of_group)
_FILES = Tracking(object_of=lambda key: CatalogObject("files", *key), group_of=_table_group,
                  group_object=_table_of_group, summary=_listing_summary, weigh_batch=collection_sizes)
# A plan is an object of its own in the plans' versions: cancelling one spoils the loads of that plan only.
_PLANS = Tracking(object_of=lambda key: CatalogObject("plan", detail=key))


@dataclass(frozen=True)
class CatalogCaches:
    """Name lists, schema (per table), partition values (per table), partitions and file listings.

    Keys: names ``()`` for the database names and ``(db,)`` for a database's table names (they expire
    with the schema TTL); schema ``(db, table)``; partition values ``(db, table, spec)`` (spec ``""`` for
    the full list); partitions ``(db, table, partition_name)``; files ``(db, table, location)``; file
    blocks ``(path, size, mtime)``, which REFRESH keeps because a changed file gets a new key. Names are
    lower-case. Every cache but the blocks groups its keys by ``(db, table)`` so that a table's entries
    are found without scanning, and all share one :class:`CatalogVersions`. ``filter_refusals`` remembers
    the kinds of partition filter the metastore refused per table; it is forgotten with the table.
    ``self_events`` the metastore events this catalog's own DDLs will cause, which the follower skips.
    The Iceberg REST endpoint's parsed metadata files (keyed by location), the manifest lists and manifests
    both planners read (bytes, by location: :mod:`hms_catalog.cache.manifest_io`) and scan plans (by plan id) never
    go stale, as blocks and footers do not: a REFRESH keeps them. ``budget``: the memory budget every cache
    is under (None: none; their entries are not weighed).
    """

    names: MetadataCache[tuple[str, ...], tuple[str, ...]]
    schema: MetadataCache[tuple[str, str], Any]
    partition_values: MetadataCache[tuple[str, str, str], Any]
    partitions: MetadataCache[tuple[str, str, str], Any]
    files: MetadataCache[tuple[str, str, str], Any]
    file_blocks: MetadataCache[tuple[str, int, int], Any]
    footers: MetadataCache[tuple[str, int, int], Any]
    iceberg_metadata: MetadataCache[str, Any]
    iceberg_manifests: MetadataCache[str, bytes]
    iceberg_plans: MetadataCache[str, Any]
    versions: CatalogVersions = field(default_factory=CatalogVersions)
    filter_refusals: FilterRefusals = field(default_factory=FilterRefusals)
    self_events: SelfEvents = field(default_factory=SelfEvents)
    budget: MemoryBudget | None = None

    @classmethod
    def from_config(cls, config: CacheConfig, versions: CatalogVersions | None = None,
                    budget: MemoryBudget | None = None) -> CatalogCaches:
        versions = versions if versions is not None else CatalogVersions()

        def cache(name: str, ttl: int, capacity: int, tracking: Tracking | None,
                  own: CatalogVersions | None = None) -> MetadataCache[Any, Any]:
            return MetadataCache(name, ttl_seconds=ttl, capacity=capacity, versions=own or versions, tracking=tracking,
                                 budget=budget)

        return cls(
            names=cache(NAMES, config.schema_ttl, config.schema_capacity, _NAMES),
            schema=cache(SCHEMA, config.schema_ttl, config.schema_capacity, _SCHEMA),
            partition_values=cache(PARTITION_VALUES, config.partition_ttl, config.partition_values_capacity,
                                   _PARTITION_VALUES),
            partitions=cache(PARTITIONS, config.partition_ttl, config.partition_capacity, _PARTITIONS),
            files=cache(FILES, config.file_ttl, config.file_capacity, _FILES),
            file_blocks=cache(FILE_BLOCKS, config.file_ttl, config.file_capacity, None),
            footers=cache(FOOTERS, config.file_ttl, config.file_capacity, None),
            # Versions of their own: what they hold is no catalog object, and dropping a plan (a cancel) must
            # not spoil the catalog's loads in flight.
            iceberg_metadata=cache(ICEBERG_METADATA, -1, ICEBERG_METADATA_CAPACITY, None, CatalogVersions()),
            iceberg_manifests=cache(ICEBERG_MANIFESTS, -1, ICEBERG_MANIFESTS_CAPACITY, None, CatalogVersions()),
            iceberg_plans=cache(ICEBERG_PLANS, -1, ICEBERG_PLANS_CAPACITY, _PLANS, CatalogVersions()),
            versions=versions,
            budget=budget,
        )

    def __iter__(self) -> Iterator[MetadataCache[Any, Any]]:
        return iter((self.names, self.schema, self.partition_values, self.partitions, self.files, self.file_blocks,
                     self.footers, self.iceberg_metadata, self.iceberg_manifests, self.iceberg_plans))

    def close(self) -> None:
        """Drop every entry and keep none from now on (the catalog is closed or replaced), freeing its share of
        the memory budget for the catalogs that go on."""
        for cache in self:
            cache.close()

    def _table_caches(self) -> tuple[MetadataCache[Any, Any], ...]:
        return (self.schema, self.partition_values, self.partitions, self.files)

    def invalidate_table(self, database: str, table: str) -> None:
        """Everything cached of one table (its definition, partitions and listings); O(its entries)."""
        group = (database.lower(), table.lower())
        for cache in self._table_caches():
            cache.invalidate_group(group)
        self.filter_refusals.forget_table(database, table)

    def invalidate_table_names(self, database: str | None) -> None:
        """The list of a database's table names, or (``None``) the list of database names."""
        self.names.invalidate(DATABASE_NAMES_KEY if database is None else (database.lower(),))

    def invalidate_partitions(self, database: str, table: str, names: Iterable[str] = (),
                              locations: Iterable[str] = (), *, name_lists: bool = True) -> None:
        """The named partitions, the listings of ``locations`` and (unless the set of partitions is known
        not to have changed, ``name_lists=False``) the table's partition name lists."""
        database, table = database.lower(), table.lower()
        if name_lists:
            self.partition_values.invalidate_group((database, table))
        for name in names:
            self.partitions.invalidate((database, table, name))
        for location in locations:
            self.files.invalidate((database, table, location))

    def invalidate_listings(self, database: str, table: str) -> None:
        """Every file listing of one table (its data changed, its definition did not)."""
        self.files.invalidate_group((database.lower(), table.lower()))

    def invalidate_database(self, database: str) -> None:
        """Everything of the database, its table-name list, and the database-name list."""
        database = database.lower()
        self.versions.cut(CatalogObject.for_database(database))
        for cache in self._table_caches():
            for group in cache.groups():
                if isinstance(group, tuple) and group and group[0] == database:
                    cache.invalidate_group(group)
        self.names.invalidate((database,))
        self.names.invalidate(DATABASE_NAMES_KEY)
        self.filter_refusals.forget_database(database)

    def invalidate_all(self) -> None:
        """Everything but what cannot be stale: block locations and footers, keyed by file identity (path,
        size, mtime), so a file that changed gets a new key; Iceberg metadata files, manifest lists, manifests and
        plans, which a commit never rewrites (it writes new files)."""
        for cache in self:
            if cache not in (self.file_blocks, self.footers, self.iceberg_metadata, self.iceberg_manifests,
                             self.iceberg_plans):
                cache.clear()
        self.filter_refusals.clear()
