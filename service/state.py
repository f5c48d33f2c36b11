"""What the routes of one service share, handed to each router when the app is built (no globals).

One :class:`CatalogManager` (so one live ExternalCatalog per catalog, with its pools, caches and per-table
DDL locks, serves every request), the companions, the request metrics, the table views, the followers
of the change feed, the audit log and the change gate, and the engine SELECT started (a SparkSession kept
for later requests).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from anyio import CapacityLimiter

from hms_catalog.execution import Session
from hms_catalog.execution.ddl_commands import SYNC_DDL_WAITER
from hms_catalog.manager import CatalogManager, EventFollowing
from hms_catalog.model import ExternalCatalog
from hms_catalog.state import StoreFollower
from planner.spark.sql import end_spark_jvm
from service.access import Access, Principal
from service.actor import Actor, FrontEnd
from service.audit import AuditLog
from service.companions import RunningCompanion
from service.defaults import PLAN_WAIT_SECONDS
from service.gate import ChangeGate
from service.metrics import RequestMetrics
from service.sessions import ServiceSession
from service.sync_ddl import FollowerRegistry, SyncWaiter
from service.views import TableViews

__all__ = ["ServiceState"]

_LONG_POLLS = 256  # long polls wait on a pool of their own, so they cannot starve the other requests
_PLANS_AT_ONCE = 2  # Iceberg scan plans made at once (each reads manifests: I/O, and CPU on the GIL)


class ServiceState:
    def __init__(self, manager: CatalogManager, *, audit: AuditLog, stopping: threading.Event | None = None,
                 companions: Mapping[str, RunningCompanion] | None = None, plan_wait: float = PLAN_WAIT_SECONDS) -> None:
        self.manager = manager
        self.audit = audit
        self.gate = ChangeGate(manager, audit)
        self.stopping = stopping if stopping is not None else threading.Event()
        self.companions = dict(companions or {})
        self.requests = RequestMetrics()
        self.views = TableViews()
        self.followers = FollowerRegistry()
        self.long_polls = CapacityLimiter(_LONG_POLLS)
        # Iceberg scan plans run here, a few at once, so that a request waits for its plan only up to ``plan_wait``
        # seconds (then answers ``submitted``) and a flood of plans cannot take every request's thread.
        self.plan_pool = ThreadPoolExecutor(_PLANS_AT_ONCE, thread_name_prefix="iceberg-plans")
        self.plan_wait = plan_wait
        self.started = time.time()
        # A serving process follows every catalog with event following on from its definition (and from this
        # start) on, not from a client's first listing: a subscriber of a change feed alone sees every change.
        manager.events = EventFollowing.SERVE
        # A replica on a shared store: other replicas' (and CLIs') changes reach this one's catalogs through the
        # store; its first round, and each after a definition moved anywhere, follows the defined catalogs.
        self.store_follower = None if manager.shared is None else StoreFollower(
            manager.shared.journal, manager.live_catalogs, on_definitions=manager.follow_defined)
        self._engine: dict[str, Any] = {}  # SELECT's engine (a SparkSession), shared by every request, closed at shutdown
        self._engine_lock = threading.Lock()

    def session(self, who: Principal | Actor, catalog: str | None = None, database: str | None = None) -> ServiceSession:
        """A session for one request, acting for ``who`` (a bare principal: a REST request's). What statements
        started in earlier sessions (SELECT's Spark) is shared through each extra's ``for_session``, so names
        resolve by this request's position; the sync_ddl waiter is the session's own, reading its options."""
        actor = who if isinstance(who, Actor) else Actor(who, FrontEnd.REST)
        opened = ServiceSession(self.manager, actor, self.gate)
        opened.set_position(catalog, database)
        for companion in self.companions.values():
            opened.engine_options.update(companion.engine_options())
        with self._engine_lock:
            shared = dict(self._engine)
        opened.extras = {key: value.for_session(opened) if hasattr(value, "for_session") else value
                         for key, value in shared.items()}
        opened.extras[SYNC_DDL_WAITER] = SyncWaiter(self.followers, lambda name: self.manager.catalog(name).versions,
                                                    opened.options, self.stopping)
        return opened

    def reading(self, who: Principal | Actor, name: str, what: str = "the request") -> ExternalCatalog:
        """The live catalog ``name``, which ``who`` may read (ForbiddenError, 403, otherwise)."""
        live = self.manager.catalog(name)
        who.check(Access.READ, live.name, what)
        return live

    def keep_engines(self, opened: Session) -> None:
        """Keep what a request's statements started (the first SELECT's Spark) for the requests after it."""
        with self._engine_lock:
            for key, value in opened.extras.items():
                if key != SYNC_DDL_WAITER:
                    self._engine.setdefault(key, value)

    def close(self) -> None:
        """Stop the SparkSession SELECT started, then the event followers and metastore connections."""
        self.stopping.set()
        self.plan_pool.shutdown(wait=False, cancel_futures=True)
        if self.store_follower is not None:
            self.store_follower.stop()
        engine_session = Session(self.manager)
        with self._engine_lock:
            engine_session.extras = dict(self._engine)
        try:
            engine_session.close()
            end_spark_jvm()  # what a stopped service started does not outlive it
        finally:
            self.manager.close()
