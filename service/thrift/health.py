"""Which federated catalogs' metastores answer, what each last listed, and the probes that find a lost one back.

Calls that merge the catalogs (``get_all_databases``, ``get_databases``, ``get_table_meta``) ask every catalog.
Asking one whose metastore is down costs the whole listing wait, because a stopped metastore fails a call only
after its retries and a hung one holds it for its socket timeout; paid on every call, that was 1.00 s each
time. So a catalog is *lost* once a listing of it fails or does not answer within the listing wait, or once its
pool has seen every URI fail (:meth:`HmsClientPool.unreachable`), and while it is lost:

- calls merging catalogs answer at once: its databases are its cached names, else the names it last listed,
  and its tables what its caches hold;
- a call addressed to it alone is answered from its caches; what they lack is asked of its metastore with the
  catalog's own retries, as ever, for the catalog's *grace* (:func:`grace_seconds`: the window those retries ride
  out), so a metastore restarting within it fails no call. Past the grace, while its pool sees every URI fail,
  what the caches lack fails at once with a MetaException naming the catalog (a listing that was merely slow
  does not fail the calls addressed to it; the probe settles which it is within one probe timeout);
- one probe thread per lost catalog, not one per client, asks its metastore on a connection of its own within
  ``PROBE_TIMEOUT_SECONDS``, every ``PROBE_INTERVAL_SECONDS``; when one answers, the catalog is listed again (so
  its fresh names are cached) and is found. A catalog without a metastore (a folder catalog) is probed by
  listing it.

Losing and finding a catalog are logged once each, and :meth:`CatalogHealth.report` shows the lost ones in
``GET /v1/health``.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future
from concurrent.futures import wait as wait_for
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from hms_catalog.cache.catalog_caches import DATABASE_NAMES_KEY
from hms_catalog.client.metastore import MetastoreClient
from hms_catalog.client.pool import HmsClientPool
from hms_catalog.errors import HmsCatalogError, MetastoreUnavailableError, NotFoundError
from hms_catalog.manager import CatalogManager
from hms_catalog.model import ExternalCatalog

__all__ = ["GRACE_CEILING_SECONDS", "GRACE_FLOOR_SECONDS", "PROBE_INTERVAL_SECONDS", "PROBE_TIMEOUT_SECONDS",
           "CatalogHealth", "Outage", "grace_seconds"]

_log = logging.getLogger(__name__)

# A probe is one connection and one get_all_databases: cheap enough to repeat twice a second, so a metastore that
# is back is found within half a second of answering.
PROBE_INTERVAL_SECONDS = 0.5
# Long enough for a metastore that just started (its first call warms it up), short of the client's socket
# timeout (60 s by default), which is what a probe must not wait out on a hung metastore.
PROBE_TIMEOUT_SECONDS = 2.0
# How often a merging call waiting for listings looks at the pools, to stop waiting for one that refuses.
_TICK_SECONDS = 0.01
# Bounds of a catalog's grace (grace_seconds). The floor: a metastore that only broke a connection (which marks its
# URI failed) is found back by a probe within one probe timeout, before any call is refused, even for a catalog
# with no retries. The ceiling: a restart (a JVM starting, its schema checked) takes seconds to tens of seconds;
# down for longer than a minute, a metastore is out, not restarting, and its callers are told at once rather than
# each held for its retries (each holding one of the endpoint's threads).
GRACE_FLOOR_SECONDS = PROBE_TIMEOUT_SECONDS
GRACE_CEILING_SECONDS = 60.0


def grace_seconds(pool: HmsClientPool) -> float:
    """How long after its catalog is found down the calls its caches cannot answer are still made, with the
    catalog's own retries, before they fail at once: the window those retries ride out
    (:meth:`HmsClientPool.retry_window`: ``hive.metastore.failure.retries`` waits, doubling from
    ``hive.metastore.client.connect.retry.delay``; 7 s with the defaults), within the floor and the ceiling.
    A metastore back within it fails none of them, as it failed none before the endpoint knew it down."""
    return min(max(pool.retry_window(), GRACE_FLOOR_SECONDS), GRACE_CEILING_SECONDS)


@dataclass(frozen=True)
class Outage:
    """Why a catalog is lost, and since when (wall clock for people, monotonic for durations)."""

    catalog: str
    reason: str
    since: float
    began: float

    def seconds(self) -> float:
        return time.monotonic() - self.began


def _pool_of(catalog: ExternalCatalog) -> HmsClientPool | None:
    client = catalog.client
    return client.pool if isinstance(client, MetastoreClient) else None


class CatalogHealth:
    """The endpoint's view of its catalogs' metastores: one per endpoint, shared by its connections."""

    def __init__(self, manager: CatalogManager, *, probe_interval: float = PROBE_INTERVAL_SECONDS,
                 probe_timeout: float = PROBE_TIMEOUT_SECONDS) -> None:
        self.manager = manager
        self.probe_interval = probe_interval
        self.probe_timeout = probe_timeout
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[str, ...]] = {}
        self._lost: dict[str, Outage] = {}
        self._probes: dict[str, threading.Thread] = {}
        self._stopping = threading.Event()

    # What is known ------------------------------------------------------------------------------------

    def last_seen(self, catalog: str) -> tuple[str, ...]:
        """The database names ``catalog`` last listed through the endpoint (none when it never has)."""
        with self._lock:
            return self._seen.get(catalog, ())

    def remembered(self, catalog: str) -> tuple[str, ...]:
        """What answers for a lost catalog's databases: its cached names while its cache holds them (another front
        end may have listed it), else the names it last listed through the endpoint. Peeked, never loaded: a load
        would queue behind a hung one in flight."""
        try:
            cached = self.manager.catalog(catalog).caches.names.peek(DATABASE_NAMES_KEY)
        except HmsCatalogError:
            cached = None
        return tuple(cached) if cached is not None else self.last_seen(catalog)

    def lost(self, catalog: str, live: ExternalCatalog | None = None) -> Outage | None:
        """Why ``catalog`` is lost, or None. A catalog whose pool has seen every URI fail is lost from then on,
        whoever's call failed; ``live``: the catalog, when the caller has it already."""
        with self._lock:
            outage = self._lost.get(catalog)
        if outage is not None:
            return outage
        pool = _pool_of(live) if live is not None else self._pool(catalog)  # None: no metastore, or dropped meanwhile
        reason = pool.unreachable() if pool is not None else None
        return self.lose(catalog, reason) if reason is not None else None

    def refusal(self, catalog: str, live: ExternalCatalog) -> str | None:
        """What a call addressed to ``catalog`` alone fails with at once, or None when it is to be made: only while
        its pool has seen every URI fail (a metastore that was merely slow to list still serves its calls), and
        once it has been lost for longer than its grace (within it, a call rides out a restart on its retries)."""
        pool = _pool_of(live)
        reasons = pool.unreachable() if pool is not None else None
        if pool is None or reasons is None:
            return None
        outage = self.lose(catalog, reasons)
        grace = grace_seconds(pool)
        return self.message(outage, reasons, grace) if outage.seconds() >= grace else None

    def report(self) -> dict[str, Any]:
        """The lost catalogs, for ``GET /v1/health``: since when and why, how many databases answer for each, its
        grace, and whether calls addressed to it alone fail at once (its pool has seen every URI fail, for longer
        than its grace) or are still made."""
        with self._lock:
            lost = list(self._lost.values())
            seen = {outage.catalog: len(self._seen.get(outage.catalog, ())) for outage in lost}
        report = {}
        for outage in lost:
            pool = self._pool(outage.catalog)
            reasons = pool.unreachable() if pool is not None else None  # as the probes last found it
            grace = grace_seconds(pool) if pool is not None else None
            report[outage.catalog] = {
                "since": datetime.fromtimestamp(outage.since, UTC).isoformat(timespec="seconds"),
                "seconds": round(outage.seconds(), 1), "reason": reasons or outage.reason,
                "last_seen_databases": seen[outage.catalog], "grace_seconds": grace,
                "calls_fail_fast": reasons is not None and grace is not None and outage.seconds() >= grace}
        return report

    # What calls learn ---------------------------------------------------------------------------------

    def seen(self, catalog: str, databases: tuple[str, ...], *, probed: bool = False) -> None:
        """A listing of ``catalog`` answered: its names are the last seen, and it is found if it was lost.
        ``probed``: by its probe, which ends with it (in one step, so a loss just after starts a new probe)."""
        with self._lock:
            self._seen[catalog] = tuple(databases)
            outage = self._lost.pop(catalog, None)
            if probed:
                self._probes.pop(catalog, None)
        if outage is not None:
            _log.warning("catalog %s: its metastore answers again, after %.1f s; listed afresh (%d databases)",
                         catalog, outage.seconds(), len(databases))

    def lose(self, catalog: str, reason: str) -> Outage:
        """``catalog``'s metastore does not answer: lost from now on (logged once), and probed until it does."""
        probe: threading.Thread | None = None
        with self._lock:
            outage = self._lost.get(catalog)
            new = outage is None
            if outage is None:
                outage = self._lost[catalog] = Outage(catalog, reason, time.time(), time.monotonic())
            known = len(self._seen.get(catalog, ()))
            if catalog not in self._probes and not self._stopping.is_set():
                probe = threading.Thread(target=self._probe, args=(catalog,), name=f"thrift-probe-{catalog}", daemon=True)
                self._probes[catalog] = probe
        if probe is not None:
            probe.start()
        if new:
            pool = self._pool(catalog)
            grace = f"{grace_seconds(pool):g} s" if pool is not None else "none"
            _log.warning("catalog %s: its metastore is unreachable (%s); calls merging catalogs answer with the %d "
                         "databases it last listed, calls to it alone from its caches (what they lack still asked, with "
                         "its retries, for its grace: %s), and it is probed every %g s",
                         catalog, reason, known, grace, self.probe_interval)
        return outage

    def awaited(self, listings: dict[str, Future[tuple[str, ...]]], wait: float) -> dict[str, tuple[str, ...]]:
        """The names each listing answered within ``wait`` seconds, all waited for together (they were asked at
        once). A catalog whose listing fails, or does not answer in time, is lost; one whose pool sees every URI
        fail is lost at once, without waiting out its retries (a stopped metastore refuses in a millisecond)."""
        deadline = time.monotonic() + wait
        pending = dict(listings)
        pools = {catalog: self._pool(catalog) for catalog in pending}
        answers: dict[str, tuple[str, ...]] = {}
        while pending:
            remaining = deadline - time.monotonic()
            if remaining > 0:
                wait_for(pending.values(), timeout=min(remaining, _TICK_SECONDS), return_when=FIRST_COMPLETED)
            for catalog, listing in list(pending.items()):
                if listing.done():
                    del pending[catalog]
                    try:
                        answers[catalog] = listing.result()
                    except HmsCatalogError as error:
                        self.lose(catalog, str(error))
                elif (pool := pools[catalog]) is not None and (reasons := pool.unreachable()) is not None:
                    del pending[catalog]
                    self.lose(catalog, reasons)
                elif remaining <= 0:
                    del pending[catalog]
                    self.lose(catalog, f"no answer to get_all_databases within {wait:g} s")
        return answers

    def reaching(self, catalog: str, live: ExternalCatalog, *, merging: bool = False) -> _Reaching:
        """A block of a call reading ``catalog`` (``live``). While it is lost, calls that merge catalogs read its
        caches alone; a call addressed to it alone does too once its pool has seen every URI fail and its grace has
        run out (:meth:`refusal`). A metastore failure in the block names the catalog, and loses it when every URI
        failed."""
        return _Reaching(self, catalog, live, merging)

    def stop(self) -> None:
        """No more probes; those running end at their next look (each is a daemon thread)."""
        self._stopping.set()

    def message(self, outage: Outage, reasons: str, grace: float | None = None) -> str:
        """What a call refused while ``outage`` lasts is told: whose metastore, how it failed, for how long (past
        which ``grace``, for a call addressed to it alone), and until when."""
        past = f", past its grace of {grace:g} s" if grace is not None else ""
        return (f"catalog '{outage.catalog}': its metastore is unreachable ({reasons}; for {outage.seconds():.1f} s{past}): "
                f"answered from the catalog's caches alone until a probe finds it back (every {self.probe_interval:g} s)")

    # The probe ----------------------------------------------------------------------------------------

    def _pool(self, catalog: str) -> HmsClientPool | None:
        try:
            return _pool_of(self.manager.catalog(catalog))
        except HmsCatalogError:
            return None

    def _probe(self, catalog: str) -> None:
        while not self._stopping.is_set():
            with self._lock:
                if catalog not in self._lost:  # found by a listing meanwhile
                    self._probes.pop(catalog, None)
                    return
            try:
                live = self.manager.catalog(catalog)
                pool = _pool_of(live)
                if pool is not None:
                    pool.probe(self.probe_timeout)
                databases = live.database_names()  # asked afresh when nothing is cached, so the next answer has them
            except NotFoundError:  # dropped while lost: nothing to find back
                with self._lock:
                    self._lost.pop(catalog, None)
                    self._probes.pop(catalog, None)
                return
            except HmsCatalogError as error:
                _log.debug("catalog %s: probe failed: %s", catalog, error)
                self._stopping.wait(self.probe_interval)
                continue
            except Exception:  # noqa: BLE001 - a probe's bug must not end the probing, nor reach the thread's top
                _log.exception("catalog %s: probe failed", catalog)
                self._stopping.wait(self.probe_interval)
                continue
            self.seen(catalog, databases, probed=True)
            return
        with self._lock:
            self._probes.pop(catalog, None)


class _Reaching:
    """The block of :meth:`CatalogHealth.reaching`: a class, as :class:`hms_catalog.client._refusing.Refusing` is,
    so a forwarded call's NoSuchObjectException passes through it untouched."""

    def __init__(self, health: CatalogHealth, catalog: str, live: ExternalCatalog, merging: bool) -> None:
        self._health = health
        self._catalog = catalog
        self._live = live
        self._merging = merging
        self._refusing: AbstractContextManager[None] | None = None

    def __enter__(self) -> ExternalCatalog:
        health, pool = self._health, _pool_of(self._live)
        if pool is None:
            return self._live
        refused = health.refusal(self._catalog, self._live)
        if refused is None and self._merging:
            outage = health.lost(self._catalog, self._live)
            refused = health.message(outage, outage.reason) if outage is not None else None
        if refused is not None:
            self._refusing = pool.refusing(refused)
            self._refusing.__enter__()
        return self._live

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if self._refusing is not None:
            self._refusing.__exit__(kind, error, trace)
        if not isinstance(error, MetastoreUnavailableError):
            return
        pool = _pool_of(self._live)
        reasons = pool.unreachable() if pool is not None else None
        if reasons is not None:
            self._health.lose(self._catalog, reasons)
        if not str(error).startswith(f"catalog '{self._catalog}'"):  # ours, not the metastore's: say whose it is
            raise MetastoreUnavailableError(f"catalog '{self._catalog}': {error}") from error
