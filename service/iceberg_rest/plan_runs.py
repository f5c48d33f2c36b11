"""Plans running on this replica: started on a small pool of the service's, waited for up to a bound by the
request that started them, then polled, and cancellable.

A run's work receives a ``check`` it calls between manifest entries and tasks: once the run is cancelled,
``check`` raises :class:`PlanCancelled`, so a cancel stops the work instead of letting it finish unread. The
runs are kept by plan id, a bounded number, least recent out; a cancelled one is kept (as cancelled) so that
polling it on this replica says so. Nothing here is shared between replicas: one that never saw a plan
plans it itself (its id carries the request, :mod:`.plan_ids`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import CancelledError, Executor, Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

from service.defaults import PLAN_WAIT_SECONDS
from service.iceberg_rest.plan_ids import PlanKey
from service.iceberg_rest.scans import Planned

__all__ = ["PLAN_WAIT_SECONDS", "PlanCancelled", "PlanRun", "PlanRuns"]


class PlanCancelled(Exception):
    """Raised inside a cancelled run's work, to stop it."""


@dataclass
class PlanRun:
    """One plan's work on this replica (None: cancelled before any started here)."""

    future: Future[Planned] | None
    cancelled: threading.Event = field(default_factory=threading.Event)

    def check(self) -> None:
        if self.cancelled.is_set():
            raise PlanCancelled

    @property
    def failed(self) -> bool:
        return (self.future is not None and self.future.done() and not self.future.cancelled()
                and self.future.exception() is not None)

    def outcome(self, wait: float | None) -> Planned | None:
        """The plan, waiting up to ``wait`` seconds (None: until it is done); None while it runs. Raises
        PlanCancelled once cancelled, and the work's own error if it failed."""
        if self.cancelled.is_set() or self.future is None:
            raise PlanCancelled
        try:
            return self.future.result(timeout=None if wait is None else max(wait, 0.0))
        except FutureTimeout:
            return None
        except CancelledError:
            raise PlanCancelled from None


class PlanRuns:
    """This replica's runs by plan id, started on ``pool``."""

    def __init__(self, pool: Executor, size: int = 64) -> None:
        self._pool = pool
        self._size = size
        self._runs: OrderedDict[str, PlanRun] = OrderedDict()
        self._lock = threading.Lock()

    def find(self, key: PlanKey) -> PlanRun | None:
        with self._lock:
            return self._runs.get(key.plan_id)

    def start(self, key: PlanKey, work: Callable[[Callable[[], None]], Planned]) -> PlanRun:
        """The run of ``key``: the one running or done here, or a new one (none yet, or the last one was cancelled
        or failed: a new request plans again)."""
        plan_id = key.plan_id
        with self._lock:
            found = self._runs.get(plan_id)
            if found is not None and found.future is not None and not found.cancelled.is_set() and not found.failed:
                self._runs.move_to_end(plan_id)
                return found
            run = PlanRun(None)
            run.future = self._pool.submit(work, run.check)
            self._keep(plan_id, run)
            return run

    def cancel(self, key: PlanKey) -> None:
        """Stop the run of ``key`` (if any is here) and remember it as cancelled."""
        plan_id = key.plan_id
        with self._lock:
            run = self._runs.get(plan_id) or PlanRun(None)
            run.cancelled.set()
            if run.future is not None:
                run.future.cancel()  # not started yet: it never will; started: its next check stops it
            self._keep(plan_id, run)

    def _keep(self, plan_id: str, run: PlanRun) -> None:
        self._runs[plan_id] = run
        self._runs.move_to_end(plan_id)
        while len(self._runs) > self._size:
            self._runs.popitem(last=False)
