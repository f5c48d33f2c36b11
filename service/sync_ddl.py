"""SYNC_DDL: a DDL answers only once every live follower of the change feed has acknowledged its version.

A follower is a client polling ``GET /v1/catalogs/{c}/changes?since=N&follower=<id>``; asking for the
changes after N says it has applied every change up to N (dropped what it cached of them), as an
impalad's catalog topic version tells catalogd what it has seen. The service keeps, per catalog, the
followers with a poll open or one answered in the last :data:`LIVE_SECONDS`, and their positions.

What it guarantees: when the DDL answers, every follower that was live has applied the DDL's version,
so its next lookup of what changed sees the change (a Spark driver reloads the table). What it does not:
a Spark job already planned keeps its plan; clients that do not follow the feed (a driver with following
off, another service) or stopped polling more than :data:`LIVE_SECONDS` ago are not waited for; with no
live follower it answers at once, saying so; a timeout does not undo the DDL, which is done.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from hms_catalog.cache.versions import CatalogVersions
from hms_catalog.errors import ConfigurationError, ErrorKind, HmsCatalogError

__all__ = ["DEFAULT_TIMEOUT", "LIVE_SECONDS", "SYNC_DDL_TIMEOUT", "FollowerRegistry", "SyncDdlTimeoutError", "SyncWaiter",
           "sync_timeout"]

SYNC_DDL_TIMEOUT = "sync_ddl_timeout"  # a session option (SET sync_ddl_timeout = 10), seconds
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 3600.0
LIVE_SECONDS = 30.0
_SLICE = 0.5  # a wait looks again this often: followers drop out by age, and a stopping server ends it


class SyncDdlTimeoutError(HmsCatalogError):
    """Not every live follower acknowledged a DDL's version in time; the DDL itself is done."""

    error_kind = ErrorKind.TIMED_OUT

    def __init__(self, message: str, lagging: Mapping[str, int]) -> None:
        super().__init__(message)
        self.lagging = dict(lagging)


@dataclass
class _Follower:
    position: int
    seen: float
    polls: int = 0


class FollowerRegistry:
    """The followers of each catalog's change feed and their acknowledged positions (thread-safe)."""

    def __init__(self, *, live_seconds: float = LIVE_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self._live_seconds = live_seconds
        self._clock = clock
        self._changed = threading.Condition()
        self._followers: dict[str, dict[str, _Follower]] = {}

    @contextlib.contextmanager
    def polling(self, catalog: str, follower: str, position: int) -> Iterator[None]:
        """A poll from ``position``: acknowledges it, and keeps the follower live while the poll is open."""
        with self._changed:
            state = self._acknowledge(catalog, follower, position)
            state.polls += 1
        try:
            yield
        finally:
            with self._changed:
                state.polls -= 1
                state.seen = self._clock()

    def acknowledge(self, catalog: str, follower: str, position: int) -> None:
        with self._changed:
            self._acknowledge(catalog, follower, position)

    def live(self, catalog: str) -> dict[str, int]:
        """The live followers of ``catalog`` and their positions."""
        with self._changed:
            return self._live(catalog)

    def wait(self, catalog: str, version: int, timeout: float, stopping: threading.Event | None = None) -> list[str]:
        """Return (the followers waited for) once every live follower of ``catalog`` is at ``version`` or
        beyond; SyncDdlTimeoutError naming the laggards and their positions after ``timeout`` seconds."""
        deadline = self._clock() + timeout
        with self._changed:
            while True:
                live = self._live(catalog)
                lagging = {name: position for name, position in live.items() if position < version}
                if not lagging:
                    return sorted(live)
                remaining = deadline - self._clock()
                if remaining <= 0 or (stopping is not None and stopping.is_set()):
                    shown = ", ".join(f"'{name}' at version {position}" for name, position in sorted(lagging.items()))
                    why = "the service is stopping" if remaining > 0 else f"within {timeout:g} s"
                    raise SyncDdlTimeoutError(
                        f"sync_ddl: the change is done (catalog '{catalog}' at version {version}), but not every follower "
                        f"of the change feed acknowledged it {why}: {len(lagging)} of {len(live)} lag ({shown}). "
                        f"Followers that stop polling drop out after {self._live_seconds:g} s", lagging)
                self._changed.wait(min(remaining, _SLICE))

    def _acknowledge(self, catalog: str, follower: str, position: int) -> _Follower:
        now = self._clock()
        followers = self._followers.setdefault(catalog.lower(), {})
        state = followers.get(follower)
        if state is None:
            state = followers[follower] = _Follower(position, now)
        state.position, state.seen = position, now
        self._forget_gone(catalog.lower(), now)
        self._changed.notify_all()
        return state

    def _live(self, catalog: str) -> dict[str, int]:
        now = self._clock()
        self._forget_gone(catalog.lower(), now)
        return {name: state.position for name, state in self._followers.get(catalog.lower(), {}).items()}

    def _forget_gone(self, catalog: str, now: float) -> None:
        followers = self._followers.get(catalog, {})
        for name in [name for name, state in followers.items() if not state.polls and now - state.seen > self._live_seconds]:
            del followers[name]


def sync_timeout(options: Mapping[str, str]) -> float:
    """``sync_ddl_timeout`` of a session's options, in seconds (default :data:`DEFAULT_TIMEOUT`)."""
    text = options.get(SYNC_DDL_TIMEOUT)
    if text is None:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= MAX_TIMEOUT:
        raise ConfigurationError(f"{SYNC_DDL_TIMEOUT} must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, got {text!r}")
    return seconds


class SyncWaiter:
    """The waiter a statement session's DDLs call with ``SET sync_ddl = true`` (``session.extras['sync_ddl_waiter']``).

    It waits for the newest change the catalog's change log holds at or below the DDL's version: that is
    what a follower acknowledges by polling past it (a version counter also moves for loads, which wake no
    follower). ``note`` says what the last wait found, for the answer.
    """

    def __init__(self, registry: FollowerRegistry, versions: Callable[[str], CatalogVersions], options: Mapping[str, str],
                 stopping: threading.Event | None = None) -> None:
        self._registry = registry
        self._versions = versions
        self._options = options
        self._stopping = stopping
        self.note = ""

    def __call__(self, catalog: str, version: int) -> str:
        return self.wait_for(catalog, version)

    def wait_for(self, catalog: str, version: int, since: int | None = None) -> str:
        """Wait for the followers of ``catalog`` to see ``version``; with ``since``, only if a change was logged
        after it (a DDL that changed nothing has nothing to wait for)."""
        logged = [change.version for change in self._versions(catalog).changes(since or 0).changes if change.version <= version]
        if not logged and since is not None:
            self.note = "sync_ddl: nothing changed, nothing to wait for"
            return self.note
        target = max(logged, default=version)
        followers = self._registry.wait(catalog, target, sync_timeout(self._options), self._stopping)
        if followers:
            self.note = f"sync_ddl: seen by every live follower of the change feed ({len(followers)})"
        else:
            self.note = "sync_ddl: no live follower of the change feed, nothing to wait for"
        return self.note
