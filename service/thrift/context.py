"""What every connection's handler shares: the catalogs, their federated names, their health, the forwarder, the audit."""

from __future__ import annotations

import contextvars
import copy
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hms_catalog.cache.catalog_caches import DATABASE_NAMES_KEY
from hms_catalog.errors import HmsCatalogError, NotFoundError
from hms_catalog.manager import CatalogManager
from hms_catalog.model import ExternalCatalog
from service.access import Access, AccessPolicy, Principal
from service.actor import Actor, FrontEnd
from service.audit import AuditLog
from service.gate import ChangeGate
from service.thrift.arguments import rename_databases
from service.thrift.forwarder import Forwarder
from service.thrift.health import CatalogHealth
from service.thrift.names import FederatedNames, Route

__all__ = ["Caller", "EndpointContext", "LISTING_WAIT_SECONDS"]

# How long a call merging catalogs (get_all_databases) waits for a catalog's database names before answering
# without them: one stopped metastore must not stall the others' clients (Waggle Dance's issue #73). Only the
# call that finds a catalog down waits (a hung one: a stopped one refuses at once), and the catalog is then
# lost (:mod:`.health`): later calls do not ask it. Not shorter, because a metastore merely slow to list must
# not be taken for a hung one; that answer would lack its databases.
LISTING_WAIT_SECONDS = 1.0
_T = TypeVar("_T")


@dataclass
class Caller:
    """One client connection: its address, the Kerberos principal its SASL handshake proved (None on an endpoint
    without SASL) and the user it said it is (``set_ugi``, which proves nothing)."""

    address: str
    principal: str | None = None
    user: str = ""
    groups: list[str] = field(default_factory=list)
    meta_conf: dict[str, str] = field(default_factory=dict)  # setMetaConf's values, this connection's own


@dataclass
class EndpointContext:
    manager: CatalogManager
    names: FederatedNames
    forwarder: Forwarder
    audit: AuditLog
    listings: ThreadPoolExecutor
    health: CatalogHealth
    listing_wait: float = LISTING_WAIT_SECONDS
    # The grants of Kerberos principals (an endpoint with SASL); None: the endpoint authenticates nobody, and
    # every client reads every catalog and changes those whose 'thrift.access' grants writes.
    principals: AccessPolicy | None = None
    started: float = field(default_factory=time.time)
    _listing: dict[str, Future[tuple[str, ...]]] = field(default_factory=dict)
    _listing_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.gate = ChangeGate(self.manager, self.audit)

    def actor(self, caller: Caller) -> Actor:
        """The connection's actor. A Kerberos principal carries the grant of the tokens file's entry listing it,
        and one no entry lists gets nothing (no catalog to read or change). On an endpoint without SASL the
        client is who it claims, and may do what ``thrift.access`` (the gate's ceiling) allows."""
        if caller.principal is not None:
            grant = self._granted(caller.principal) or Principal(caller.principal, Access.READ, (), kind="principal")
        else:
            grant = Principal(f"thrift:{caller.user or 'anonymous'}", Access.WRITE, kind="client")
        return Actor(grant, FrontEnd.THRIFT, caller.address, caller.user or None)

    def may_read(self, caller: Caller, catalog: str) -> bool:
        """:meth:`actor`'s read decision, without making the actor: every read call asks it."""
        if caller.principal is None:
            return True  # without SASL, every client reads every catalog
        grant = self._granted(caller.principal)
        return grant is not None and grant.may_read(catalog)

    def _granted(self, principal: str) -> Principal | None:
        return self.principals.principal(principal) if self.principals is not None else None

    def readable_route(self, caller: Caller, database: str | None, catalog: str | None = None) -> Route:
        """The route of a client's database name. A catalog the connection's actor may not read is not there for
        it: its databases are NoSuchObject, as they are absent from its listings."""
        route = self.names.route(database, catalog)
        if not self.may_read(caller, route.catalog):
            raise NotFoundError("database", database or "''")
        return route

    def catalog(self, route: Route) -> ExternalCatalog:
        return self.manager.catalog(route.catalog)

    def reaching(self, route: Route, *, merging: bool = False, live: ExternalCatalog | None = None,
                 ) -> AbstractContextManager[ExternalCatalog]:
        """The route's catalog (``live``, when the caller looked it up already), for a block that reads it: from its
        caches alone while it is lost (see :meth:`CatalogHealth.reaching`)."""
        return self.health.reaching(route.catalog, live if live is not None else self.catalog(route), merging=merging)

    def database_listing(self, catalog: str) -> Future[tuple[str, ...]]:
        """The catalog's database names, being fetched on the listing pool: the listing in flight if there is
        one (a hung metastore holds one worker, not one per client asking), else a new one. What it answers,
        even after the caller stopped waiting, is the catalog's last-seen names. Names the catalog's cache holds
        answer at once, without the pool: a hand-off to a worker thread and back cost a warm get_all_databases
        three times the metastore's own answer."""
        cached = self._cached_names(catalog)
        if cached is not None:
            answered: Future[tuple[str, ...]] = Future()
            answered.set_result(cached)
            return answered
        with self._listing_lock:
            running = self._listing.get(catalog)
            if running is not None and not running.done():
                return running
            # In the caller's context: the call's statement (its store reads) holds for the listing too.
            started = self.listings.submit(contextvars.copy_context().run, lambda: self.manager.catalog(catalog).database_names())
            self._listing[catalog] = started
        started.add_done_callback(lambda listing: self._listed(catalog, listing))
        return started

    def _cached_names(self, catalog: str) -> tuple[str, ...] | None:
        try:
            live = self.manager.catalog(catalog)
        except HmsCatalogError:
            return None  # the pool's listing raises it, as ever
        return live.caches.names.peek(DATABASE_NAMES_KEY, used=True)

    def _listed(self, catalog: str, listing: Future[tuple[str, ...]]) -> None:
        if not listing.cancelled() and listing.exception() is None:
            self.health.seen(catalog, listing.result())

    def outward(self, route: Route, value: _T) -> _T:
        """``value`` (a cached struct, shared) in the client's names: itself for the primary, else a copy."""
        if self.names.is_primary(route.catalog) or value is None:
            return value
        renamed: Any = rename_databases(copy.deepcopy(value), lambda database: self.names.external(route.catalog, database))
        return renamed
