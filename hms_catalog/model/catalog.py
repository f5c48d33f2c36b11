"""An external catalog over one Hive Metastore: the root of the lazy catalog -> database -> table tree."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hms_catalog._lazy import Lazy
from hms_catalog._locks import TableLocks
from hms_catalog.cache import CatalogCaches
from hms_catalog.cache.catalog_caches import DATABASE_NAMES_KEY
from hms_catalog.cache.shared_versions import SharedCatalogVersions
from hms_catalog.cache.versions import CATALOG, CatalogObject, CatalogVersions, Change, ChangeKind, ChangeSource
from hms_catalog.events import EventApplier, EventFollower
from hms_catalog.events.follower import FollowLease
from hms_catalog.model.database import ExternalDatabase
from hms_catalog.model.table import ExternalTable
from hms_catalog.storage.engines import pyiceberg_properties
from hms_catalog.storage.resolver import StorageResolver

if TYPE_CHECKING:
    from hms_catalog.client.calls import MetastoreCalls
    from hms_catalog.client.metrics import MetricsSnapshot
    from hms_catalog.properties import CatalogConfig
    from hms_catalog.store import CatalogDefinition

__all__ = ["ExternalCatalog"]


class ExternalCatalog:
    """A catalog built from its stored definition, with its metastore client and caches passed in.

    Creating it makes no metastore call; each level fetches only what is asked of it, once. Database and
    table handles are made on demand without asking the metastore whether they exist: the first real
    use (DESCRIBE, SHOW TABLES) finds out, so ``DESCRIBE cat.db.t`` on a cold catalog is one get_table.

    With ``hive.enable_hms_events_incremental_sync``, the first use also fixes the follower's starting
    position (before anything is loaded: the metastore's newest event id, or with a lease the position
    stored in the store) and starts following the notification log; :meth:`close` stops it. A process that
    follows from the catalog's definition on (``follow_on_first_use=False``, a service) still fixes the
    position at the first use; one that never follows here (``followed=False``, a one-shot run) does not.

    Replicas sharing a store pass ``follow_lease`` (one replica follows at a time) and caches whose versions
    are the store's: what another replica logs (a REFRESH, a DDL, an event it applied) drops what this one
    cached of the object.
    """

    def __init__(
        self,
        definition: CatalogDefinition,
        config: CatalogConfig,
        client: MetastoreCalls,
        caches: CatalogCaches | None = None,
        *,
        follow_lease: FollowLease | None = None,
        write_jobs: Any = None,
        follow_on_first_use: bool = True,
        followed: bool = True,
        storage: StorageResolver | None = None,
    ) -> None:
        self.definition = definition
        self.config = config
        self.client = client
        # how its tables' locations are reached (rebuilt with the catalog when its properties change)
        self.storage = storage if storage is not None else StorageResolver(config.storage, name=definition.name)
        self.io_properties = pyiceberg_properties(self.storage.config, config.raw)
        self.caches = caches if caches is not None else CatalogCaches.from_config(config.caches)
        self._lock = threading.Lock()
        self._databases: dict[str, ExternalDatabase] = {}
        self.follower: EventFollower | None = None
        if config.events.enabled:
            applier = EventApplier(self.caches, on_database=self._forget_database)
            self.follower = EventFollower(definition.name, client, applier, config.events, self._invalidate_all,
                                          lease=follow_lease)
        if isinstance(self.caches.versions, SharedCatalogVersions):
            self.caches.versions.listen(self._changed_elsewhere)
        # A serving process calls follow_events() when it builds the catalog; a one-shot CLI run never follows.
        self._follow_on_first_use = follow_on_first_use
        self._followed = followed or follow_on_first_use
        self._following = Lazy(self._first_use)
        self.ddl_locks = TableLocks()  # DDLs on one table (or database) of this catalog run one at a time
        # Writes begun and not committed or aborted, what commits replaced, and where commits keep their undo logs:
        # a hms_catalog.write.jobs.WriteJobs over this catalog's storage, made by whoever builds the catalog (the
        # manager; None for a catalog that takes no writes). The write path reads tables through this model, so
        # the model names none of the write path's types: the write path reaches it typed by write.jobs.jobs_of.
        self.write_jobs: Any = write_jobs

    @property
    def name(self) -> str:
        return self.definition.name

    def metrics(self) -> MetricsSnapshot:
        return self.client.metrics()

    @property
    def versions(self) -> CatalogVersions:
        return self.caches.versions

    def database_names(self) -> tuple[str, ...]:
        """Names of the databases, lower-case and sorted: one get_all_databases."""
        self._following.get()
        return self.caches.names.get(DATABASE_NAMES_KEY, self._load_database_names)

    def database(self, name: str) -> ExternalDatabase:
        """The handle of ``name``; makes no metastore call (but the catalog's first use starts its follower)."""
        self._following.get()
        key = name.lower()
        with self._lock:
            found = self._databases.get(key)
            if found is None:
                found = ExternalDatabase(
                    self.name, key, self.client, self.caches, self.io_properties, parallelism=self.config.client.pool_size,
                    storage=self.storage,
                )
                self._databases[key] = found
            return found

    def table(self, database: str, name: str) -> ExternalTable:
        return self.database(database).table(name)

    def refresh(self, source: ChangeSource = ChangeSource.REFRESH) -> None:
        """Forget every name list and everything cached of every database and table."""
        self.versions.record(ChangeKind.INVALIDATED, CATALOG, source)
        self.caches.invalidate_all()
        with self._lock:
            self._databases.clear()  # the handles hold only their database's definition: new ones start cold

    def refresh_database(self, name: str) -> None:
        self.versions.record(ChangeKind.INVALIDATED, CatalogObject.for_database(name.lower()), ChangeSource.REFRESH)
        self.database(name).refresh()

    def close(self) -> None:
        """Stop following events, close the metastore connections and empty the caches; idempotent."""
        try:
            if self.follower is not None:
                self.follower.stop()
            self.client.close()
            self.storage.close()
        finally:
            self.caches.close()  # its share of the process's cache memory goes to the catalogs that go on

    def follow_events(self) -> None:
        """Follow the metastore's events from now on (a serving process: from the catalog's definition on,
        so a change feed's subscriber sees what is made behind the service without anyone listing first)."""
        self._start_following()

    def _start_following(self) -> None:
        if self.follower is not None:
            self.follower.start()

    def _first_use(self) -> bool:
        """Before the first read: the follower's starting position is fixed no later than this read, or a
        change made between it and the follower's first poll would never be seen (see EventFollower.anchor)."""
        if self.follower is not None and self._followed:
            if self._follow_on_first_use:
                self._start_following()
            self.follower.anchor_for_read()
        return True

    def _invalidate_all(self, reason: str) -> None:
        self.refresh(ChangeSource.EVENT)

    def _changed_elsewhere(self, changes: Sequence[Change]) -> None:
        """Drop what is cached of each object another replica logged a change of (it knows what changed)."""
        caches = self.caches
        for change in changes:
            obj, kind = change.object, change.kind
            if obj == CATALOG:
                caches.invalidate_all()
                with self._lock:
                    self._databases.clear()
            elif obj.kind == "databases":
                caches.invalidate_table_names(None)
            elif obj.kind == "database":
                caches.invalidate_table_names(None)
                if kind is not ChangeKind.ADDED:
                    caches.invalidate_database(obj.database)
                    self._forget_database(obj.database)
            elif obj.kind == "tables":
                caches.invalidate_table_names(obj.database)
            else:  # a table, its partitions or listings: everything of the table
                caches.invalidate_table(obj.database, obj.table)
                if obj.kind == "table" and kind in (ChangeKind.ADDED, ChangeKind.DROPPED):
                    caches.invalidate_table_names(obj.database)

    def _forget_database(self, name: str) -> None:
        with self._lock:
            self._databases.pop(name, None)

    def forget_database(self, name: str) -> None:
        """Drop the handle of ``name`` (its definition with it): a DDL changed or dropped the database."""
        self._forget_database(name.lower())

    def _load_database_names(self) -> tuple[str, ...]:
        return tuple(sorted(name.lower() for name in self.client.get_all_databases()))

    def __repr__(self) -> str:
        return f"ExternalCatalog({self.name!r})"
