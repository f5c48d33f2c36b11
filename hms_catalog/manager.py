"""Live catalogs made from stored definitions, rebuilt when a definition changes.

The store is the source of truth and may be changed by another process (a second CLI, a notebook):
each lookup compares the stored id and version with the live catalog's and rebuilds it when they
differ, closing the old one's connections. REFRESHes travel the same way, through the home's refresh
log (:mod:`hms_catalog.refresh_log`): each lookup first applies those other processes announced.

A service replica passes ``shared``: its catalogs' versions and change logs are then the store's, one
replica at a time follows each catalog's metastore events, and what other replicas change reaches this
one through the store (:class:`hms_catalog.state.StoreFollower`), not through the refresh log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from hms_catalog.cache import CatalogCaches
from hms_catalog.cache.shared_versions import SharedCatalogVersions
from hms_catalog.cache.versions import CATALOG, ChangeKind, ChangeSource
from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.client.metastore import MetastoreClient
from hms_catalog.client.pool import HmsClientPool
from hms_catalog.filesystem.client import FilesystemClient
from hms_catalog.filesystem.promotions import PromotionStore
from hms_catalog.model.catalog import ExternalCatalog
from hms_catalog.properties import CatalogConfig, ClientConfig
from hms_catalog.refresh_log import LOST_TRACK, RefreshLog, RefreshRecord
from hms_catalog.state import EventLease, SharedState
from hms_catalog.store import CatalogDefinition, DefinitionStore

__all__ = ["CatalogManager", "ClientFactory", "pooled_client"]

ClientFactory = Callable[[ClientConfig], MetastoreClient]


def pooled_client(config: ClientConfig) -> MetastoreClient:
    """The default client factory: a fresh bounded pool per catalog."""
    return MetastoreClient(HmsClientPool(config))


class CatalogManager:
    """Creates, alters and drops catalog definitions and hands out their live :class:`ExternalCatalog`."""

    def __init__(
        self, store: DefinitionStore, *, client_factory: ClientFactory = pooled_client, refresh_log: RefreshLog | None = None,
        shared: SharedState | None = None,
    ) -> None:
        self.store = store
        self.shared = shared
        self._client_factory = client_factory
        self._lock = threading.Lock()
        self._live: dict[str, ExternalCatalog] = {}
        # REFRESHes of the other processes on this home (a notebook, Spark's planning worker) reach ours.
        self.refresh_log = refresh_log if refresh_log is not None else RefreshLog(
            store.home, writer=None if shared is None else _REPLICA_WRITER + shared.replica)

    def definitions(self) -> list[CatalogDefinition]:
        return self.store.list()

    def catalog(self, name: str) -> ExternalCatalog:
        """The live catalog ``name`` (no metastore call); raises NotFoundError when not defined.

        The definition is read under the lock, so two threads never race an older definition over a
        newer live catalog; a replacement is built before the old one is closed.
        """
        self._apply_others_refreshes()
        with self._lock:
            definition = self.store.get(name)
            live = self._live.get(definition.name)
            if live is not None and live.definition.id == definition.id and live.definition.version >= definition.version:
                fresh = None
            else:
                fresh = self._live[definition.name] = self._build(definition, CatalogConfig.from_properties(definition.properties))
        if fresh is not None:
            if live is not None:
                live.close()
            return fresh
        assert live is not None
        if isinstance(live.versions, SharedCatalogVersions):
            live.versions.catch_up()  # what other replicas changed, before this request reads (one small query)
        return live

    def _build(self, definition: CatalogDefinition, config: CatalogConfig) -> ExternalCatalog:
        client = self._client_for(definition, config)
        if self.shared is None:
            return ExternalCatalog(definition, config, client, CatalogCaches.from_config(config.caches))
        versions = SharedCatalogVersions(self.shared.journal, definition.id)
        lease = EventLease(self.shared.leases, versions, self.shared.replica) if config.events.enabled else None
        return ExternalCatalog(definition, config, client, CatalogCaches.from_config(config.caches, versions),
                               follow_lease=lease)

    def _client_for(self, definition: CatalogDefinition, config: CatalogConfig) -> MetastoreCalls:
        """A metastore client, or for a filesystem catalog the folders' answers with the home's promotions."""
        if config.filesystem is not None:
            return FilesystemClient(definition.name, config.filesystem, PromotionStore(self.store.home, definition.id))
        return self._client_factory(config.client)

    def live_catalogs(self) -> list[ExternalCatalog]:
        """The catalogs built so far in this process (for figures such as a service's metrics)."""
        with self._lock:
            return list(self._live.values())

    def refresh(self, name: str, database: str | None = None, table: str | None = None) -> ExternalCatalog:
        """REFRESH a catalog, one of its databases or one table, here and in every process on this home."""
        catalog = self.catalog(name)
        _refresh(catalog, database, table)
        self.refresh_log.announce(RefreshRecord(catalog.definition.id, database and database.lower(), table and table.lower()))
        return catalog

    def _apply_others_refreshes(self) -> None:
        records = self.refresh_log.poll()
        if not records and records is not LOST_TRACK:
            return
        with self._lock:
            live = {catalog.definition.id: catalog for catalog in self._live.values()}
        if records is LOST_TRACK or any(record.catalog_id == "*" for record in records):
            for catalog in live.values():
                catalog.refresh()
            return
        for record in records:
            if self.shared is not None and record.writer.startswith(_REPLICA_WRITER):
                continue  # another replica's REFRESH: it reaches this one through the store, logged once
            recorded = live.get(record.catalog_id)
            if recorded is not None:
                _refresh(recorded, record.database, record.table)

    def create(
        self, name: str, properties: Mapping[str, str], *, comment: str = "", if_not_exists: bool = False
    ) -> CatalogDefinition | None:
        """Validate and store a new catalog; nothing is stored when validation fails."""
        CatalogConfig.from_properties(properties).check_files()
        return self.store.create(
            CatalogDefinition(name=name.lower(), properties=properties, comment=comment), if_not_exists=if_not_exists
        )

    def alter_properties(
        self, name: str, changes: Mapping[str, str], *, expected_version: int | None = None
    ) -> CatalogDefinition:
        """Merge ``changes`` into the catalog's properties, validating the result before storing it.

        ``expected_version``: store only if the catalog is still at that version (else VersionMismatchError).
        """

        def merge(current: CatalogDefinition) -> CatalogDefinition:
            merged = {**current.properties, **changes}
            CatalogConfig.from_properties(merged).check_files()
            return CatalogDefinition(
                name=current.name, properties=merged, comment=current.comment, id=current.id,
                version=current.version, created_at=current.created_at,
            )

        stored = self.store.update(name, merge, expected_version=expected_version)
        self._forget(stored.name)
        self._log_definition_change(stored)
        return stored

    def rename(self, name: str, new_name: str, *, expected_version: int | None = None) -> CatalogDefinition:
        stored = self.store.rename(name, new_name, expected_version=expected_version)
        self._forget(name.lower())
        self._log_definition_change(stored)
        return stored

    def drop(self, name: str, *, if_exists: bool = False, expected_version: int | None = None) -> CatalogDefinition | None:
        dropped = self.store.drop(name, if_exists=if_exists, expected_version=expected_version)
        self._forget(name.lower())
        if dropped is not None:
            PromotionStore(self.store.home, dropped.id).remove()  # a filesystem catalog's promotions go with it
        return dropped

    def _log_definition_change(self, stored: CatalogDefinition) -> None:
        """With a shared log, an altered catalog is itself a change: every replica's followers drop everything
        they hold of it (their caches were built under the old definition) and keep counting from there."""
        if self.shared is not None:
            self.shared.journal.append(stored.id, [(ChangeKind.INVALIDATED, CATALOG, ChangeSource.DDL)])

    def close(self) -> None:
        with self._lock:
            live, self._live = list(self._live.values()), {}
        for catalog in live:
            catalog.close()

    def _forget(self, name: str) -> None:
        with self._lock:
            live = self._live.pop(name, None)
        if live is not None:
            live.close()


_REPLICA_WRITER = "replica:"  # the refresh log's writer prefix of service replicas


def _refresh(catalog: ExternalCatalog, database: str | None, table: str | None) -> None:
    if database is None:
        catalog.refresh()
    elif table is None:
        catalog.refresh_database(database)
    else:
        catalog.database(database).refresh_table(table)
