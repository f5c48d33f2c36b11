"""The embedded Hive Metastore: a real HMS thrift server run from pyspark's Hive 2.3 jars, on Derby or PostgreSQL.

On Derby it needs nothing installed beyond pyspark and a Java 17 runtime, so it is the default metastore of
the demo and of the test suite. On PostgreSQL (a database given to it, or a server of its own started from
Debian's server binaries: :mod:`hms_catalog.metastore._database`) it is a metastore at production scale:
Hive's direct SQL lists a million partitions where Derby would not. With :class:`MetastoreKerberos` it runs
secure, as production metastores do: SASL/GSSAPI only, with a service principal and keytab from the user's KDC.

Everything it owns lives in one directory: the Derby database (or its own PostgreSQL server), the warehouse,
the configuration, the compiled helpers, the logs, a small state file that lets a second process
(``hms-catalog metastore stop``) find the server again, and the port and database it last used: catalogs
defined over it name that port, so a later start on the same directory takes both again unless told otherwise.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from hms_catalog.errors import AuthenticationError, ConfigurationError, EmbeddedMetastoreError
from hms_catalog.jdk import find_java_tool, spark_jars_dir
from hms_catalog.kerberos.config import (
    SASL_ENABLED,
    SERVICE_PRINCIPAL,
)
from hms_catalog.kerberos.login import KerberosLogin
from hms_catalog.metastore import _backend, _derby, _setup
from hms_catalog.metastore._database import (
    MetastoreDatabase,
    PostgresDatabase,
    driver_refusal,
    mask_database_url,
    parse_database,
    same_database,
)
from hms_catalog.metastore._errors import MetastoreAlreadyRunning, MetastorePortInUse
from hms_catalog.metastore._logs import log_tail, written_since
from hms_catalog.metastore._process import alive, answers, free_port, listening, port_free
from hms_catalog.metastore._state import ServerState, ServerStateFile
from hms_catalog.metastore.kerberos import MetastoreKerberos
from hms_catalog.properties import METASTORE_URIS, MetastoreUri

__all__ = ["EmbeddedMetastore", "MetastoreKerberos", "MetastoreStatus", "MetastoreAlreadyRunning", "MetastorePortInUse",
           "DEFAULT_PORT"]

DEFAULT_PORT = 9083
_MARKER = "-Dhms_catalog.metastore.dir="
_JAVA_OPENS = [f"--add-opens=java.base/{pkg}=ALL-UNNAMED" for pkg in ("java.lang", "java.net", "java.util", "java.nio")]
# Extra options for the metastore's JVMs (the server and the preparer), as HADOOP_OPTS is for Hive's own scripts:
# the test suite sets -XX:TieredStopAtLevel=1 there, which halves the CPU of a short-lived metastore.
JAVA_OPTIONS_ENV = "HMS_CATALOG_METASTORE_JAVA_OPTS"


@dataclass(frozen=True)
class MetastoreStatus:
    """What ``hms-catalog metastore status`` reports; ``database`` as it may be shown (the password masked)."""

    directory: Path
    running: bool
    uri: str | None = None
    pid: int | None = None
    events: bool | None = None
    started_at: float | None = None
    principal: str | None = None
    database: str = "derby"


class EmbeddedMetastore:
    """Start, wait for, and stop a metastore whose files live in ``directory``.

    Used as a context manager it starts on entry and stops on exit (the test suite does this once per
    session). ``port`` is where to listen, ``0`` any free port; ``None`` takes the port this directory's
    metastore listened on last (:attr:`remembered_port`), and on a directory never started ``default_port``,
    else a free one. Every start remembers its port, so catalogs defined over it keep reaching it.

    ``object_store_stub``: accept ``s3a://``, ``s3://`` and ``s3n://`` locations (tables, partitions,
    databases) through a stub Hadoop filesystem that answers the metastore's folder checks and reaches no
    store (``resources/ObjectStoreStub.java``). Hive 2.3 from pyspark's jars has no S3 filesystem and refuses
    such locations otherwise ("Class S3AFileSystem not found"). For tests and the demo only: a real
    metastore needs ``hadoop-aws`` and the AWS SDK on its classpath instead. The catalog writes and deletes
    the objects itself, with its own credentials (DROP TABLE .. PURGE, DROP PARTITION, the writes'
    cleanup); the stub deletes nothing.

    ``database``: where the metadata lives, ``"derby"`` in the directory or a PostgreSQL URL
    (``postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE``, or ``postgresql`` for a server of its own in
    ``DIR/postgres``, stopped with the metastore), parsed here (ConfigurationError says what is wrong). ``None``
    takes the database of this directory's last start, Derby on a directory never started.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        port: int | None = None,
        *,
        default_port: int | None = None,
        events: bool = True,
        heap: str = "512m",
        startup_timeout: float = 120.0,
        audit: bool = False,
        kerberos: MetastoreKerberos | None = None,
        object_store_stub: bool = False,
        database: str | MetastoreDatabase | None = None,
    ) -> None:
        self.directory = Path(directory).expanduser().resolve()
        self._state = ServerStateFile(self.directory)
        self._database = None if database is None else parse_database(database, where="database")
        self.port = port
        self.default_port = default_port
        self.events_requested = events
        self.heap = heap
        self.startup_timeout = startup_timeout
        self.audit = audit
        self.kerberos = kerberos
        self.object_store_stub = object_store_stub
        self.events_enabled = False
        self._process: subprocess.Popen[bytes] | None = None
        self._secret: str | None = None  # the database's password, masked in the log tails errors quote

    @property
    def uri(self) -> str:
        state = self._state.read()
        if state is None:
            raise EmbeddedMetastoreError(f"the metastore for {self.directory} is not running")
        return state["uri"]

    def client_properties(self) -> dict[str, str]:
        """The catalog properties that reach the running server (with its Kerberos settings when secure)."""
        state = self._state.read()
        if state is None:
            raise EmbeddedMetastoreError(f"the metastore for {self.directory} is not running")
        props = {METASTORE_URIS: state["uri"]}
        if state["principal"] is not None:
            props[SASL_ENABLED] = "true"
            props[SERVICE_PRINCIPAL] = state["principal"]
        return props

    @property
    def database(self) -> MetastoreDatabase:
        """The database a start uses: the one given, else the one of this directory's last start, else Derby."""
        return self._database or parse_database(self._state.remembered_database(), where=str(self.directory))

    @property
    def remembered_port(self) -> int | None:
        """The port of this directory's last successful start; None when it never started."""
        return self._state.remembered_port()

    @property
    def warehouse(self) -> Path:
        return self.directory / "warehouse"

    @property
    def log_file(self) -> Path:
        return self.directory / "metastore.log"

    @property
    def audit_file(self) -> Path:
        """One line per metastore call when started with ``audit=True`` (see :meth:`audited_calls`)."""
        return self.directory / "audit.log"

    def audited_calls(self, since: int = 0) -> tuple[int, dict[str, int]]:
        """Calls the server logged after line ``since`` of the audit log: (lines so far, count by method)."""
        try:
            lines = self.audit_file.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return 0, {}
        counts: dict[str, int] = {}
        for line in lines[since:]:
            marker = line.find("cmd=source:")
            if marker < 0:
                continue  # the server's housekeeping lines ("Cleaning up thread local RawStore...")
            words = line[marker + len("cmd=source:") :].split()
            if len(words) >= 2:
                method = words[1].rstrip(":")
                counts[method] = counts.get(method, 0) + 1
        return len(lines), counts

    def __enter__(self) -> EmbeddedMetastore:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> str:
        """Start the server and return its ``thrift://`` URI once it answers a call."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with self._state.start_lock():
            running = self.status()
            if running.running and running.uri and running.pid:
                self._check_same_database()
                raise MetastoreAlreadyRunning(self.directory, running.uri, running.pid)
            java = find_java_tool("java")
            if java is None:
                raise EmbeddedMetastoreError("no 'java' found (set JAVA_HOME or put Java 17 on PATH)")
            jars = spark_jars_dir()
            lib = self.directory / "lib"
            helpers = _setup.compile_helpers(lib, jars, object_store_stub=self.object_store_stub)
            if self.object_store_stub and not helpers:
                raise EmbeddedMetastoreError("object_store_stub needs 'javac' (a JDK) to compile its stub filesystem")
            self.events_enabled = helpers and self.events_requested
            database = self.database
            if isinstance(database, PostgresDatabase) and not helpers:
                raise EmbeddedMetastoreError("a metastore on PostgreSQL needs 'javac' (a JDK) to prepare its schema")
            conf = self.directory / "conf"
            conf.mkdir(exist_ok=True)
            self.warehouse.mkdir(exist_ok=True)
            reached, own_server = _backend.reach(self.directory, database)
            self._secret = reached.password if isinstance(reached, PostgresDatabase) else None
            try:
                uri = self._launch(reached, conf, lib, jars, java, helpers)
                self._state.remember_database(database.url())
            except BaseException:
                self._terminate_child()  # never leave a server behind that no state file points to
                if own_server is not None:
                    own_server.stop()
                raise
            return uri

    def _launch(self, reached: MetastoreDatabase, conf: Path, lib: Path, jars: Path, java: str, helpers: bool) -> str:
        """Configure, prepare (Derby) and start the server on ``reached``; its URI once it answers and is recorded."""
        secure = self.kerberos
        login = KerberosLogin(secure.client_config()) if secure is not None else None
        _setup.write_hive_site(
            conf, db_dir=self.directory / _derby.DATABASE_FOLDER, warehouse=self.warehouse,
            with_events=self.events_enabled, kerberos=(secure.server_principal, secure.keytab) if secure is not None else None,
            object_store_stub=self.object_store_stub,
            connection=reached.hive_settings() if isinstance(reached, PostgresDatabase) else None,
        )
        log_config = _setup.write_log_config(conf, self.log_file, self.audit_file if self.audit else None)
        classpath = os.pathsep.join([str(lib), f"{jars}/*", *_backend.classpath(reached)])
        base = [java, f"-Dlog4j.configurationFile={log_config}", f"-Dhive.log4j.file={log_config}",
                "-Dlog4j2.contextSelector=org.apache.logging.log4j.core.selector.BasicContextSelector",
                f"-Dderby.stream.error.file={self.directory / 'derby.log'}",
                *shlex.split(os.environ.get(JAVA_OPTIONS_ENV, ""))]
        server_classpath = classpath
        if secure is not None:
            hadoop_conf = _setup.write_core_site(conf / "hadoop")
            server_classpath = f"{hadoop_conf.parent}{os.pathsep}{classpath}"
            base.append(f"-Djava.security.krb5.conf={secure.krb5_conf_path}")
        env = {**os.environ, "HIVE_CONF_DIR": str(conf)}
        if helpers and not isinstance(reached, PostgresDatabase):
            _derby.prepare(self.directory, jars, base, classpath, env, self.log_tail)
        port = self._choose_port()
        log_from = self.log_file.stat().st_size if self.log_file.exists() else 0  # the log is appended to
        out = open(self.directory / "metastore.out", "wb")  # noqa: SIM115 - handed to the child
        with out:
            self._process = subprocess.Popen(
                [*base, f"-Xmx{self.heap}", _MARKER + str(self.directory), *_JAVA_OPENS,
                 "-cp", server_classpath, *_backend.main_class(reached), "-p", str(port)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )
        uri = f"thrift://127.0.0.1:{port}"
        self._wait_until_ready(MetastoreUri("127.0.0.1", port), login, reached, log_from)
        self._state.write(ServerState(
            pid=self._process.pid, port=port, uri=uri, events=self.events_enabled, started_at=time.time(),
            principal=secure.principal if secure else None, keytab=str(secure.keytab) if secure else None,
            database=reached.describe(),
        ))
        return uri

    def stop(self, timeout: float = 20.0) -> bool:
        """Stop the server of this directory, then its own PostgreSQL server if it has one; False when the
        metastore was not running. Safe to call twice."""
        state = self._state.read()
        pid = state["pid"] if state else None
        if pid is None or not self._is_our_server(pid):
            self._state.clear()
            self._terminate_child()  # a child of ours that died or lost its state file is still reaped
            _backend.stop_own_server(self.directory)
            return False
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        if not self._wait_gone(pid, timeout):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            self._wait_gone(pid, 5.0)
        self._state.clear()
        self._terminate_child()  # reaps our child (no ResourceWarning for a Popen never waited on)
        _backend.stop_own_server(self.directory)
        return True

    def status(self) -> MetastoreStatus:
        """Whether this directory's server runs, judged by its process and an answered call."""
        state = self._state.read()
        if state is None or not self._is_our_server(state["pid"]):
            return MetastoreStatus(self.directory, running=False, database=self._remembered()[0])
        login = None
        if state["principal"] is not None and state["keytab"] is not None:
            secure = MetastoreKerberos(state["principal"], Path(state["keytab"]))
            login = KerberosLogin(secure.client_config())
        try:
            answering = answers(MetastoreUri("127.0.0.1", state["port"]), timeout=5.0, login=login)
        except AuthenticationError:
            # This process cannot log in (another krb5.conf, no KDC): the server's port answering is all
            # that can be told, and enough to refuse starting a second server on the same database.
            answering = listening(state["port"])
        return MetastoreStatus(
            self.directory,
            running=answering,
            uri=state["uri"],
            pid=state["pid"],
            events=state["events"],
            started_at=state["started_at"],
            principal=state["principal"],
            database=state["database"],
        )

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server's log and console output, for error messages."""
        return log_tail((self.log_file, self.directory / "metastore.out"), self._secret, lines)

    def _check_same_database(self) -> None:
        """For a start that finds the server running: a database asked for that is not the one it runs on is an
        error, where the same one (or none asked) is an idempotent start."""
        if self._database is None:
            return
        shown, remembered = self._remembered()
        if remembered is None or not same_database(remembered, self._database):
            raise EmbeddedMetastoreError(
                f"a metastore is already running for {self.directory} on {shown}, not on "
                f"{self._database.describe()} as asked; stop it first to start it on another database")

    def _database_refusal(self, log_from: int) -> str | None:
        """The refusal PostgreSQL's driver logged in this start (from ``log_from`` of the log on), as one line."""
        return driver_refusal(written_since(self.log_file, log_from, self.directory / "metastore.out", self._secret))

    def _remembered(self) -> tuple[str, MetastoreDatabase | None]:
        """The database of this directory's last start: as it may be shown, even when it no longer parses, and
        parsed (None when it does not)."""
        remembered = self._state.remembered_database() or "derby"
        try:
            parsed = parse_database(remembered)
        except ConfigurationError:
            return mask_database_url(remembered), None
        return parsed.describe(), parsed

    def _choose_port(self) -> int:
        """The port to listen on (see the class); MetastorePortInUse when it is taken."""
        remembered = self.remembered_port if self.port is None else None
        if self.port == 0:
            return free_port()
        port = self.port or remembered or self.default_port
        if port is None:
            return free_port()
        if not port_free(port):
            raise MetastorePortInUse(self.directory, port, remembered=remembered is not None)
        return port

    def _wait_until_ready(self, uri: MetastoreUri, login: KerberosLogin | None, reached: MetastoreDatabase,
                          log_from: int) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                refused = self._database_refusal(log_from) if isinstance(reached, PostgresDatabase) else None
                if refused is not None:  # the reason first, not under sixty lines of the driver's stack
                    raise EmbeddedMetastoreError(
                        f"the metastore could not open its database {reached.describe()}: {refused} (its logs: "
                        f"{self.log_file}, {self.directory / 'metastore.out'})")
                raise EmbeddedMetastoreError(
                    f"the metastore exited with status {self._process.returncode} while starting:\n{self.log_tail()}"
                )
            try:
                if answers(uri, timeout=2.0, login=login):
                    return
            except AuthenticationError as error:
                self._terminate_child()
                raise EmbeddedMetastoreError(
                    f"the secure metastore refused its own principal: {error}\n{self.log_tail()}"
                ) from error
            time.sleep(0.2)
        self._terminate_child()
        raise EmbeddedMetastoreError(
            f"the metastore did not answer within {self.startup_timeout:g}s:\n{self.log_tail()}"
        )

    def _terminate_child(self) -> None:
        if self._process is not None and self._process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait(timeout=10)

    def _wait_gone(self, pid: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process is not None and self._process.pid == pid:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=0.1)
            if not alive(pid):
                return True
            time.sleep(0.1)
        return not alive(pid)

    def _is_our_server(self, pid: int) -> bool:
        """True only for a live java process started for this very directory (pids get reused)."""
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return alive(pid)
        marker = (_MARKER + str(self.directory)).encode()
        return marker in cmdline and alive(pid)

