"""Live catalogs made from stored definitions, rebuilt when a definition changes.

The store is the source of truth and may be changed by another process (a second CLI, a notebook):
each lookup compares the stored id and version with the live catalog's and rebuilds it when they
differ, closing the old one's connections. REFRESHes travel the same way, through the home's refresh
log (:mod:`hms_catalog.refresh_log`): each lookup first applies those other processes announced.

Every process on a home passes ``shared`` (a service replica, a CLI, a notebook: :mod:`hms_catalog.registry`
does): its catalogs' versions and change logs are then the store's, one process at a time follows each
catalog's metastore events, and what other processes change reaches this one through the store, not
through the refresh log. Before each statement a live catalog costs one indexed read (the definitions'
generation and the catalog's newest version); the definition is read again only when the generation
moved, and the change log only when the catalog's version did (what it names is then dropped from the
caches, object by object). A service replica also runs :class:`hms_catalog.state.StoreFollower`, which
wakes its long polls when another process logs a change.

Where metastore events are followed (:class:`EventFollowing`): a serving process follows every catalog
with ``hive.enable_hms_events_incremental_sync`` from its definition, its alteration and the process's
start on; a REPL or a Python session from the catalog's first use (a standby under the lease when a
service follows); a one-shot CLI run never (it would abandon the follower at once, and a service on the
home follows for it).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum

from hms_catalog.cache import CatalogCaches
from hms_catalog.cache.budget import DEFAULT_CACHE_MEMORY, MemoryBudget
from hms_catalog.cache.shared_versions import SharedCatalogVersions
from hms_catalog.cache.versions import CATALOG, ChangeKind, ChangeSource
from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.client.metastore import MetastoreClient
from hms_catalog.client.pool import HmsClientPool
from hms_catalog.errors import HmsCatalogError
from hms_catalog.filesystem.client import FilesystemClient
from hms_catalog.filesystem.promotions import PromotionStore
from hms_catalog.model.catalog import ExternalCatalog
from hms_catalog.properties import CatalogConfig, ClientConfig
from hms_catalog.refresh_log import LOST_TRACK, RefreshLog, RefreshRecord
from hms_catalog.state import EventLease, SharedState
from hms_catalog.storage.resolver import StorageResolver
from hms_catalog.store import CatalogDefinition, DefinitionStore
from hms_catalog.write.jobs import WriteJobs

_log = logging.getLogger(__name__)


@dataclass
class _Statement:
    """What one statement has read (see CatalogManager.statement): the store's heads of each catalog it looked up,
    and whether it has taken in the other processes' REFRESHes."""

    heads: dict[str, tuple[int, int]] = field(default_factory=dict)
    refreshes_polled: bool = False


_STATEMENT: ContextVar[_Statement | None] = ContextVar("hms_catalog_statement", default=None)

__all__ = ["CatalogManager", "ClientFactory", "EventFollowing", "pooled_client"]

ClientFactory = Callable[[ClientConfig], MetastoreClient]


def pooled_client(config: ClientConfig) -> MetastoreClient:
    """The default client factory: a fresh bounded pool per catalog."""
    return MetastoreClient(HmsClientPool(config))


class EventFollowing(str, Enum):
    """When this process follows the metastore events of a catalog that has following on."""

    SERVE = "serve"  # from the catalog's definition, alteration and the process's start on (a service)
    FIRST_USE = "first use"  # from the catalog's first use here (a REPL, a notebook)
    OFF = "off"  # never here (a one-shot CLI run: a service on the home follows for it)


class CatalogManager:
    """Creates, alters and drops catalog definitions and hands out their live :class:`ExternalCatalog`.

    ``events``: when this process follows metastore events (see :class:`EventFollowing`); set before the
    first catalog is built (a service sets SERVE as it starts). ``cache_memory``: the bytes every cache of
    every catalog it builds may hold together: a :class:`MemoryBudget` (to share one with other managers),
    or a size such as ``"512MiB"``, ``"2GiB"``, a number of bytes, or ``"unlimited"`` (default 1 GiB).
    """

    def __init__(
        self, store: DefinitionStore, *, client_factory: ClientFactory = pooled_client, refresh_log: RefreshLog | None = None,
        shared: SharedState | None = None, events: EventFollowing = EventFollowing.FIRST_USE,
        cache_memory: MemoryBudget | str | int = DEFAULT_CACHE_MEMORY,
    ) -> None:
        self.store = store
        self.cache_budget = MemoryBudget.parse(cache_memory, "cache_memory")
        self.shared = shared
        self.events = events
        self._client_factory = client_factory
        self._lock = threading.Lock()
        self._live: dict[str, ExternalCatalog] = {}
        # Each live catalog with the definitions' generation it was last checked at: while the store's is the
        # same, its definition has not changed and need not be read again. Kept as a pair, so a lookup never
        # pairs a catalog already replaced (and closed) with a generation checked for its replacement.
        self._checked: dict[str, tuple[ExternalCatalog, int]] = {}
        # REFRESHes of the other processes on this home (a notebook, Spark's planning worker) reach ours.
        self.refresh_log = refresh_log if refresh_log is not None else RefreshLog(
            store.home, writer=None if shared is None else _REPLICA_WRITER + shared.replica)

    def definitions(self) -> list[CatalogDefinition]:
        return self.store.list()

    def catalog(self, name: str) -> ExternalCatalog:
        """The live catalog ``name`` (no metastore call); raises NotFoundError when not defined.

        With a shared store, a catalog already live costs one indexed read when nothing changed, and absorbs
        what other processes logged when something did. Otherwise (or when a definition moved) the
        definition is read under the lock, so two threads never race an older definition over a newer live
        catalog; a replacement is built before the old one is closed.
        """
        statement = _STATEMENT.get()
        if statement is None or not statement.refreshes_polled:
            self._apply_others_refreshes()
            if statement is not None:
                statement.refreshes_polled = True
        checked = self._checked.get(name.lower())
        if checked is not None and self.shared is not None and isinstance(checked[0].versions, SharedCatalogVersions):
            live, versions = checked[0], checked[0].versions
            heads = statement.heads.get(versions.catalog_id) if statement is not None else None
            if heads is None:
                heads = self.shared.journal.heads(versions.catalog_id)
                if statement is not None:
                    statement.heads[versions.catalog_id] = heads
            generation, current = heads
            if checked[1] == generation:
                if current > versions.current or versions.pending():
                    versions.flush()  # what other processes changed, before this statement reads
                return live
        return self._checked_catalog(name)

    @contextlib.contextmanager
    def statement(self) -> Iterator[None]:
        """One statement, or one call of a front end: within it, :meth:`catalog` reads each catalog's heads from the
        shared store once, and takes in the REFRESHes other processes on this home logged once, however many times
        the call looks a catalog up (a thrift get_all_databases did three times, each read most of the call's
        time). What another replica or process logs after those reads is seen by the next statement, as it would be
        had the statement begun a moment earlier. Nested statements share the outer one's, and so does work the
        statement hands to other threads in a copy of its context."""
        if _STATEMENT.get() is not None:
            yield
            return
        token = _STATEMENT.set(_Statement())
        try:
            yield
        finally:
            _STATEMENT.reset(token)

    def _checked_catalog(self, name: str) -> ExternalCatalog:
        with self._lock:
            # The generation is read before the definition: a change after it moves it, and is seen next time.
            generation = self.shared.journal.generation() if self.shared is not None else None
            definition = self.store.get(name)
            live = self._live.get(definition.name)
            if live is not None and live.definition.id == definition.id and live.definition.version >= definition.version:
                fresh = None
            else:
                fresh = self._live[definition.name] = self._build(definition, CatalogConfig.from_properties(definition.properties))
            if generation is not None:
                self._checked[definition.name] = (self._live[definition.name], generation)
        if fresh is not None:
            if live is not None:
                live.close()
            if self.events is EventFollowing.SERVE:
                fresh.follow_events()
            return fresh
        assert live is not None
        if isinstance(live.versions, SharedCatalogVersions):
            live.versions.flush()  # what other processes changed, before this statement reads (one small query)
        return live

    def follow_defined(self) -> None:
        """A serving process: follow every defined catalog with event following on, now (at the start, and
        when the store's definitions moved), and close live catalogs whose definition is gone."""
        if self.events is not EventFollowing.SERVE:
            return
        definitions = self.definitions()
        defined = {definition.name for definition in definitions}
        for name in [name for name in self.live_names() if name not in defined]:
            self._forget(name)  # dropped (or renamed) elsewhere: stop following it here
        live = set(self.live_names())
        for definition in definitions:
            try:
                if definition.name in live or CatalogConfig.from_properties(definition.properties).events.enabled:
                    self.catalog(definition.name)
            except HmsCatalogError as error:  # one bad catalog must not keep the others from following
                _log.warning("catalog %s: not followed: %s", definition.name, error)

    def live_names(self) -> list[str]:
        with self._lock:
            return list(self._live)

    def finish_unfinished_commits(self) -> None:
        """Build every catalog whose commit folder holds undo logs: building one undoes (or finishes) the
        commits a killed process left, so a service that starts serves no table half-written."""
        for definition in self.definitions():
            folder = self.store.home / "commits" / definition.id
            if folder.is_dir() and any(folder.rglob("*.jsonl")):
                self.catalog(definition.name)

    def _build(self, definition: CatalogDefinition, config: CatalogConfig) -> ExternalCatalog:
        storage = StorageResolver(config.storage, name=definition.name)
        client = self._client_for(definition, config, storage)
        commits = self.store.home / "commits" / definition.id  # the undo logs of its writes' commits (see finish_unfinished_commits)
        jobs = WriteJobs(commits, storage)  # made here: the model below the write path holds it without naming its type
        on_first_use = self.events is EventFollowing.FIRST_USE
        followed = self.events is not EventFollowing.OFF
        if self.shared is None:
            caches = CatalogCaches.from_config(config.caches, budget=self.cache_budget)
            built = ExternalCatalog(definition, config, client, caches, write_jobs=jobs,
                                    follow_on_first_use=on_first_use, followed=followed, storage=storage)
        else:
            versions = SharedCatalogVersions(self.shared.journal, definition.id)
            # Caught up before anything is loaded: whatever is logged from now on counts as news here.
            versions.catch_up()
            lease = EventLease(self.shared.leases, versions, self.shared.replica) if config.events.enabled else None
            built = ExternalCatalog(definition, config, client, CatalogCaches.from_config(config.caches, versions, self.cache_budget),
                                    follow_lease=lease, write_jobs=jobs, follow_on_first_use=on_first_use,
                                    followed=followed, storage=storage)
        _finish_unfinished_commits(built)
        return built

    def _client_for(self, definition: CatalogDefinition, config: CatalogConfig,
                    storage: StorageResolver) -> MetastoreCalls:
        """A metastore client, or for a filesystem catalog the folders' answers with the home's promotions."""
        if config.filesystem is not None:
            return FilesystemClient(definition.name, config.filesystem, PromotionStore(self.store.home, definition.id),
                                    storage=storage)
        return self._client_factory(config.client)

    def live_catalogs(self) -> list[ExternalCatalog]:
        """The catalogs built so far in this process (for figures such as a service's metrics)."""
        with self._lock:
            return list(self._live.values())

    def refresh(self, name: str, database: str | None = None, table: str | None = None) -> ExternalCatalog:
        """REFRESH a catalog, one of its databases or one table, here and in every process on this home."""
        catalog = self.catalog(name)
        _refresh(catalog, database, table)
        self.announcer(catalog)(database, table)
        return catalog

    def announcer(self, catalog: ExternalCatalog) -> Callable[[str | None, str | None], None]:
        """What tells this home's other processes that ``catalog``'s database or table changed (a DDL context's
        ``announce``): one line of the refresh log, which their next lookup applies."""
        def announce(database: str | None, table: str | None) -> None:
            self.refresh_log.announce(RefreshRecord(catalog.definition.id, database and database.lower(),
                                                    table and table.lower()))

        return announce

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
        _check_files(CatalogConfig.from_properties(properties), name)
        stored = self.store.create(
            CatalogDefinition(name=name.lower(), properties=properties, comment=comment), if_not_exists=if_not_exists
        )
        if stored is not None:
            self._follow_if_serving(stored)
        return stored

    def alter_properties(
        self, name: str, changes: Mapping[str, str], *, expected_version: int | None = None
    ) -> CatalogDefinition:
        """Merge ``changes`` into the catalog's properties, validating the result before storing it.

        ``expected_version``: store only if the catalog is still at that version (else VersionMismatchError).
        """

        def merge(current: CatalogDefinition) -> CatalogDefinition:
            merged = {**current.properties, **changes}
            _check_files(CatalogConfig.from_properties(merged), name)
            return CatalogDefinition(
                name=current.name, properties=merged, comment=current.comment, id=current.id,
                version=current.version, created_at=current.created_at,
            )

        stored = self.store.update(name, merge, expected_version=expected_version)
        self._forget(stored.name)
        self._log_definition_change(stored)
        self._follow_if_serving(stored)
        return stored

    def rename(self, name: str, new_name: str, *, expected_version: int | None = None) -> CatalogDefinition:
        stored = self.store.rename(name, new_name, expected_version=expected_version)
        self._forget(name.lower())
        self._log_definition_change(stored)
        self._follow_if_serving(stored)
        return stored

    def drop(self, name: str, *, if_exists: bool = False, expected_version: int | None = None) -> CatalogDefinition | None:
        dropped = self.store.drop(name, if_exists=if_exists, expected_version=expected_version)
        self._forget(name.lower())
        if dropped is not None:
            PromotionStore(self.store.home, dropped.id).remove()  # a filesystem catalog's promotions go with it
        return dropped

    def _follow_if_serving(self, stored: CatalogDefinition) -> None:
        """A serving process follows a catalog with event following on from the moment it is defined or
        altered: a subscriber of its change feed sees what is made behind the service without anyone
        listing first. Building makes no metastore call (the follower thread begins under its lease)."""
        if self.events is EventFollowing.SERVE and CatalogConfig.from_properties(stored.properties).events.enabled:
            self.catalog(stored.name)

    def _log_definition_change(self, stored: CatalogDefinition) -> None:
        """With a shared log, an altered catalog is itself a change: every replica's followers drop everything
        they hold of it (their caches were built under the old definition) and keep counting from there."""
        if self.shared is not None:
            self.shared.journal.append(stored.id, [(ChangeKind.INVALIDATED, CATALOG, ChangeSource.DDL)])

    def close(self) -> None:
        with self._lock:
            live, self._live = list(self._live.values()), {}
            self._checked = {}
        for catalog in live:
            catalog.close()

    def _forget(self, name: str) -> None:
        with self._lock:
            live = self._live.pop(name, None)
            self._checked.pop(name, None)
        if live is not None:
            live.close()


_REPLICA_WRITER = "replica:"  # the refresh log's writer prefix of service replicas


def _finish_unfinished_commits(catalog: ExternalCatalog) -> None:
    """Before a catalog serves anything, the writes a killed process left half-committed are undone (or
    finished): every table reads as before or as after them. A metastore out of reach now leaves them to
    the table's next write or RECOVER."""
    try:
        catalog.write_jobs.finish_unfinished(catalog)
    except Exception as error:  # noqa: BLE001 - logged; tried again before the table's next write
        _log.warning("unfinished commits of catalog %s were not finished yet: %s", catalog.name, error)


def _refresh(catalog: ExternalCatalog, database: str | None, table: str | None) -> None:
    if database is None:
        catalog.refresh()
    elif table is None:
        catalog.refresh_database(database)
    else:
        catalog.database(database).refresh_table(table)


def _check_files(config: CatalogConfig, name: str) -> None:
    """What the properties name must exist (a keytab; a filesystem catalog's root, reached with the
    catalog's own storage settings), checked at CREATE and ALTER only."""
    config.check_files()
    if config.filesystem is not None:
        storage = StorageResolver(config.storage, name=name)
        try:
            config.filesystem.check_root(storage)
        finally:
            storage.close()  # a Java helper it started for a Hadoop root stops with it
