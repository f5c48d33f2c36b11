"""Catalog properties: the keys, their defaults, and the one place raw text becomes typed config.

Properties arrive as strings from ``CREATE CATALOG ... PROPERTIES (...)`` and are validated once, when
the statement runs, into a frozen :class:`CatalogConfig`. Unknown keys are kept untouched (users pass
Hadoop and Kerberos settings through), and the raw mapping is kept only to be shown back, masked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from hms_catalog._property_values import property_as_bool, property_as_int, property_as_seconds
from hms_catalog._secrets import MASK, is_secret_key, mask_properties
from hms_catalog.client.config import (
    BORROW_TIMEOUT,
    BORROW_TIMEOUT_DEFAULT,
    CONNECT_TIMEOUT,
    CONNECT_TIMEOUT_DEFAULT,
    FAILURE_RETRIES,
    FAILURE_RETRIES_DEFAULT,
    METASTORE_URIS,
    PARTITION_BATCH_SIZE,
    PARTITION_BATCH_SIZE_DEFAULT,
    POOL_SIZE,
    POOL_SIZE_DEFAULT,
    RETRY_DELAY,
    RETRY_DELAY_DEFAULT,
    SOCKET_TIMEOUT,
    SOCKET_TIMEOUT_DEFAULT,
    URI_BACKOFF,
    URI_BACKOFF_DEFAULT,
    ClientConfig,
    MetastoreUri,
    parse_uris,
)
from hms_catalog.errors import ConfigurationError

if TYPE_CHECKING:
    from hms_catalog.filesystem.config import FilesystemConfig
    from hms_catalog.storage.properties import StorageConfig

__all__ = [
    "CATALOG_TYPE",
    "TYPE",
    "METASTORE_URIS",
    "METASTORE_CATALOG",
    "METASTORE_CATALOG_DEFAULT",
    "POOL_SIZE",
    "POOL_SIZE_DEFAULT",
    "SOCKET_TIMEOUT",
    "SOCKET_TIMEOUT_DEFAULT",
    "CONNECT_TIMEOUT",
    "CONNECT_TIMEOUT_DEFAULT",
    "FAILURE_RETRIES",
    "FAILURE_RETRIES_DEFAULT",
    "RETRY_DELAY",
    "RETRY_DELAY_DEFAULT",
    "BORROW_TIMEOUT",
    "BORROW_TIMEOUT_DEFAULT",
    "URI_BACKOFF",
    "URI_BACKOFF_DEFAULT",
    "SCHEMA_CACHE_TTL",
    "PARTITION_CACHE_TTL",
    "FILE_META_CACHE_TTL",
    "SCHEMA_CACHE_CAPACITY",
    "PARTITION_VALUES_CACHE_CAPACITY",
    "PARTITION_CACHE_CAPACITY",
    "FILE_META_CACHE_CAPACITY",
    "FILE_SPLIT_SIZE",
    "FILE_SPLIT_MIN_SIZE",
    "FILE_SPLIT_BLOCK_SIZE",
    "MAX_PARTITIONS_PER_SCAN",
    "RECURSIVE_DIRECTORIES",
    "IGNORE_ABSENT_PARTITIONS",
    "LISTING_PARALLELISM",
    "PLAN_PARTITION_BATCH",
    "EVENTS_ENABLED",
    "EVENTS_BATCH_SIZE",
    "PARTITION_BATCH_SIZE",
    "EVENTS_POLLING_INTERVAL_MS",
    "EVENTS_MAX_PENDING",
    "EventsConfig",
    "THRIFT_ACCESS",
    "MetastoreUri",
    "ClientConfig",
    "CacheConfig",
    "ScanConfig",
    "CatalogConfig",
    "parse_uris",
    "property_as_int",
    "property_as_seconds",
    "property_as_bool",
    "is_secret_key",
    "mask_properties",
    "MASK",
]

# The metastore client's own keys (hive.metastore.uris, the pool's size, timeouts and retries) live with the
# client (hms_catalog.client.config), which reads no catalog property itself; they are named here too.
CATALOG_TYPE = "hms"

TYPE = "type"
# Hive 3 and later hold several catalogs; unset, requests name none and the metastore uses its default
# (``metastore.catalog.default``, "hive" unless changed). Setting it needs a Hive 3 or later metastore.
METASTORE_CATALOG = "hive.metastore.catalog.name"
METASTORE_CATALOG_DEFAULT = "hive"

# Cache lifetimes (Doris's names): -1 never expires, 0 disables the cache, N > 0 expires after N seconds.
SCHEMA_CACHE_TTL = "schema.cache.ttl-second"
SCHEMA_CACHE_TTL_DEFAULT = 86400
PARTITION_CACHE_TTL = "partition.cache.ttl-second"
PARTITION_CACHE_TTL_DEFAULT = 28800
FILE_META_CACHE_TTL = "file.meta.cache.ttl-second"
FILE_META_CACHE_TTL_DEFAULT = 28800
SCHEMA_CACHE_CAPACITY = "schema.cache.capacity"
# Tables (and name lists) a catalog keeps, and the tables whose partition names it keeps: sized so the memory budget
# binds first, not the count. Doris keeps 10,000, which left nine tenths of a 100,000-table catalog cold under any
# budget; those 100,000 tables warm added 731 MiB of resident memory (1.1 GiB as the budget counts them).
SCHEMA_CACHE_CAPACITY_DEFAULT = 100000
PARTITION_VALUES_CACHE_CAPACITY = "partition.values.cache.capacity"
PARTITION_VALUES_CACHE_CAPACITY_DEFAULT = 100000
PARTITION_CACHE_CAPACITY = "partition.cache.capacity"
PARTITION_CACHE_CAPACITY_DEFAULT = 100000
FILE_META_CACHE_CAPACITY = "file.meta.cache.capacity"
FILE_META_CACHE_CAPACITY_DEFAULT = 100000

# Split planning. The 128 MiB floor is the mission's rule; it is a property so tests can cut small files.
FILE_SPLIT_SIZE = "file_split_size"
FILE_SPLIT_SIZE_DEFAULT = 0  # 0: the file's block size
FILE_SPLIT_MIN_SIZE = "file.split.min-size"
FILE_SPLIT_MIN_SIZE_DEFAULT = 128 * 1024 * 1024
FILE_SPLIT_BLOCK_SIZE = "file.split.block-size"
FILE_SPLIT_BLOCK_SIZE_DEFAULT = 32 * 1024 * 1024  # Hadoop's local filesystem
MAX_PARTITIONS_PER_SCAN = "max_partitions_per_scan"
MAX_PARTITIONS_PER_SCAN_DEFAULT = 100000
RECURSIVE_DIRECTORIES = "hive.recursive_directories"
IGNORE_ABSENT_PARTITIONS = "hive.ignore_absent_partitions"
LISTING_PARALLELISM = "file.listing.parallelism"
LISTING_PARALLELISM_DEFAULT = 8
# Partitions a Hive scan fetches, lists and cuts at a time: what bounds the partition objects a plan holds.
# Four get_partitions_by_names calls' worth, so each batch's calls still run in parallel on the pool.
PLAN_PARTITION_BATCH = "planner.partition.batch"
PLAN_PARTITION_BATCH_DEFAULT = 4000

# Following the metastore's notification log (Doris's names). Off by default: it needs a metastore that
# writes the log (DbNotificationListener or the embedded metastore's listener).
EVENTS_ENABLED = "hive.enable_hms_events_incremental_sync"
EVENTS_BATCH_SIZE = "hive.hms_events_batch_size_per_rpc"
EVENTS_BATCH_SIZE_DEFAULT = 500
EVENTS_POLLING_INTERVAL_MS = "hive.hms_events_polling_interval_ms"
EVENTS_POLLING_INTERVAL_MS_DEFAULT = 10000
# A follower more than this many events behind the metastore drops the whole catalog's caches and goes on from
# the newest event instead of applying them all: past this, reloading what is read costs less than catching
# up, and the caches would be stale for as long as catching up took. 0: no bound.
EVENTS_MAX_PENDING = "hive.hms_events_max_pending"
EVENTS_MAX_PENDING_DEFAULT = 50000

# What clients of the service's Hive Metastore thrift endpoint may do with this catalog: read, or also change
# it (the changes are forwarded to its metastore). Read-only unless the definition grants writes.
THRIFT_ACCESS = "thrift.access"
THRIFT_ACCESS_DEFAULT = "read"
_THRIFT_ACCESS_VALUES = ("read", "write")

_CATALOG_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class CacheConfig:
    """Lifetimes (seconds; -1 forever, 0 off) and capacities (entries) of a catalog's metadata caches."""

    schema_ttl: int = SCHEMA_CACHE_TTL_DEFAULT
    partition_ttl: int = PARTITION_CACHE_TTL_DEFAULT
    file_ttl: int = FILE_META_CACHE_TTL_DEFAULT
    schema_capacity: int = SCHEMA_CACHE_CAPACITY_DEFAULT
    partition_values_capacity: int = PARTITION_VALUES_CACHE_CAPACITY_DEFAULT
    partition_capacity: int = PARTITION_CACHE_CAPACITY_DEFAULT
    file_capacity: int = FILE_META_CACHE_CAPACITY_DEFAULT

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> CacheConfig:
        return cls(
            schema_ttl=property_as_int(props, SCHEMA_CACHE_TTL, SCHEMA_CACHE_TTL_DEFAULT, minimum=-1),
            partition_ttl=property_as_int(props, PARTITION_CACHE_TTL, PARTITION_CACHE_TTL_DEFAULT, minimum=-1),
            file_ttl=property_as_int(props, FILE_META_CACHE_TTL, FILE_META_CACHE_TTL_DEFAULT, minimum=-1),
            schema_capacity=property_as_int(props, SCHEMA_CACHE_CAPACITY, SCHEMA_CACHE_CAPACITY_DEFAULT, minimum=1),
            partition_values_capacity=property_as_int(
                props, PARTITION_VALUES_CACHE_CAPACITY, PARTITION_VALUES_CACHE_CAPACITY_DEFAULT, minimum=1
            ),
            partition_capacity=property_as_int(props, PARTITION_CACHE_CAPACITY, PARTITION_CACHE_CAPACITY_DEFAULT, minimum=1),
            file_capacity=property_as_int(props, FILE_META_CACHE_CAPACITY, FILE_META_CACHE_CAPACITY_DEFAULT, minimum=1),
        )


@dataclass(frozen=True)
class ScanConfig:
    """How the planner lists and cuts files (sizes in bytes)."""

    split_size: int = FILE_SPLIT_SIZE_DEFAULT
    min_split_size: int = FILE_SPLIT_MIN_SIZE_DEFAULT
    block_size: int = FILE_SPLIT_BLOCK_SIZE_DEFAULT
    max_partitions: int = MAX_PARTITIONS_PER_SCAN_DEFAULT
    recursive: bool = False
    ignore_absent: bool = True
    listing_parallelism: int = LISTING_PARALLELISM_DEFAULT
    partition_batch: int = PLAN_PARTITION_BATCH_DEFAULT

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> ScanConfig:
        return cls(
            split_size=property_as_int(props, FILE_SPLIT_SIZE, FILE_SPLIT_SIZE_DEFAULT, minimum=0),
            min_split_size=property_as_int(props, FILE_SPLIT_MIN_SIZE, FILE_SPLIT_MIN_SIZE_DEFAULT, minimum=1),
            block_size=property_as_int(props, FILE_SPLIT_BLOCK_SIZE, FILE_SPLIT_BLOCK_SIZE_DEFAULT, minimum=1),
            max_partitions=property_as_int(props, MAX_PARTITIONS_PER_SCAN, MAX_PARTITIONS_PER_SCAN_DEFAULT, minimum=1),
            recursive=property_as_bool(props, RECURSIVE_DIRECTORIES, False),
            ignore_absent=property_as_bool(props, IGNORE_ABSENT_PARTITIONS, True),
            listing_parallelism=property_as_int(props, LISTING_PARALLELISM, LISTING_PARALLELISM_DEFAULT, minimum=1),
            partition_batch=property_as_int(props, PLAN_PARTITION_BATCH, PLAN_PARTITION_BATCH_DEFAULT, minimum=1),
        )


@dataclass(frozen=True)
class EventsConfig:
    """Whether and how often a catalog reads the metastore's notification log (interval in seconds)."""

    enabled: bool = False
    batch_size: int = EVENTS_BATCH_SIZE_DEFAULT
    polling_interval: float = EVENTS_POLLING_INTERVAL_MS_DEFAULT / 1000.0
    max_pending: int = EVENTS_MAX_PENDING_DEFAULT

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> EventsConfig:
        interval = property_as_int(props, EVENTS_POLLING_INTERVAL_MS, EVENTS_POLLING_INTERVAL_MS_DEFAULT, minimum=1)
        return cls(
            enabled=property_as_bool(props, EVENTS_ENABLED, False),
            batch_size=property_as_int(props, EVENTS_BATCH_SIZE, EVENTS_BATCH_SIZE_DEFAULT, minimum=1),
            polling_interval=interval / 1000.0,
            max_pending=property_as_int(props, EVENTS_MAX_PENDING, EVENTS_MAX_PENDING_DEFAULT, minimum=0),
        )


@dataclass(frozen=True)
class CatalogConfig:
    """The validated, typed form of one catalog's properties."""

    client: ClientConfig
    raw: Mapping[str, str]
    caches: CacheConfig = CacheConfig()
    scan: ScanConfig = ScanConfig()
    events: EventsConfig = EventsConfig()
    filesystem: FilesystemConfig | None = None  # set for 'type'='filesystem': folders, not a metastore
    storage: StorageConfig | None = None  # how to reach the stores its locations name (None: defaults)
    thrift_access: str = THRIFT_ACCESS_DEFAULT  # 'read' or 'write': what the thrift endpoint lets clients do

    @property
    def thrift_writable(self) -> bool:
        return self.thrift_access == "write"

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> CatalogConfig:
        """Validate ``properties`` and build the config; raises :class:`ConfigurationError` naming the key.

        The files properties name (a keytab) are checked by :meth:`check_files`, at CREATE and ALTER only.
        """
        # Imported here: the Kerberos and filesystem keys live with their code, which reads them with this
        # module's helpers.
        from hms_catalog.filesystem.config import CATALOG_TYPE as FILESYSTEM_TYPE
        from hms_catalog.filesystem.config import FilesystemConfig
        from hms_catalog.kerberos.config import KerberosConfig
        from hms_catalog.storage.properties import StorageConfig

        props = {str(k).strip(): str(v) for k, v in properties.items()}
        kind = props.get(TYPE)
        if kind is None:
            raise ConfigurationError(f"property '{TYPE}' is required (use '{TYPE}'='{CATALOG_TYPE}' or '{FILESYSTEM_TYPE}')")
        if kind.strip().lower() == FILESYSTEM_TYPE:
            return cls(client=ClientConfig(uris=()), raw=MappingProxyType(dict(props)),
                       caches=CacheConfig.from_properties(props), scan=ScanConfig.from_properties(props),
                       filesystem=FilesystemConfig.from_properties(props), storage=StorageConfig.from_properties(props),
                       thrift_access=_thrift_access(props))
        if kind.strip().lower() != CATALOG_TYPE:
            raise ConfigurationError(f"property '{TYPE}' must be '{CATALOG_TYPE}' or '{FILESYSTEM_TYPE}', got '{kind}'")
        if METASTORE_URIS not in props:
            raise ConfigurationError(f"property '{METASTORE_URIS}' is required, e.g. 'thrift://host:9083'")
        client = ClientConfig(
            uris=parse_uris(props[METASTORE_URIS]),
            pool_size=property_as_int(props, POOL_SIZE, POOL_SIZE_DEFAULT, minimum=1),
            socket_timeout=property_as_seconds(props, SOCKET_TIMEOUT, SOCKET_TIMEOUT_DEFAULT, positive=True),
            connect_timeout=property_as_seconds(props, CONNECT_TIMEOUT, CONNECT_TIMEOUT_DEFAULT, positive=True),
            retries=property_as_int(props, FAILURE_RETRIES, FAILURE_RETRIES_DEFAULT, minimum=0),
            retry_delay=property_as_seconds(props, RETRY_DELAY, RETRY_DELAY_DEFAULT),
            borrow_timeout=property_as_seconds(props, BORROW_TIMEOUT, BORROW_TIMEOUT_DEFAULT, positive=True),
            uri_backoff=property_as_seconds(props, URI_BACKOFF, URI_BACKOFF_DEFAULT),
            metastore_catalog=_metastore_catalog(props),
            kerberos=KerberosConfig.from_properties(props),
            partition_batch_size=property_as_int(props, PARTITION_BATCH_SIZE, PARTITION_BATCH_SIZE_DEFAULT, minimum=1),
        )
        return cls(
            client=client, raw=MappingProxyType(dict(props)), caches=CacheConfig.from_properties(props),
            scan=ScanConfig.from_properties(props), events=EventsConfig.from_properties(props),
            storage=StorageConfig.from_properties(props), thrift_access=_thrift_access(props),
        )

    def check_files(self) -> None:
        """Check the files the properties name exist and say what they should (ConfigurationError naming the key)."""
        if self.client.kerberos is not None:
            self.client.kerberos.check_files()
        # a filesystem catalog's root is checked by the manager, which reaches it with the catalog's storage


def _thrift_access(props: Mapping[str, str]) -> str:
    value = props.get(THRIFT_ACCESS, THRIFT_ACCESS_DEFAULT).strip().lower()
    if value not in _THRIFT_ACCESS_VALUES:
        raise ConfigurationError(f"property '{THRIFT_ACCESS}' must be 'read' or 'write', got '{props[THRIFT_ACCESS]}'")
    return value


def _metastore_catalog(props: Mapping[str, str]) -> str | None:
    """``hive.metastore.catalog.name``, lower-cased as Hive stores catalog names; None when unset."""
    if METASTORE_CATALOG not in props:
        return None
    name = props[METASTORE_CATALOG].strip()
    if not _CATALOG_NAME.match(name):
        raise ConfigurationError(
            f"property '{METASTORE_CATALOG}' must be a metastore catalog name (letters, digits, '_'), got {name!r}"
        )
    return name.lower()
