"""REFRESH reaches every process that shares a home, not only the one that ran it.

A process holds one live catalog per definition (:mod:`hms_catalog.registry`), but the catalogs of one
home are often live in several processes at once: a REPL and a notebook, or a PySpark driver and the
Python worker in which Spark plans every ``hms`` data source read. A REFRESH run in one of them must
reach the others, or they keep planning from the old file listing for a whole TTL.

So each REFRESH is announced as one line appended to ``<home>/refreshes.log``, and each manager reads
the lines others appended since it last looked whenever it hands out a catalog (one ``stat`` when
nothing changed, beside the store read it does anyway). The log is bounded: past ``max_bytes`` it is
replaced by an empty file, and a reader that finds its file replaced or shortened cannot know what it
missed, so it forgets everything (:data:`LOST_TRACK`). Appends are single ``write`` calls of one short
line, which POSIX keeps whole on a local file opened for appending.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from hms_catalog._private import FILE_MODE, private_directory, private_file

__all__ = ["RefreshLog", "RefreshRecord", "LOST_TRACK", "LOG_FILE"]

LOG_FILE = "refreshes.log"
MAX_BYTES_DEFAULT = 1 << 20


@dataclass(frozen=True)
class RefreshRecord:
    """One REFRESH: of a whole catalog (no database), a database (no table) or a table."""

    catalog_id: str
    database: str | None = None
    table: str | None = None
    writer: str = ""


LOST_TRACK: None = None  # what poll() answers when records may have been missed


class RefreshLog:
    """The refreshes announced under one home; ``writer`` tells this reader's own records from others'."""

    def __init__(self, home: str | os.PathLike[str], *, writer: str | None = None, max_bytes: int = MAX_BYTES_DEFAULT) -> None:
        self.home = Path(home).expanduser()
        self.path = self.home / LOG_FILE
        self.writer = writer or uuid.uuid4().hex
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._inode: int | None = None
        self._offset = 0
        self._started = False

    def announce(self, record: RefreshRecord) -> None:
        """Append ``record`` (as written by this reader) for every other reader of the home."""
        line = json.dumps(
            {"catalog": record.catalog_id, "database": record.database, "table": record.table, "writer": self.writer},
            separators=(",", ":"),
        ).encode() + b"\n"
        private_directory(self.home)
        while True:
            descriptor = private_file(self.path)
            try:
                os.write(descriptor, line)
                written = os.fstat(descriptor)
            finally:
                os.close(descriptor)
            # Another writer may have replaced the file between our open and our write: the line then
            # went to a file nobody reads. Write it again into the file that is there now.
            with contextlib.suppress(FileNotFoundError):
                if os.stat(self.path).st_ino == written.st_ino:
                    break
        if written.st_size > self.max_bytes:
            self._replace_with_empty()

    def poll(self) -> list[RefreshRecord] | None:
        """Records others appended since the last poll; :data:`LOST_TRACK` when some may be lost.

        The first poll only marks where this reader starts: what came before it is already reflected
        in a manager that has just been made.
        """
        with self._lock:
            try:
                status = os.stat(self.path)
            except FileNotFoundError:
                lost = self._inode is not None
                self._inode, self._offset, self._started = None, 0, True
                return LOST_TRACK if lost else []
            if not self._started:
                self._inode, self._offset, self._started = status.st_ino, status.st_size, True
                return []
            if self._inode is not None and (status.st_ino != self._inode or status.st_size < self._offset):
                self._inode, self._offset = status.st_ino, status.st_size
                return LOST_TRACK
            self._inode = status.st_ino
            if status.st_size == self._offset:
                return []
            with open(self.path, "rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read(status.st_size - self._offset)
            complete = chunk[: chunk.rfind(b"\n") + 1]  # a line still being written is read next time
            self._offset += len(complete)
            return [record for record in map(self._parse, complete.splitlines()) if record is not None]

    def _parse(self, line: bytes) -> RefreshRecord | None:
        try:
            data = json.loads(line)
            record = RefreshRecord(str(data["catalog"]), data.get("database"), data.get("table"), str(data["writer"]))
        except (ValueError, KeyError, TypeError):
            # A line this version cannot read: treat it as a refresh of everything rather than ignore it.
            return RefreshRecord(catalog_id="*", writer="?")
        return None if record.writer == self.writer else record

    def _replace_with_empty(self) -> None:
        descriptor, temporary = tempfile.mkstemp(prefix=".refreshes-", suffix=".tmp", dir=self.home)
        try:
            os.fchmod(descriptor, FILE_MODE)
            os.close(descriptor)
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
