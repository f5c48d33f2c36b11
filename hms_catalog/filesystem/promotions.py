"""Promoted tables of one filesystem catalog: each table's layout, kept so later sessions do not detect again.

As Dremio keeps a promoted dataset's format settings. One JSON file per catalog in the home
(``HOME/filesystem/<catalog id>.json``, owner-only), rewritten whole under a lock and replaced
atomically, and read again on each lookup, so every process on the home sees a promotion, a SET FORMAT or
a REFRESH METADATA made by another at once. A dropped and re-created catalog gets a new id, hence starts
with no promotions.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hms_catalog._private import private_directory, private_file
from hms_catalog.errors import ConfigurationError
from hms_catalog.filesystem.detect import TableLayout

__all__ = ["PromotionStore"]


class PromotionStore:
    """Layouts by ``(database, table)`` (lower-cased) for the catalog whose id names the file."""

    def __init__(self, home: Path, catalog_id: str) -> None:
        self.path = home / "filesystem" / f"{catalog_id}.json"
        # The file as last parsed, by its identity: a catalog of many tables (SHOW TABLE STATUS asks each)
        # parses it once per change, not once per table.
        self._parsed: tuple[tuple[int, int, int], dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def get(self, database: str, table: str) -> TableLayout | None:
        found = self._read().get(_key(database, table))
        return TableLayout.from_json(found) if found is not None else None

    def tables(self, database: str) -> list[str]:
        prefix = database.lower() + "/"
        return sorted(key[len(prefix):] for key in self._read() if key.startswith(prefix))

    def put(self, database: str, table: str, layout: TableLayout) -> None:
        self._change(lambda entries: entries.__setitem__(_key(database, table), layout.to_json()))

    def remove(self) -> None:
        """Forget every promotion (the catalog was dropped)."""
        for path in (self.path, self.path.with_suffix(".lock")):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _read(self) -> dict[str, Any]:
        try:
            status = self.path.stat()
        except FileNotFoundError:
            return {}
        identity = (status.st_ino, status.st_mtime_ns, status.st_size)
        with self._lock:
            if self._parsed is not None and self._parsed[0] == identity:
                return dict(self._parsed[1])
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            entries = dict(data.get("tables") or {})
        except FileNotFoundError:
            return {}
        except (ValueError, TypeError, AttributeError) as error:
            raise ConfigurationError(
                f"the promoted tables file {self.path} is damaged ({error}); remove it to detect every table again"
            ) from None
        with self._lock:
            self._parsed = (identity, entries)
        return dict(entries)

    def _change(self, change: Callable[[dict[str, Any]], object]) -> None:
        with self._locked():
            entries = self._read()
            change(entries)
            temporary = self.path.with_suffix(".tmp")
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
            descriptor = private_file(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump({"tables": entries}, handle, indent=1, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        private_directory(self.path.parent)
        descriptor = private_file(self.path.with_suffix(".lock"), os.O_WRONLY | os.O_CREAT)
        with os.fdopen(descriptor, "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _key(database: str, table: str) -> str:
    return f"{database.lower()}/{table.lower()}"
