"""Following the metastore's notification log on a background thread, one follower per catalog.

The follower reads the current event id when the catalog is first used, before anything is loaded, so
every change made after any load is seen. It then asks for the events after the last one it applied,
``batch_size`` at a time, every ``polling_interval`` seconds (at once again while batches come back
full). Readers never wait for it: applying an event only drops cache entries.

Each fetched batch is applied in one pass (:meth:`EventApplier.apply_batch`): one invalidation pass grouped
by table, then one change-log entry set for the whole batch, and with a lease one store transaction that
also stores the batch's last event id; nothing is asked of the metastore or the store per event.

Nothing is ever skipped silently. Events missing from the log (cleaned up on the server after their time to
live: the next event's id is past ours + 1, nothing newer than ours is left while the newest id is past ours,
or the metastore answers that they were cleaned up), a metastore whose log went backwards, a follower more
than ``max_pending`` events behind (``hive.hms_events_max_pending``) and a batch that fails halfway all fall
back to invalidating the whole catalog, which is always correct, only slower: one warning naming the catalog
and the gap, one ``invalidated catalog`` entry (source ``event``) on the change feed, and following goes on
from the newest event (a gap: from the first event still there).

Replicas of a service sharing one store follow each catalog from one replica at a time: given a
:class:`FollowLease`, the follower asks before each poll whether it holds the lease, resumes where the
last holder stopped, and stores each event's changes together with the event's id under the lease.

The starting position is fixed no later than the first read the follower keeps fresh (:meth:`EventFollower.anchor`),
never when the following thread happens to begin: with a lease that can be much later (the thread waits for
the lease, or for its turn on a busy machine), and an event in between would lie before the start and after
the names already cached, unseen until their time to live. So each replica stores a position in the lease's
row before its first read (one already stored is kept, being older), and a holder only ever resumes from the
stored position. A first read that cannot fix the position (the metastore or the store away) goes on, and
what it cached is dropped once the position is fixed.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Protocol

from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import HmsCatalogError, LeaseLostError, MetastoreError
from hms_catalog.events.apply import EventApplier
from hms_catalog.events.messages import decode_event
from hms_catalog.properties import EVENTS_MAX_PENDING, METASTORE_CATALOG_DEFAULT, EventsConfig

__all__ = ["EventFollower", "FollowerStatus", "FollowLease", "LOG_CHECK_SECONDS"]

_log = logging.getLogger(__name__)

# How often an idle follower also asks for the newest event id, to notice a log that went backwards.
LOG_CHECK_SECONDS = 60.0
_STOP_TIMEOUT = 5.0
# How a metastore (or a proxy in front of one) says the events asked for were cleaned up: Hive's own clients
# raise "Notification events are missing in the meta store." for what a follower meets as a gap.
_CLEANED_UP = re.compile(r"events are missing|cleaned up", re.IGNORECASE)


class FollowLease(Protocol):
    """The right to follow one catalog's events among replicas (:class:`hms_catalog.state.leases.EventLease`)."""

    renew_interval: float

    def hold(self) -> bool:
        """Claim or renew the lease; whether this process may follow now."""

    def resume_at(self) -> int | None:
        """The last event id stored under the lease (by this holder or an earlier one), if any."""

    def anchor(self, current: Callable[[], int]) -> int:
        """Make sure a starting position no later than now is stored (``current()`` if none is); return it."""

    def applying(self, event_id: int) -> AbstractContextManager[None]:
        """Store what is recorded inside the block together with ``event_id``, or nothing (LeaseLostError)."""

    def advance(self, event_id: int) -> None:
        """Store ``event_id`` as applied (events that changed nothing here)."""

    def release(self) -> None:
        """Give the lease up (a clean stop)."""


@dataclass(frozen=True)
class FollowerStatus:
    """What the follower has done so far (counters since it started)."""

    running: bool = False
    last_event_id: int | None = None
    polls: int = 0
    events: int = 0
    applied: int = 0
    superseded: int = 0
    ignored: int = 0
    full_invalidations: int = 0
    failures: int = 0
    last_error: str | None = None
    last_poll_at: float | None = None
    batches: int = 0  # batches applied, each in one pass
    skipped: int = 0  # events never applied: gone from the log, or jumped over by a follower too far behind
    last_batch_events: int = 0
    last_batch_seconds: float = 0.0


class EventFollower:
    """Polls ``client`` for notification events and applies them through ``applier``.

    ``invalidate_all(reason)`` is called whenever events may have been missed.
    """

    def __init__(
        self,
        catalog: str,
        client: MetastoreCalls,
        applier: EventApplier,
        config: EventsConfig,
        invalidate_all: Callable[[str], None],
        *,
        clock: Callable[[], float] = time.monotonic,
        lease: FollowLease | None = None,
    ) -> None:
        self.catalog = catalog
        self.config = config
        self._client = client
        self._metastore_catalog = client.metastore_catalog
        self._applier = applier
        self._invalidate_all = invalidate_all
        self._clock = clock
        self.lease = lease
        self._poll_lock = threading.Lock()
        self._anchor_lock = threading.Lock()
        self._anchored = False
        self._unanchored_reads = False  # a read went ahead before the position was fixed: drop what it cached
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._last: int | None = None
        self._last_log_check = clock()
        self._status = FollowerStatus()

    @property
    def last_event_id(self) -> int | None:
        return self._last

    def status(self) -> FollowerStatus:
        return replace(self._status, running=self._thread is not None and self._thread.is_alive(),
                       last_event_id=self._last)

    @property
    def anchored(self) -> bool:
        return self._anchored

    def anchor(self) -> None:
        """Fix where following starts, no later than now: called before the first read this follower keeps
        fresh. Without a lease that is :meth:`begin`; with one, a position stored in the lease's row (the one
        stored already, or the metastore's newest event id), which whoever holds the lease resumes from."""
        if self._anchored:
            return
        if self.lease is None:
            self.begin()
            self._anchored = True
            return
        with self._anchor_lock:
            if self._anchored:
                return
            self.lease.anchor(self._client.get_current_notification_event_id)
            self._anchored = True
            dropped, self._unanchored_reads = self._unanchored_reads, False
        if dropped:
            self._missed("the catalog was read before the follower's starting position could be fixed")

    def anchor_for_read(self) -> None:
        """:meth:`anchor` before a first read; when it cannot be done now, the read still goes on (a store
        or metastore that is away must not stop reads that need only the other) and what it caches is
        dropped once the position is fixed (by the following thread, which keeps trying)."""
        if self._anchored:
            return
        if self.lease is None:
            self.anchor()
            return
        with self._anchor_lock:
            try:
                self.lease.anchor(self._client.get_current_notification_event_id)
            except HmsCatalogError as error:
                self._unanchored_reads = True
                _log.warning("catalog %s: the events' starting position could not be stored (%s); what is read now "
                             "is dropped once it is", self.catalog, error)
                return
            self._anchored = True

    def begin(self) -> None:
        """Fix the event id after which :meth:`poll` applies changes: where the lease's earlier holders
        stopped (or the position anchored before the first read), or without a lease the current one."""
        with self._poll_lock:
            if self._last is None:
                resumed = self.lease.resume_at() if self.lease is not None else None
                self._last = resumed if resumed is not None else self._client.get_current_notification_event_id()
                if self.lease is not None and resumed is None:
                    # Stored at once: a holder stopped before it applies an event must not leave the next one
                    # to start from a newer id, skipping the events in between.
                    self.lease.advance(self._last)
                    # No position was stored (the row was forgotten since it was anchored): reads made since
                    # may predate the id just read, so what they cached goes.
                    self._missed(f"no stored event position to resume from; following from event {self._last}")
                self._last_log_check = self._clock()

    def start(self) -> None:
        """:meth:`begin`, then follow on a daemon thread (it never keeps the process alive). With a lease,
        the thread begins once it holds the lease, where the last holder stopped."""
        if self.lease is None:
            self.begin()
        with self._poll_lock:
            if self._thread is not None:
                return
            thread = threading.Thread(target=self._run, name=f"hms-events-{self.catalog}", daemon=True)
            thread.start()
            self._thread = thread  # only once started: a stop() racing this start must not join an unstarted thread

    def stop(self) -> None:
        """Stop following; returns once the thread is gone (or after a few seconds, if a call hangs)."""
        self._stopping.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(_STOP_TIMEOUT)
        if self.lease is not None:
            self.lease.release()

    def poll(self) -> int:
        """Fetch and apply every event available now, a batch at a time; returns how many were applied."""
        self.begin()
        with self._poll_lock:
            applied = 0
            while not self._stopping.is_set():
                last = self._last
                assert last is not None, "begin() sets it and nothing unsets it"
                try:
                    events = self._client.get_next_notification(last, self.config.batch_size)
                except MetastoreError as error:
                    current = self._client.get_current_notification_event_id() if _CLEANED_UP.search(str(error)) else last
                    if current <= last:  # another failure, or nothing newer to go on from: asked again next time
                        raise
                    self._skip(f"the metastore answers that events after {last} were cleaned up ({error})", current)
                    continue
                self._count(polls=1)
                self._set(last_poll_at=time.time())
                if not events:
                    self._check_log()
                    return applied
                full = len(events) >= self.config.batch_size
                if full and self._too_far_behind(last):
                    continue
                first = events[0].eventId
                gap = f"events {last + 1}..{first - 1} are no longer in the metastore's log" if first > last + 1 else None
                applied += self._apply_batch(events, gap, skipped=max(0, first - last - 1))
                self._last = events[-1].eventId
                if not full:
                    return applied
            return applied

    def _apply_batch(self, events: list[ttypes.NotificationEvent], gap: str | None = None, skipped: int = 0) -> int:
        """One pass over one fetched batch, stored (with a lease) as one transaction with its last event id.
        ``gap``: events before the batch are gone from the log, so the whole catalog is dropped first."""
        started = time.perf_counter()
        try:
            decoded = [decode_event(event) for event in events if _ours(event, self._metastore_catalog)]
            with self._applying(events[-1].eventId):
                if gap is not None:
                    self._missed(gap, skipped=skipped)
                outcome = self._applier.apply_batch(decoded)
        except LeaseLostError:
            raise  # another replica follows now, from the last event stored: nothing here is stale for it
        except Exception as error:  # noqa: BLE001 - whatever went wrong, the catalog must not stay stale
            self._missed(f"applying events {events[0].eventId}..{events[-1].eventId} failed: {error}")
            return 0
        self._count(events=len(events), batches=1, applied=outcome.applied, superseded=outcome.superseded,
                    ignored=outcome.ignored + len(events) - len(decoded))
        self._set(last_batch_events=len(events), last_batch_seconds=round(time.perf_counter() - started, 6))
        return outcome.applied

    def _too_far_behind(self, last: int) -> bool:
        """After a full batch: whether more than ``max_pending`` events wait (then all is dropped and following
        goes on from the newest event: reloading what is read is quicker than applying that many)."""
        bound = self.config.max_pending
        if bound <= 0:
            return False
        current = self._client.get_current_notification_event_id()
        if current - last <= bound:
            return False
        self._skip(f"{current - last} events behind (events {last + 1}..{current}), more than "
                   f"{EVENTS_MAX_PENDING}={bound}", current)
        return True

    def _skip(self, reason: str, current: int | None = None) -> None:
        """Drop everything and go on from the metastore's newest event (with a lease, the drop is logged in the
        same transaction that stores the new position)."""
        last = self._last or 0
        current = self._client.get_current_notification_event_id() if current is None else current
        with self._applying(current):
            self._missed(f"{reason}; following from event {current}", skipped=max(0, current - last))
        self._last = current

    def _applying(self, event_id: int) -> AbstractContextManager[None]:
        return self.lease.applying(event_id) if self.lease is not None else contextlib.nullcontext()

    def _check_log(self) -> None:
        """Now and then, while idle: a current id below ours means the log went backwards (a new metastore
        database); one above ours with nothing after ours to read, that the events in between were cleaned up
        with no newer one to show the gap. Either way, follow the log from where it is."""
        if self._clock() - self._last_log_check < LOG_CHECK_SECONDS:
            return
        self._last_log_check = self._clock()
        current = self._client.get_current_notification_event_id()
        last = self._last
        if last is None:
            return
        if current < last:
            self._missed(f"the metastore's newest event is {current}, older than {last} already seen")
            self._last = current
        elif current > last and not self._client.get_next_notification(last, 1):
            self._skip(f"events {last + 1}..{current} are no longer in the metastore's log", current)

    def _missed(self, reason: str, *, skipped: int = 0) -> None:
        _log.warning("catalog %s: %s; invalidating the whole catalog", self.catalog, reason)
        self._count(full_invalidations=1, skipped=skipped)
        self._set(last_error=reason)
        self._invalidate_all(reason)

    def _count(self, **increments: int) -> None:
        status = self._status
        self._status = replace(status, **{key: getattr(status, key) + value for key, value in increments.items()})

    def _set(self, **values: object) -> None:
        self._status = replace(self._status, **values)  # type: ignore[arg-type]

    def _run(self) -> None:
        if self.lease is None:
            while not self._stopping.wait(self.config.polling_interval):
                self._poll_logged()
            return
        # With a lease: renew it often enough that it never lapses while this replica lives, and poll at
        # the configured interval only while it is held; a replica that lost it starts over when it wins it.
        interval = min(self.config.polling_interval, self.lease.renew_interval)
        last_poll, held = float("-inf"), False
        while not self._stopping.wait(0.0 if not held and last_poll == float("-inf") else interval):
            if not self._anchored:
                try:
                    self.anchor()  # before claiming: a new lease then resumes from here, never from "now"
                except Exception as error:  # noqa: BLE001 - a metastore or store that is away is asked again
                    self._count(failures=1)
                    self._set(last_error=str(error))
                    _log.warning("catalog %s: storing the events' starting position failed: %s", self.catalog, error)
                    continue
            if not self.lease.hold():
                held = False
                continue
            if not held:  # newly won: resume after the last event its earlier holders stored
                with self._poll_lock:
                    self._last = None
                held, last_poll = True, float("-inf")
            if self._clock() - last_poll >= self.config.polling_interval - 1e-3:
                last_poll = self._clock()
                self._poll_logged()

    def _poll_logged(self) -> None:
        try:
            self.poll()
        except LeaseLostError as error:
            self._last = None
            _log.info("catalog %s: %s", self.catalog, error)
        except Exception as error:  # noqa: BLE001 - a metastore that is away is asked again next time
            self._count(failures=1)
            self._set(last_error=str(error))
            _log.warning("catalog %s: reading metastore events failed: %s", self.catalog, error)


def _ours(event: object, metastore_catalog: str | None) -> bool:
    """Events of the metastore catalog this catalog reads (Hive 3+ can hold several; unset, ``hive``).

    Events without a catalog come from metastores older than Hive 3, which have only one.
    """
    name = getattr(event, "catName", None)
    return name in (None, "", metastore_catalog or METASTORE_CATALOG_DEFAULT)
