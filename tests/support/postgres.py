"""A throw-away real PostgreSQL server for tests: one cluster in a temp folder, on a loopback TCP port.

The cluster is made with the machine's own binaries (Debian's ``/usr/lib/postgresql/<version>/bin``), not a
container, so it starts in a second or two and needs nothing but the ``postgresql`` package. Clients reach it
the way a deployed catalog would: over TCP as the ordinary role ``hms`` with a SCRAM password, in the
database ``hms_catalog``; the cluster's superuser is only used over the unix socket, with peer
authentication, to set that up.

PostgreSQL refuses to run as root, and CI runs the tests as root: then every server program runs as the
``postgres`` system user (``subprocess``'s ``user=``, so the postmaster is our direct child and signals reach
it, not a ``runuser`` in between). That user cannot enter pytest's temp root (``/tmp/pytest-of-root`` is
0700), so in that case the data and socket folders live in a private folder under the system temp dir,
removed by ``close()``; the log and the password file stay in the folder the caller gave.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["PostgresServer", "available", "find_binaries"]

DATABASE = "hms_catalog"
USER = "hms"
SERVER_USER = "postgres"  # the system user Debian's package makes, who runs the server when we are root
_PROGRAMS = ("initdb", "postgres", "pg_isready", "psql")
_DEBIAN_ROOT = Path("/usr/lib/postgresql")


def find_binaries() -> Path | None:
    """The bin folder of the newest PostgreSQL installed: Debian keeps each major version apart, and none is
    on PATH, so look there first; elsewhere (a source build, Homebrew) take whatever ``initdb`` PATH has."""
    versions = [p for p in _DEBIAN_ROOT.glob("*/bin") if (p / "initdb").is_file() and p.parent.name.isdigit()]
    if versions:
        return max(versions, key=lambda p: int(p.parent.name))
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def available() -> tuple[bool, str]:
    """Whether a server can be started here and, when not, why (the test fixture skips or fails with it)."""
    binaries = find_binaries()
    if binaries is None:
        return False, f"PostgreSQL is not installed (no {_DEBIAN_ROOT}/*/bin/initdb, no initdb on PATH; Debian: postgresql)"
    missing = [name for name in _PROGRAMS if not (binaries / name).is_file()]
    if missing:
        return False, f"PostgreSQL programs missing from {binaries}: {', '.join(missing)}"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return False, f"running as root, and there is no {SERVER_USER!r} system user for PostgreSQL to run as"
    return True, str(binaries)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PostgresServer:
    """A PostgreSQL cluster under ``directory``, started by ``start()`` on a free port of 127.0.0.1.

    The port is chosen once, so ``url`` stays valid across ``restart()`` and ``kill()`` + ``start()``.
    """

    def __init__(self, directory: Path, *, start_timeout: float = 60.0) -> None:
        ok, detail = available()
        if not ok:
            raise RuntimeError(detail)
        self.bin = Path(detail)
        self.directory = directory
        self.start_timeout = start_timeout
        self.host = "127.0.0.1"
        self.port = _free_port()
        self.user = USER
        self.database = DATABASE
        self.log_file = directory / "postgres.log"
        self.password_file = directory / "password"
        self.password = secrets.token_urlsafe(24)  # URL- and SQL-safe: no quoting needed anywhere
        self._as_root = os.geteuid() == 0
        self._account = pwd.getpwnam(SERVER_USER) if self._as_root else pwd.getpwuid(os.geteuid())
        self._private: Path | None = None  # the folder made when the server user cannot reach ``directory``
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The SQLAlchemy 2 URL (psycopg 3 driver), without the password: pass that apart, as a catalog does."""
        return f"postgresql+psycopg://{self.user}@{self.host}:{self.port}/{self.database}"

    @property
    def root(self) -> Path:
        """Where the data and socket folders live (``directory``, or a private folder when run as root)."""
        return self._private or self.directory

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def __enter__(self) -> PostgresServer:
        try:
            self.start()
        except BaseException:
            self.close()  # ``with`` calls no __exit__ when __enter__ raises: a half-started server is ours to end
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def start(self) -> None:
        """Start the server (making the cluster first, once) and return when it accepts connections."""
        if self.running:
            return
        fresh = not (self.data_dir / "PG_VERSION").exists()
        if fresh:
            self._make_cluster()
        log = self.log_file.open("ab")
        try:
            self._process = subprocess.Popen(
                [str(self.bin / "postgres"), "-D", str(self.data_dir), "-c", f"port={self.port}",
                 "-c", f"listen_addresses={self.host}", "-c", f"unix_socket_directories={self.socket_dir}",
                 # a throw-away cluster: durability buys nothing and costs seconds per test run
                 "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, **self._run_as(),
            )
        finally:
            log.close()
        self._wait_ready(self._process)
        if fresh:
            self.psql(f"CREATE ROLE {self.user} LOGIN PASSWORD '{self.password}';\n"
                      f"CREATE DATABASE {self.database} OWNER {self.user};\n")

    def stop(self, timeout: float = 30.0) -> None:
        """Fast shutdown (SIGINT: open sessions are rolled back); escalate if it hangs. Idempotent."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGKILL):
            process.send_signal(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=timeout)
                return

    def restart(self) -> None:
        self.stop()
        self.start()

    def kill(self) -> None:
        """Crash the server: SIGKILL the postmaster and every backend, as an OOM killer would, so a test sees
        connections drop without a goodbye; ``start()`` then runs crash recovery."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        children = _children(process.pid)
        for pid in (process.pid, *children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait(timeout=10)
        # A backend still alive holds the shared memory, and a new postmaster would refuse to start on it.
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.05)

    def close(self) -> None:
        """Stop the server and remove the private folder, if one was made; ``directory`` is the caller's."""
        self.stop()
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None

    def psql(self, sql: str) -> str:
        """Run ``sql`` as the cluster's superuser over the unix socket (peer authentication); its output."""
        result = subprocess.run(
            [str(self.bin / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(self.socket_dir),
             "-p", str(self.port), "-d", "postgres"],
            input=sql, capture_output=True, text=True, check=False, **self._run_as(),
        )
        if result.returncode != 0:
            raise RuntimeError(f"psql failed ({result.returncode}): {result.stderr.strip()}")
        return result.stdout

    def log_tail(self, size: int = 3000) -> str:
        with contextlib.suppress(OSError):
            return self.log_file.read_text(errors="replace")[-size:]
        return "(no log)"

    def _make_cluster(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        if self._as_root and not self._can_enter(self.directory.parent):
            self._private = Path(tempfile.mkdtemp(prefix="hms-catalog-postgres-"))
        for folder in (self.root, self.socket_dir):
            folder.mkdir(exist_ok=True)
            if self._as_root:
                os.chown(folder, self._account.pw_uid, self._account.pw_gid)
        if self.password_file.exists():  # a cluster made before in this folder keeps its password
            self.password = self.password_file.read_text(encoding="utf-8")
        else:
            descriptor = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                out.write(self.password)  # no newline: the file holds exactly the password
        result = subprocess.run(
            [str(self.bin / "initdb"), "-D", str(self.data_dir), "--auth-local=peer", "--auth-host=scram-sha-256",
             "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"],
            capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL, **self._run_as(),
        )
        if result.returncode != 0:
            raise RuntimeError(f"initdb failed ({result.returncode}): {result.stderr.strip() or result.stdout.strip()}")

    def _wait_ready(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            if process.poll() is not None:
                code, self._process = process.returncode, None
                raise RuntimeError(f"postgres exited with {code} while starting; log tail:\n{self.log_tail()}")
            # pg_isready tells "starting up" (1) from "accepting" (0); a bare socket connect cannot
            ready = subprocess.run(
                [str(self.bin / "pg_isready"), "-q", "-h", self.host, "-p", str(self.port), "-d", "postgres", "-t", "2"],
                stdin=subprocess.DEVNULL, capture_output=True, check=False, env=_clean_env(),
            )
            if ready.returncode == 0:
                return
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(
                    f"PostgreSQL on {self.host}:{self.port} did not accept connections within {self.start_timeout:g}s;"
                    f" log tail ({self.log_file}):\n{self.log_tail()}"
                )
            time.sleep(0.1)

    def _can_enter(self, folder: Path) -> bool:
        """Whether the server user can reach ``folder``: asked of the system, which knows groups and ACLs."""
        probe = subprocess.run(["test", "-x", str(folder)], check=False, stdin=subprocess.DEVNULL, **self._run_as())
        return probe.returncode == 0

    def _run_as(self) -> dict[str, Any]:
        """``subprocess`` arguments that run a program as the server user (when we are root), from ``/``: the
        working directory of pytest may be closed to that user, and every path we pass is absolute."""
        if not self._as_root:
            return {"env": _clean_env(), "cwd": "/"}
        return {"user": self._account.pw_uid, "group": self._account.pw_gid, "extra_groups": [], "cwd": "/",
                "env": {**_clean_env(), "HOME": str(self.root), "USER": SERVER_USER, "LOGNAME": SERVER_USER}}


def _clean_env() -> dict[str, str]:
    """This environment without libpq's ``PG*`` variables, so a developer's own PGHOST or PGDATABASE cannot
    send a probe or the set-up elsewhere."""
    return {key: value for key, value in os.environ.items() if not key.startswith("PG")}


def _children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (Linux: read from /proc)."""
    found: list[int] = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(") ", 1)[1].split()  # after "pid (comm) ": state, ppid, ...
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    """Alive and not a zombie: a zombie holds no shared memory, and in a container nothing may reap it."""
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[0] != "Z"
    return False
