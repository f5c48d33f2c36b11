"""The embedded Hive Metastore: a real HMS thrift server run from pyspark's Hive 2.3 jars on Derby.

It needs nothing installed beyond pyspark and a Java 17 runtime, so it is the default metastore of the
demo and of the test suite. With :class:`MetastoreKerberos` it runs secure, as production metastores do:
SASL/GSSAPI only, with a service principal and keytab from the user's KDC.

Everything it owns lives in one directory: the Derby database, the warehouse, the configuration, the
compiled helpers, the logs, a small state file that lets a second process (``hms-catalog metastore
stop``) find the server again, and the port it last listened on: catalogs defined over it name that port,
so a later start on the same directory takes it again unless told otherwise.
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

from hms_catalog.errors import AuthenticationError, EmbeddedMetastoreError, ErrorKind
from hms_catalog.jdk import find_java_tool, spark_jars_dir
from hms_catalog.kerberos.config import (
    SASL_ENABLED,
    SERVICE_PRINCIPAL,
)
from hms_catalog.kerberos.login import KerberosLogin
from hms_catalog.metastore import _setup
from hms_catalog.metastore._process import alive, answers, free_port, listening, port_free
from hms_catalog.metastore._state import ServerState, ServerStateFile
from hms_catalog.metastore.kerberos import MetastoreKerberos
from hms_catalog.properties import METASTORE_URIS, MetastoreUri

__all__ = ["EmbeddedMetastore", "MetastoreKerberos", "MetastoreStatus", "MetastoreAlreadyRunning", "MetastorePortInUse",
           "DEFAULT_PORT"]

DEFAULT_PORT = 9083
_MARKER = "-Dhms_catalog.metastore.dir="
# The preparer's level (PrepareDatabase.java): a database prepared at an older level, or never, is
# prepared again, in place, on its next start. 2: the notification log's MESSAGE is a CLOB; 3: every
# column Hive's Derby schema declares CLOB or wider than autoCreateAll makes it has its production type.
_PREPARED_MARKER = "metastore_db.prepared"
_SCHEMA_LEVEL = "3"
_JAVA_OPENS = [f"--add-opens=java.base/{pkg}=ALL-UNNAMED" for pkg in ("java.lang", "java.net", "java.util", "java.nio")]
# Extra options for the metastore's JVMs (the server and the preparer), as HADOOP_OPTS is for Hive's own scripts:
# the test suite sets -XX:TieredStopAtLevel=1 there, which halves the CPU of a short-lived metastore.
JAVA_OPTIONS_ENV = "HMS_CATALOG_METASTORE_JAVA_OPTS"


class MetastoreAlreadyRunning(EmbeddedMetastoreError):
    """``start`` was asked of a directory whose metastore is running; ``uri`` says where."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, directory: Path, uri: str, pid: int) -> None:
        self.uri = uri
        self.pid = pid
        super().__init__(f"a metastore is already running for {directory} at {uri} (pid {pid})")


class MetastorePortInUse(EmbeddedMetastoreError):
    """The port a start was to take is in use; ``remembered`` when it is the one the directory's metastore
    listened on before (the one its catalogs name), so the message says how to move them too."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, directory: Path, port: int, *, remembered: bool) -> None:
        self.port = port
        self.remembered = remembered
        message = f"port {port} is already in use; stop what listens there or pick another with --port"
        if remembered:
            message = (
                f"port {port} is already in use; the metastore of {directory} listened there before, and catalogs "
                f"defined over it name thrift://127.0.0.1:{port}. Stop what listens there, or start on another port "
                f"with --port N (0 picks a free one; EmbeddedMetastore(..., port=N) in Python) and point those "
                f"catalogs at it: ALTER CATALOG <name> SET PROPERTIES ('hive.metastore.uris'='thrift://127.0.0.1:N')"
            )
        super().__init__(message)


@dataclass(frozen=True)
class MetastoreStatus:
    """What ``hms-catalog metastore status`` reports."""

    directory: Path
    running: bool
    uri: str | None = None
    pid: int | None = None
    events: bool | None = None
    started_at: float | None = None
    principal: str | None = None


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
    ) -> None:
        self.directory = Path(directory).expanduser().resolve()
        self._state = ServerStateFile(self.directory)
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
            conf = self.directory / "conf"
            conf.mkdir(exist_ok=True)
            self.warehouse.mkdir(exist_ok=True)
            db_dir = self.directory / "metastore_db"
            secure = self.kerberos
            login = KerberosLogin(secure.client_config()) if secure is not None else None
            _setup.write_hive_site(
                conf, db_dir=db_dir, warehouse=self.warehouse, with_events=self.events_enabled,
                kerberos=(secure.server_principal, secure.keytab) if secure is not None else None,
                object_store_stub=self.object_store_stub,
            )
            log_config = _setup.write_log_config(conf, self.log_file, self.audit_file if self.audit else None)
            classpath = f"{lib}{os.pathsep}{jars}/*"
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
            prepared = self.directory / _PREPARED_MARKER
            if helpers and not _prepared_at_current_level(db_dir, prepared):
                # A new directory starts from a copy of a database prepared before (the preparer's JVM is most
                # of a first start); one that has a database is prepared in place (an upgrade keeps its content).
                if not _setup.copy_prepared_database(db_dir, jars, _SCHEMA_LEVEL):
                    fresh = not db_dir.exists()
                    self._prepare_database(base, classpath, env)
                    if fresh:
                        _setup.keep_prepared_database(db_dir, jars, _SCHEMA_LEVEL)
                prepared.write_text(_SCHEMA_LEVEL, encoding="utf-8")
            port = self._choose_port()
            out = open(self.directory / "metastore.out", "wb")  # noqa: SIM115 - handed to the child
            with out:
                self._process = subprocess.Popen(
                    [*base, f"-Xmx{self.heap}", _MARKER + str(self.directory), *_JAVA_OPENS,
                     "-cp", server_classpath, "org.apache.hadoop.hive.metastore.HiveMetaStore", "-p", str(port)],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                    start_new_session=True,
                )
            uri = f"thrift://127.0.0.1:{port}"
            try:
                self._wait_until_ready(MetastoreUri("127.0.0.1", port), login)
                self._state.write(ServerState(
                    pid=self._process.pid, port=port, uri=uri, events=self.events_enabled, started_at=time.time(),
                    principal=secure.principal if secure else None, keytab=str(secure.keytab) if secure else None,
                ))
            except BaseException:
                self._terminate_child()  # never leave a server behind that no state file points to
                raise
            return uri

    def stop(self, timeout: float = 20.0) -> bool:
        """Stop the server of this directory; False when none was running. Safe to call twice."""
        state = self._state.read()
        pid = state["pid"] if state else None
        if pid is None or not self._is_our_server(pid):
            self._state.clear()
            self._terminate_child()  # a child of ours that died or lost its state file is still reaped
            return False
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        if not self._wait_gone(pid, timeout):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            self._wait_gone(pid, 5.0)
        self._state.clear()
        self._terminate_child()  # reaps our child (no ResourceWarning for a Popen never waited on)
        return True

    def status(self) -> MetastoreStatus:
        """Whether this directory's server runs, judged by its process and an answered call."""
        state = self._state.read()
        if state is None or not self._is_our_server(state["pid"]):
            return MetastoreStatus(self.directory, running=False)
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
        )

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server's log and console output, for error messages."""
        chunks = []
        for path in (self.log_file, self.directory / "metastore.out"):
            if path.exists():
                text = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
                if text:
                    chunks.append(f"--- {path} ---\n" + "\n".join(text))
        return "\n".join(chunks) or "(the server wrote no log)"

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

    def _prepare_database(self, base: list[str], classpath: str, env: dict[str, str]) -> None:
        result = subprocess.run(
            [*base, "-cp", classpath, _setup.PREPARER_CLASS],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, check=False, cwd=self.directory,
        )
        if result.returncode != 0:
            raise EmbeddedMetastoreError(
                f"could not prepare the metastore database in {self.directory / 'metastore_db'}:\n"
                f"{result.stderr[-2000:]}\n{self.log_tail()}"
            )

    def _wait_until_ready(self, uri: MetastoreUri, login: KerberosLogin | None) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
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


def _prepared_at_current_level(db_dir: Path, marker: Path) -> bool:
    if not db_dir.exists() or not marker.exists():
        return False
    return marker.read_text(encoding="utf-8").strip() == _SCHEMA_LEVEL
