"""Which replica follows which catalog's metastore events: one lease row per catalog in the store.

A replica claims a free or expired lease, renews it while it lives (every third of its time to live) and
records every event it applies together with the lease's number (the fencing token) and the event's id,
in one transaction that also checks the lease is still its own (:mod:`hms_catalog.state.journal`). A
replica that stops (killed, cut off from the store) stops renewing; after ``ttl`` seconds another one
takes the lease over with the next number and resumes after the last event id stored. A delayed write of
the old holder then finds the number changed and is refused, so no event is applied twice or skipped.

Every replica that keeps the catalog fresh stores a position before its first read of it, whether or not
it holds the lease (:meth:`LeaseTable.anchor`; a position stored earlier is kept). A holder always resumes
after the stored position and never from "now", so an event between a replica's first read and the moment
a holder begins (a thread held back, a lease taken over) is applied, not skipped.

Expiry is judged by each replica's wall clock: replicas must keep their clocks in step (NTP) to well
within the time to live.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from hms_catalog.cache.shared_versions import SharedCatalogVersions
from hms_catalog.errors import StoreUnavailableError
from hms_catalog.state.database import StoreDatabase
from hms_catalog.state.journal import EventPosition
from hms_catalog.state.schema import LEASES

__all__ = ["Lease", "LeaseTable", "EventLease", "LEASE_SECONDS_DEFAULT"]

LEASE_SECONDS_DEFAULT = 10.0


@dataclass(frozen=True)
class Lease:
    catalog_id: str
    holder: str
    fence: int
    last_event_id: int | None


class LeaseTable:
    """The event leases in ``database``; ``ttl``: how long a lease lasts without renewal."""

    def __init__(self, database: StoreDatabase, *, ttl: float = LEASE_SECONDS_DEFAULT,
                 clock: Callable[[], float] = time.time) -> None:
        self.database = database
        self.ttl = ttl
        self._clock = clock

    def claim(self, catalog_id: str, holder: str) -> Lease | None:
        """Renew ``holder``'s lease, or take a free or expired one (with the next number); None: another holds it."""
        now = self._clock()
        try:
            with self.database.writing() as connection:
                row = connection.execute(select(LEASES).where(LEASES.c.catalog_id == catalog_id)).mappings().first()
                if row is None:
                    connection.execute(insert(LEASES).values(catalog_id=catalog_id, holder=holder, fence=1,
                                                             expires_at=now + self.ttl, last_event_id=None))
                    return Lease(catalog_id, holder, 1, None)
                fence = int(row["fence"])
                if row["holder"] != holder:
                    if row["expires_at"] > now:
                        return None
                    fence += 1  # taken over: the old holder's late writes must be refused
                done = connection.execute(
                    update(LEASES).where(LEASES.c.catalog_id == catalog_id, LEASES.c.fence == row["fence"],
                                         LEASES.c.holder == row["holder"])
                    .values(holder=holder, fence=fence, expires_at=now + self.ttl)
                )
                if done.rowcount != 1:
                    return None
                last = row["last_event_id"]
                return Lease(catalog_id, holder, fence, None if last is None else int(last))
        except IntegrityError:  # another replica made the row first
            return None

    def position(self, catalog_id: str) -> int | None:
        """The last event id stored for ``catalog_id`` (by a holder, or by :meth:`anchor`), if any."""
        with self.database.reading() as connection:
            found = connection.execute(select(LEASES.c.last_event_id).where(LEASES.c.catalog_id == catalog_id)).first()
        return None if found is None or found[0] is None else int(found[0])

    def anchor(self, catalog_id: str, event_id: int) -> int:
        """Store ``event_id`` as where following ``catalog_id`` starts, unless a position is stored already;
        returns the position stored now.

        A position stored earlier is never moved: it is no later than ``event_id`` (event ids only grow), so
        whoever holds the lease next applies everything after it. A row made here is free (no holder, number
        0), so the first replica to claim it takes it at once.
        """
        for attempt in (1, 2):
            try:
                with self.database.writing() as connection:
                    row = connection.execute(select(LEASES).where(LEASES.c.catalog_id == catalog_id)).mappings().first()
                    if row is None:
                        connection.execute(insert(LEASES).values(catalog_id=catalog_id, holder="", fence=0, expires_at=0.0,
                                                                 last_event_id=event_id))
                        return event_id
                    if row["last_event_id"] is not None:
                        return int(row["last_event_id"])
                    connection.execute(update(LEASES).where(LEASES.c.catalog_id == catalog_id, LEASES.c.last_event_id.is_(None))
                                       .values(last_event_id=event_id))
                    return event_id
            except IntegrityError:  # another replica made the row first: read what it stored
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def release(self, lease: Lease) -> None:
        """Give the lease up at once (a clean stop), so another replica need not wait for it to expire."""
        with self.database.writing() as connection:
            connection.execute(update(LEASES).where(LEASES.c.catalog_id == lease.catalog_id, LEASES.c.holder == lease.holder,
                                                    LEASES.c.fence == lease.fence).values(expires_at=0.0))

    def forget(self, catalog_id: str) -> None:
        with self.database.writing() as connection:
            connection.execute(delete(LEASES).where(LEASES.c.catalog_id == catalog_id))

    def holders(self) -> dict[str, dict[str, Any]]:
        """Every lease: who holds it, under which number, whether it is live, and the last event stored."""
        now = self._clock()
        with self.database.reading() as connection:
            rows = connection.execute(select(LEASES)).mappings().all()
        return {row["catalog_id"]: {"holder": row["holder"], "lease": int(row["fence"]), "live": row["expires_at"] > now,
                                    "last_event_id": row["last_event_id"]} for row in rows}


class EventLease:
    """One catalog's lease as its event follower uses it (:class:`hms_catalog.events.follower.FollowLease`)."""

    def __init__(self, table: LeaseTable, versions: SharedCatalogVersions, holder: str) -> None:
        self.table = table
        self.versions = versions
        self.holder = holder
        self.renew_interval = table.ttl / 3
        self._lease: Lease | None = None
        self._lock = threading.Lock()

    @property
    def lease(self) -> Lease | None:
        return self._lease

    def hold(self) -> bool:
        """Claim or renew; whether this replica follows now. A store that cannot be reached: not held."""
        with self._lock:
            try:
                self._lease = self.table.claim(self.versions.catalog_id, self.holder)
            except StoreUnavailableError:
                self._lease = None
            return self._lease is not None

    def resume_at(self) -> int | None:
        lease = self._lease
        return None if lease is None else lease.last_event_id

    def anchor(self, current: Callable[[], int]) -> int:
        """Make sure a position is stored, no later than now: the one stored already (no metastore call), or
        ``current()`` (the metastore's newest event id), read only when none is."""
        stored = self.table.position(self.versions.catalog_id)
        if stored is not None:
            return stored
        return self.table.anchor(self.versions.catalog_id, current())

    @contextlib.contextmanager
    def applying(self, event_id: int) -> Iterator[None]:
        lease = self._lease
        if lease is None:
            raise StoreUnavailableError("no event lease is held")
        with self.versions.fenced(EventPosition(lease.holder, lease.fence, event_id)):
            yield

    def advance(self, event_id: int) -> None:
        with self.applying(event_id):
            pass

    def release(self) -> None:
        with self._lock:
            lease, self._lease = self._lease, None
        if lease is not None:
            with contextlib.suppress(StoreUnavailableError):
                self.table.release(lease)
