"""HDFS and any Hadoop filesystem without libhdfs: Hadoop's own Java client in a helper process.

pyarrow reaches HDFS only through libhdfs and a JVM loaded into this process, which no install step
provides. Instead one JVM per catalog runs Hadoop's client from the jars pyspark already ships, configured
by the catalog's Hadoop settings (``dfs.*`` with the HA keys, ``fs.*``, ``hadoop.*``, Kerberos from a keytab),
and answers list, stat, block-location, read and change requests sent as JSON lines. It starts on the
first call (about a second, paid once), stays up for every later listing, is shared by all threads, and is
started again once if it died.

    helper = HadoopHelper({"dfs.nameservices": "ns1", ...}, name="hive")
    files = helper.list("hdfs://ns1/wh/t", recursive=True)
"""

from __future__ import annotations

import base64
import builtins
import errno
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hms_catalog._secrets import MASK, is_secret_key
from hms_catalog.errors import HmsCatalogError, StorageError, StorageUnavailableError
from hms_catalog.masking import mask_text
from hms_catalog.storage.hadoop._jvm import command_line, compile_server
from hms_catalog.storage.hadoop._process import Answer, HelperProcess, ProcessGone

__all__ = ["HadoopHelper", "HadoopFile", "HadoopBlocks", "HadoopIdentity"]

START_TIMEOUT_DEFAULT = 120.0  # a Kerberos login against a slow KDC included
CALL_TIMEOUT_DEFAULT = 600.0  # Hadoop's own retries and failover decide sooner; this only bounds a hung process
THREADS_DEFAULT = 16
_READ_ONLY = frozenset({"whoami", "list", "stat", "blocks", "read"})  # safe to send again after a restart
_LOG_TAIL = 1500


@dataclass(frozen=True)
class HadoopFile:
    """A file or folder as Hadoop reports it; ``path`` is the absolute path within its filesystem (``/wh/t``)."""

    path: str
    type: str  # "file", "dir" or "other"
    size: int
    mtime_ms: int
    block_size: int

    @property
    def is_dir(self) -> bool:
        return self.type == "dir"


@dataclass(frozen=True)
class HadoopBlocks:
    """A file's blocks: where each starts, its length, and the hosts holding a replica."""

    size: int
    block_size: int
    offsets: tuple[int, ...]
    lengths: tuple[int, ...]
    hosts: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class HadoopIdentity:
    """Who the helper acts as: the logged-in user and how it logged in."""

    user: str
    short_user: str
    authentication: str  # "kerberos", "simple", ...
    kerberos: bool  # holds Kerberos credentials
    keytab: bool  # logged in from a keytab (and so logs in again when its ticket nears its end)
    hadoop_version: str
    ticket_end_ms: int  # when the login's ticket-granting ticket ends; 0 without Kerberos


class HadoopHelper:
    """Hadoop's FileSystem client for one catalog's settings, in a JVM shared by every thread of this process.

    ``settings``: the Hadoop keys as the catalog gives them. ``name``: the catalog's, named in errors.
    ``classpath``: jars of further Hadoop filesystems (``$HADOOP_CLASSPATH`` is added as well).
    ``starts`` counts the JVMs started. Calls raise FileNotFoundError, PermissionError, FileExistsError or
    OSError as Hadoop answers; a helper that cannot start (no java, a refused login, bad settings), or whose
    process died twice, raises StorageError naming the catalog, never a secret value.
    """

    def __init__(self, settings: Mapping[str, str], *, name: str = "", threads: int = THREADS_DEFAULT,
                 start_timeout: float = START_TIMEOUT_DEFAULT, call_timeout: float | None = CALL_TIMEOUT_DEFAULT,
                 classpath: Sequence[str] = (), java_options: Sequence[str] = (), cache_dir: Path | None = None) -> None:
        self._settings = {str(key): str(value) for key, value in settings.items()}
        self.name = name
        self._threads = threads
        self._start_timeout = start_timeout
        self._call_timeout = call_timeout
        self._classpath = tuple(classpath)
        self._java_options = tuple(java_options)
        self._cache_dir = cache_dir
        self._lock = threading.Lock()
        self._process: HelperProcess | None = None
        self._identity: HadoopIdentity | None = None
        self._closed = False
        self._log_dir: tempfile.TemporaryDirectory[str] | None = None
        self.starts = 0

    def __repr__(self) -> str:  # the settings may hold secrets: never shown
        return f"HadoopHelper(name={self.name!r}, settings={len(self._settings)} keys, starts={self.starts})"

    def __enter__(self) -> HadoopHelper:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        """The running JVM's process id (None before the first call or after close)."""
        process = self._process
        return process.pid if process is not None and process.alive else None

    def start(self) -> HadoopIdentity:
        """Start the JVM now (it otherwise starts on the first call); returns who it logged in as."""
        self._running()
        assert self._identity is not None
        return self._identity

    def whoami(self) -> HadoopIdentity:
        """Who the helper acts as now (asked of the running JVM)."""
        return _identity(self._call("whoami", ""))

    def list(self, uri: str, recursive: bool = False) -> builtins.list[HadoopFile]:
        """The entries under the folder ``uri`` (and below it with ``recursive``), folders included; a file's
        own entry when ``uri`` is a file. Hidden files are listed: leaving them out is the caller's business."""
        answer = self._call("list", uri, path=uri, recursive=recursive)
        return [_file(entry) for entry in answer["entries"]]

    def stat(self, uri: str) -> HadoopFile:
        return _file(self._call("stat", uri, path=uri)["entry"])

    def blocks(self, uris: Sequence[str]) -> builtins.list[HadoopBlocks | None]:
        """The blocks of many files in one request, in the order given; None for a file that does not exist."""
        if not uris:
            return []
        answer = self._call("blocks", uris[0], paths=list(uris))
        found: builtins.list[HadoopBlocks | None] = []
        for uri, item in zip(uris, answer["files"]):
            if "error" in item:
                if item["error"].get("kind") == "not_found":
                    found.append(None)
                    continue
                raise self._os_error(item["error"], uri)
            blocks = item["blocks"]
            found.append(HadoopBlocks(
                size=int(item["size"]), block_size=int(item["block_size"]),
                offsets=tuple(int(b["offset"]) for b in blocks), lengths=tuple(int(b["length"]) for b in blocks),
                hosts=tuple(tuple(str(h) for h in b["hosts"]) for b in blocks),
            ))
        return found

    def read(self, uri: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes of the file at ``offset`` (fewer only at its end)."""
        if length <= 0:
            return b""
        return base64.b64decode(self._call("read", uri, path=uri, offset=offset, length=length)["data"])

    def delete(self, uri: str, recursive: bool = False) -> bool:
        """Delete a file, or a folder (its contents too with ``recursive``; a non-empty one fails otherwise)."""
        return bool(self._call("delete", uri, path=uri, recursive=recursive)["done"])

    def rename(self, source: str, target: str) -> bool:
        """Hadoop's rename: False when it declined (the target's folder missing, the target existing, ...)."""
        return bool(self._call("rename", source, source=source, target=target)["done"])

    def mkdirs(self, uri: str) -> bool:
        """Create the folder and its parents (True also when it already exists)."""
        return bool(self._call("mkdirs", uri, path=uri)["done"])

    def close(self) -> None:
        """Stop the JVM; idempotent. A call after close raises StorageError."""
        with self._lock:
            self._closed = True
            process, self._process = self._process, None
            log_dir, self._log_dir = self._log_dir, None
        if process is not None:
            process.close()
        if log_dir is not None:
            log_dir.cleanup()

    # -- the process ------------------------------------------------------------------------------------

    def _call(self, op: str, uri: str, **arguments: Any) -> Answer:
        request = {"op": op, **arguments}
        for attempt in (1, 2):
            process = self._running()
            try:
                answer = process.call(request, self._call_timeout)
            except ProcessGone as gone:
                self._forget(process)
                if attempt == 2 or (gone.sent and op not in _READ_ONLY):
                    raise StorageUnavailableError(f"{self._catalog()}the Hadoop helper process died while asked to {op} {uri}"
                                       f" ({gone}){self._log_tail(process)}") from None
                continue
            if "error" in answer:
                raise self._os_error(answer["error"], uri)
            return answer
        raise AssertionError("unreachable")

    def _running(self) -> HelperProcess:
        with self._lock:
            if self._closed:
                raise StorageError(f"{self._catalog()}the Hadoop helper is closed")
            if self._process is not None and self._process.alive:
                return self._process
            if self._process is not None:
                self._process.close(wait=1.0)
            self._process = None
            self._process, self._identity = self._launch()
            return self._process

    def _forget(self, process: HelperProcess) -> None:
        with self._lock:
            if self._process is process:
                self._process = None
        process.close(wait=1.0)

    def _launch(self) -> tuple[HelperProcess, HadoopIdentity]:
        try:
            argv = command_line(compile_server(self._cache_dir), self._settings, threads=self._threads,
                                java_options=self._java_options, classpath=self._classpath)
        except HmsCatalogError as error:
            raise StorageError(f"{self._catalog()}cannot start the Hadoop filesystem helper: {error}") from error
        if self._log_dir is None:
            self._log_dir = tempfile.TemporaryDirectory(prefix="hms-hadoop-helper-")
        env = dict(os.environ)
        user = self._settings.get("hadoop.username", "").strip()
        if user and self._settings.get("hadoop.security.authentication", "simple").strip().lower() != "kerberos":
            env["HADOOP_USER_NAME"] = user
        self.starts += 1
        process = HelperProcess(argv, env, Path(self._log_dir.name) / f"helper-{self.starts}.log")
        try:
            answer = process.handshake(self._settings, self._start_timeout)
        except (ProcessGone, TimeoutError) as error:
            process.close(wait=1.0)
            raise StorageUnavailableError(f"{self._catalog()}the Hadoop filesystem helper did not start ({error})"
                               f"{self._log_tail(process)}") from None
        if "error" in answer:
            process.close(wait=5.0)
            failure = answer["error"]
            raise StorageError(f"{self._catalog()}the Hadoop client refused the catalog's settings: "
                               f"{self._scrub(failure.get('class', ''))}: {self._scrub(failure.get('message', ''))}")
        return process, _identity(answer)

    # -- errors -----------------------------------------------------------------------------------------

    def _catalog(self) -> str:
        return f"catalog '{self.name}': " if self.name else ""

    def _os_error(self, failure: Mapping[str, Any], uri: str) -> OSError:
        kind = failure.get("kind")
        message = self._scrub(str(failure.get("message") or failure.get("class", "")))
        if kind == "not_found":
            return FileNotFoundError(errno.ENOENT, message, uri)
        if kind == "permission":
            return PermissionError(errno.EACCES, message, uri)
        if kind == "exists":
            return FileExistsError(errno.EEXIST, message, uri)
        return OSError(f"{uri}: {failure.get('class', 'java.io.IOException')}: {message}")

    def _log_tail(self, process: HelperProcess) -> str:
        try:
            text = process.log_file.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return ""
        return f"; its log ends:\n{self._scrub(text[-_LOG_TAIL:])}" if text else ""

    def _scrub(self, text: str) -> str:
        """``text`` without the value of any secret setting, nor of a ``secret=value`` pair in it."""
        for key, value in self._settings.items():
            if is_secret_key(key) and len(value) >= 4:
                text = text.replace(value, MASK)
        return mask_text(text)


def _file(entry: Mapping[str, Any]) -> HadoopFile:
    return HadoopFile(path=str(entry["path"]), type=str(entry["type"]), size=int(entry["size"]),
                      mtime_ms=int(entry["mtime"]), block_size=int(entry["block_size"]))


def _identity(answer: Mapping[str, Any]) -> HadoopIdentity:
    return HadoopIdentity(user=str(answer["user"]), short_user=str(answer["short_user"]),
                          authentication=str(answer["authentication"]), kerberos=bool(answer["kerberos"]),
                          keytab=bool(answer["keytab"]), hadoop_version=str(answer["hadoop"]),
                          ticket_end_ms=int(answer.get("ticket_end", 0)))
