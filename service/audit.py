"""``HOME/audit.log``: one JSON line per change asked of the service, refused and failed ones included.

Who (the token's name, never its secret), when, on which catalog, what (the statement, or a statement-like
line for a REST call, secrets masked), the catalog's version before and after, and how it ended. Lines
are appended with one ``write`` each on a file opened ``O_APPEND``, under a lock, so concurrent requests
(and a second service on the same home) never interleave within a line; the file is made 0600 as the
home's other files are. It is opened for each line, so a rotated log is picked up at once.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hms_catalog._private import private_directory, private_file
from hms_catalog.errors import HmsCatalogError
from hms_catalog.masking import mask_text
from service.access import ForbiddenError

if TYPE_CHECKING:
    from hms_catalog.state import AuditTrail

__all__ = ["AUDIT_FILE", "AuditEntry", "AuditLog"]

AUDIT_FILE = "audit.log"

_log = logging.getLogger(__name__)

Version = Callable[[], int | None]


class AuditEntry:
    """The line being written for one change. ``settle`` records the outcome of a change that is done although
    the request fails after it (a sync_ddl wait that timed out), with fields saying why."""

    def __init__(self) -> None:
        self.extra: dict[str, Any] = {}
        self.settled: str | None = None

    def settle(self, outcome: str, **extra: Any) -> None:
        self.settled = outcome
        self.extra.update(extra)


class AuditLog:
    """``path``: this replica's audit file; ``trail``: the store's audit trail, which every replica shares."""

    def __init__(self, path: Path, trail: AuditTrail | None = None) -> None:
        self.path = path
        self.trail = trail
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def recording(self, token: str, catalog: str | None, statement: str, version: Version) -> Iterator[AuditEntry]:
        """Write one line for the change the block makes: ``refused`` for a ForbiddenError, ``error: ...`` for
        any other failure (re-raised), else ``ok``. ``version`` reads the catalog's version (None: none)."""
        before = _read(version)
        entry = AuditEntry()
        outcome = "ok"
        try:
            yield entry
        except ForbiddenError:
            outcome = "refused"
            raise
        except BaseException as error:
            outcome = entry.settled or (f"error: {error}" if str(error) else f"error: {type(error).__name__}")
            raise
        finally:
            self.append({"time": _now(), "token": token, "catalog": catalog, "statement": statement,
                         "version_before": before, "version_after": before if outcome == "refused" else _read(version),
                         "outcome": outcome, **entry.extra})

    def append(self, fields: dict[str, Any]) -> None:
        """One line; the statement and the outcome masked, the whole line written by one call."""
        masked = {key: mask_text(value) if isinstance(value, str) and key in ("statement", "outcome", "sync_ddl") else value
                  for key, value in fields.items()}
        line = (json.dumps(masked, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            private_directory(self.path.parent)
            descriptor = private_file(self.path)
            try:
                written = os.write(descriptor, line)
                while written < len(line):  # a short write (a full disk, a signal): the rest, still under the lock
                    written += os.write(descriptor, line[written:])
            finally:
                os.close(descriptor)
        if self.trail is not None:
            try:
                self.trail.append(masked)
            except HmsCatalogError as error:  # the file has the line; the store gets the next ones once it is back
                _log.warning("the audit trail in the catalog store missed a line: %s", error)


def _read(version: Version) -> int | None:
    try:
        return version()
    except Exception:  # noqa: BLE001 - the audit line is written whatever the catalog's state (dropped, unreachable)
        return None


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
