"""A PostgreSQL server in a folder: the embedded metastore's own (``--db postgresql``) and the test suite's.

The cluster is made with the machine's own binaries (Debian's ``/usr/lib/postgresql/<version>/bin``), not a
container, so it starts in a second or two and needs nothing but the ``postgresql`` package. Clients reach it
the way they reach a deployed server: over TCP on 127.0.0.1, as an ordinary role with a SCRAM password, in a
database that role owns; the cluster's superuser is only used over the unix socket, with peer
authentication, to set that up.

Everything it keeps lives in its folder, so another process finds it there: the port (``port``, chosen once
and kept while it is free), the role's password (``password``, 0600), the server's log (``postgres.log``),
and the data and socket folders. The postmaster's own ``data/postmaster.pid`` says whether it runs, so a
server started by one process (``hms-catalog metastore start``) is stopped by another (``... stop``).

PostgreSQL refuses to run as root, and CI runs as root: then every server program runs as the ``postgres``
system user (``subprocess``'s ``user=``, so the postmaster is our direct child and signals reach it, not a
``runuser`` in between). When that user cannot enter the folder's parent (``/root``, pytest's 0700 temp root),
the data and socket folders live in a private folder instead, named in the folder's ``location`` file: under the
system temp dir for a throw-away cluster, under ``/var/lib/hms-catalog`` for a durable one (so no temp cleaning or
reboot empties a metastore's database; a recorded folder that is gone is an error, never a new empty cluster).
The port, password and log files stay in the folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pwd
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from hms_catalog._private import private_file
from hms_catalog.errors import EmbeddedMetastoreError
from hms_catalog.metastore._process import alive, free_port, port_free, read_port

__all__ = ["SERVER_PACKAGE", "SERVER_USER", "PostgresServer", "available", "find_binaries"]

SERVER_PACKAGE = "postgresql"  # Debian's package of the server binaries
SERVER_USER = "postgres"  # the system user Debian's package makes, who runs the server when we are root
_PROGRAMS = ("initdb", "postgres", "pg_ctl", "pg_isready", "psql")
_DEBIAN_ROOT = Path("/usr/lib/postgresql")
_PID_FILE = "postmaster.pid"
# A durable cluster's data when run as root and the server user cannot enter the folder's parent (/root).
DURABLE_ROOT = Path("/var/lib/hms-catalog")


def find_binaries() -> Path | None:
    """The bin folder of the newest PostgreSQL installed: Debian keeps each major version apart, and none is
    on PATH, so look there first; elsewhere (a source build, Homebrew) take whatever ``initdb`` PATH has."""
    versions = [p for p in _DEBIAN_ROOT.glob("*/bin") if (p / "initdb").is_file() and p.parent.name.isdigit()]
    if versions:
        return max(versions, key=lambda p: int(p.parent.name))
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def available() -> tuple[bool, str]:
    """Whether a server can be started here and, when not, why: (True, the bin folder) or (False, the reason)."""
    binaries = find_binaries()
    if binaries is None:
        return False, (f"PostgreSQL's server is not installed (no {_DEBIAN_ROOT}/*/bin/initdb, no initdb on PATH; "
                       f"Debian: apt-get install {SERVER_PACKAGE})")
    missing = [name for name in _PROGRAMS if not (binaries / name).is_file()]
    if missing:
        return False, f"PostgreSQL programs missing from {binaries}: {', '.join(missing)}"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return False, f"running as root, and there is no {SERVER_USER!r} system user for PostgreSQL to run as"
    return True, str(binaries)


class PostgresServer:
    """The PostgreSQL cluster under ``directory``: ``start()`` makes it (once) and starts it on 127.0.0.1.

    ``user`` and ``database``: the role clients log in as (password in :attr:`password`) and the database it
    owns, made with the cluster. ``durable=False`` turns fsync off, for throw-away clusters (durability buys
    nothing there and costs seconds per test run). ``detached``: the server outlives this process, as the
    metastore's own server must outlive ``hms-catalog metastore start``: ``pg_ctl`` starts it as a daemon,
    not our child; otherwise it is our child (``kill()`` in the tests' subclass crashes it).
    """

    def __init__(self, directory: Path, *, user: str, database: str, durable: bool = True, detached: bool = False,
                 start_timeout: float = 60.0) -> None:
        ok, detail = available()
        if not ok:
            raise EmbeddedMetastoreError(detail)
        self.bin = Path(detail)
        self.directory = directory
        self.user = user
        self.database = database
        self.durable = durable
        self.detached = detached
        self.start_timeout = start_timeout
        self.host = "127.0.0.1"
        self.log_file = directory / "postgres.log"
        self.password_file = directory / "password"
        self._port_file = directory / "port"
        self._location_file = directory / "location"
        self._as_root = os.geteuid() == 0
        self._account = pwd.getpwnam(SERVER_USER) if self._as_root else pwd.getpwuid(os.geteuid())
        self._private = _read_path(self._location_file)  # the folder used when the server user cannot reach ours
        self.port = read_port(self._port_file) or free_port()
        self.password = _read_text(self.password_file) or secrets.token_urlsafe(24)  # URL- and SQL-safe
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def root(self) -> Path:
        """Where the data and socket folders live (``directory``, or a private folder when run as root), as
        this object or another (in this process or another) made them."""
        if self._private is None:
            self._private = _read_path(self._location_file)
        return self._private or self.directory

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    @property
    def running(self) -> bool:
        if self._process is not None:
            return self._process.poll() is None
        return self.pid() is not None

    def pid(self) -> int | None:
        """The running postmaster's pid, by its pid file (whoever started it); None when it is not running."""
        lines = (_read_text(self.data_dir / _PID_FILE) or "").splitlines()
        with contextlib.suppress(ValueError, IndexError, OSError):
            pid = int(lines[0])
            # a pid file left by a crash may name a pid reused since: only a postmaster of this data folder counts
            if alive(pid) and str(self.data_dir).encode() in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                return pid
        return None

    def start(self) -> None:
        """Start the server (making the cluster first, once) and return when it accepts connections; a server
        already running there (started by another process) is taken as it is."""
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.running:
            self.port = read_port(self._port_file) or self.port
            return
        fresh = not (self.data_dir / "PG_VERSION").exists()
        if fresh:
            self._make_cluster()
        if not port_free(self.port):
            self.port = free_port()
        self._port_file.write_text(f"{self.port}\n", encoding="utf-8")
        settings = {"port": str(self.port), "listen_addresses": self.host, "unix_socket_directories": str(self.socket_dir)}
        if not self.durable:
            settings.update({"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"})
        with self.log_file.open("ab") as log:
            if self.detached:
                self._start_daemon(settings, log.fileno())
            else:
                self._process = subprocess.Popen(
                    [str(self.bin / "postgres"), "-D", str(self.data_dir), *(f"-c{key}={value}" for key, value in settings.items())],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, **self._run_as(),
                )
                self._wait_ready(self._process)
        try:  # at every start, not only the first: a start interrupted before them must not leave a server no one logs in to
            if not self.psql(f"SELECT 1 FROM pg_roles WHERE rolname = '{self.user}';").strip():
                self.psql(f"CREATE ROLE \"{self.user}\" LOGIN PASSWORD '{self.password}';\n")
            self.ensure_database(self.database)
        except BaseException:
            self.stop()
            raise

    def ensure_database(self, name: str) -> None:
        """Make the database ``name``, owned by :attr:`user`, unless it exists."""
        if not name.replace("_", "").isalnum():
            raise EmbeddedMetastoreError(f"database name {name!r}: use letters, digits and _ for a server of its own")
        if not self.psql(f"SELECT 1 FROM pg_database WHERE datname = '{name}';").strip():
            self.psql(f"CREATE DATABASE \"{name}\" OWNER \"{self.user}\";\n")

    def stop(self, timeout: float = 30.0) -> bool:
        """Fast shutdown (SIGINT: open sessions are rolled back), escalating if it hangs; False when it was not
        running. Stops a server another process started too, by its pid file."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGKILL):
                process.send_signal(sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=timeout)
                    return True
            return True
        pid = self.pid()
        if pid is None:
            return False
        for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
            deadline = time.monotonic() + timeout
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not alive(pid):
                break
        return True

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        """Stop the server and remove the private folder, if one was made; ``directory`` is the caller's."""
        self.stop()
        if self._private is None:  # made by another object (the metastore's start) after this one was made
            self._private = _read_path(self._location_file)
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)
            self._location_file.unlink(missing_ok=True)
            self._private = None

    def psql(self, sql: str) -> str:
        """Run ``sql`` as the cluster's superuser over the unix socket (peer authentication); its output."""
        result = subprocess.run(
            [str(self.bin / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", str(self.socket_dir),
             "-p", str(self.port), "-d", "postgres"],
            input=sql, capture_output=True, text=True, check=False, **self._run_as(),
        )
        if result.returncode != 0:
            raise EmbeddedMetastoreError(f"psql failed ({result.returncode}): {result.stderr.strip()}")
        return result.stdout

    def log_tail(self, size: int = 3000) -> str:
        with contextlib.suppress(OSError):
            return self.log_file.read_text(errors="replace")[-size:]
        return "(no log)"

    def _make_cluster(self) -> None:
        if self._private is not None and not self._private.is_dir() and self.durable:
            # A durable cluster's data is never made again behind its user's back: that would be an empty metastore
            # on the same port and password, every database and table gone without a word.
            raise EmbeddedMetastoreError(
                f"the PostgreSQL data folder {self._private} recorded in {self._location_file} is gone; restore it, or "
                f"remove {self.directory} to start over with an empty database")
        lost = self._private is None or not self._private.is_dir()  # never made, or a throw-away's temp dir was cleaned
        if self._as_root and lost and not self._can_enter(self.directory.parent):
            self._private = self._private_folder()
            self._location_file.write_text(f"{self._private}\n", encoding="utf-8")
        for folder in (self.root, self.socket_dir):
            folder.mkdir(exist_ok=True)
            if self._as_root:
                os.chown(folder, self._account.pw_uid, self._account.pw_gid)
        if not self.password_file.exists():  # a cluster made before in this folder keeps its password
            with os.fdopen(private_file(self.password_file, os.O_WRONLY | os.O_EXCL), "w", encoding="utf-8") as out:
                out.write(self.password)  # no newline: the file holds exactly the password
        shutil.rmtree(self.data_dir, ignore_errors=True)  # what a failed initdb left
        result = subprocess.run(
            [str(self.bin / "initdb"), "-D", str(self.data_dir), "--auth-local=peer", "--auth-host=scram-sha-256",
             "--encoding=UTF8", "--locale=C", "--no-instructions", *(() if self.durable else ("--no-sync",))],
            capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL, **self._run_as(),
        )
        if result.returncode != 0:
            raise EmbeddedMetastoreError(f"initdb failed ({result.returncode}): {result.stderr.strip() or result.stdout.strip()}")

    def _private_folder(self) -> Path:
        """Where the server user can reach the data when it cannot enter our folder: for a throw-away cluster a
        temp folder; for a durable one a folder under /var/lib that no temp cleaning or reboot takes away."""
        if not self.durable:
            return Path(tempfile.mkdtemp(prefix="hms-catalog-postgres-"))
        digest = hashlib.sha256(str(self.directory.resolve()).encode()).hexdigest()[:16]
        folder = DURABLE_ROOT / f"postgres-{digest}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def _start_daemon(self, settings: dict[str, str], log: int) -> None:
        """``pg_ctl start``: the postmaster is pg_ctl's child, so it outlives us and leaves us no child to reap.
        Its output goes to the log we opened (the server user may not be able to open it), and pg_ctl waits
        until it accepts connections."""
        options = " ".join(f"-c {key}={shlex.quote(value)}" for key, value in settings.items())  # read by a shell
        result = subprocess.run(
            [str(self.bin / "pg_ctl"), "start", "-D", str(self.data_dir), "-w", "-t", str(int(self.start_timeout)),
             "-s", "-o", options],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, check=False, **self._run_as(),
        )
        if result.returncode != 0:
            raise EmbeddedMetastoreError(
                f"PostgreSQL in {self.data_dir} did not start (pg_ctl exited with {result.returncode}); log tail "
                f"({self.log_file}):\n{self.log_tail()}"
            )

    def _wait_ready(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            if process.poll() is not None:
                code, self._process = process.returncode, None
                raise EmbeddedMetastoreError(f"postgres exited with {code} while starting; log tail:\n{self.log_tail()}")
            # pg_isready tells "starting up" (1) from "accepting" (0); a bare socket connect cannot
            ready = subprocess.run(
                [str(self.bin / "pg_isready"), "-q", "-h", self.host, "-p", str(self.port), "-d", "postgres", "-t", "2"],
                stdin=subprocess.DEVNULL, capture_output=True, check=False, env=_clean_env(),
            )
            if ready.returncode == 0:
                return
            if time.monotonic() > deadline:
                self.stop()
                raise EmbeddedMetastoreError(
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
        caller's working directory may be closed to that user, and every path we pass is absolute."""
        if not self._as_root:
            return {"env": _clean_env(), "cwd": "/"}
        return {"user": self._account.pw_uid, "group": self._account.pw_gid, "extra_groups": [], "cwd": "/",
                "env": {**_clean_env(), "HOME": str(self.root), "USER": SERVER_USER, "LOGNAME": SERVER_USER}}


def _clean_env() -> dict[str, str]:
    """This environment without libpq's ``PG*`` variables, so a developer's own PGHOST or PGDATABASE cannot
    send a probe or the set-up elsewhere."""
    return {key: value for key, value in os.environ.items() if not key.startswith("PG")}


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def _read_path(path: Path) -> Path | None:
    text = (_read_text(path) or "").strip()
    return Path(text) if text else None


