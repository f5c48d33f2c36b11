"""Real ``hms-catalog serve`` processes for the service's end-to-end tests, and what the tests share.

:func:`served` starts a server on a home, finds it by the line it prints before taking requests, waits
until ``/v1/health`` answers, and on exit stops it and checks that nothing outlived it: no process of its,
no listening port, no traceback on its stderr. Most API tests share one server (``service``) over one
Spark-written warehouse (``warehouse``); only the lifecycle tests start servers of their own.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import pytest

from hms_catalog.remote import CatalogServiceClient

START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
ANNOUNCED = re.compile(r"^hms-catalog service at (?P<url>https?://\S+) for (?P<home>.+) \(token in (?P<token>.+)\)$")
# Catalog properties of a catalog that follows the metastore's notification log, quickly.
EVENTS = {"hive.enable_hms_events_incremental_sync": "true", "hive.hms_events_polling_interval_ms": "200"}
SECRET = "hunter2-not-to-be-shown"
DB = f"svc{os.getpid()}"


class Answer(NamedTuple):
    """One HTTP answer: status, headers (lower-case names) and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def error(self) -> dict[str, Any]:
        """The ``error`` object every failure answers with, checked to have its type and message."""
        error = self.json()["error"]
        assert isinstance(error["type"], str) and isinstance(error["message"], str), error
        return dict(error)


@dataclass
class Server:
    """A running ``hms-catalog serve`` process and where to reach it."""

    url: str
    token: str
    token_path: Path
    home: Path
    announced_home: str
    process: subprocess.Popen[str]
    cafile: str | None = None
    _lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    _seen: list[str] = field(default_factory=list)
    _reader: threading.Thread | None = None

    @property
    def port(self) -> int:
        return urlsplit(self.url).port or 0

    def client(self, token: str | None = None, **options: Any) -> CatalogServiceClient:
        """A REST client of this server (its own token unless ``token`` is given); close it after use."""
        options.setdefault("cafile", self.cafile)
        return CatalogServiceClient(self.url, token if token is not None else self.token, **options)

    def connection(self, timeout: float = 60.0) -> http.client.HTTPConnection:
        """A plain HTTP(S) connection to the server, for requests no typed client would send."""
        parts = urlsplit(self.url)
        if parts.scheme == "https":
            return http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=timeout,
                                               context=ssl.create_default_context(cafile=self.cafile))
        return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)

    def request(self, method: str, path: str, body: bytes | Mapping[str, Any] | None = None, *,
                headers: Mapping[str, str] | None = None, token: str | None = "") -> Answer:
        """One request on a connection of its own. A mapping body is sent as JSON; ``token``: "" the
        server's own, None no Authorization header, anything else that bearer token."""
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token or self.token}"
        payload: bytes | None
        if isinstance(body, Mapping):
            payload = json.dumps(body).encode("utf-8")
            sent.setdefault("Content-Type", "application/json")
        else:
            payload = body
        connection = self.connection()
        try:
            return send(connection, method, path, payload, sent)
        finally:
            connection.close()

    def metrics(self) -> str:
        answer = self.request("GET", "/metrics")
        assert answer.status == 200 and answer.headers["content-type"].startswith("text/plain"), answer
        return answer.body.decode("utf-8")

    def stderr(self) -> str:
        """All the server wrote to stderr so far."""
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self._seen.append(line)
        return "".join(self._seen)

    def descendants(self) -> set[int]:
        """Processes started by the server (a Spark JVM, say), found through /proc."""
        found: set[int] = set()
        pending = [self.process.pid]
        while pending:
            pid = pending.pop()
            for children in Path(f"/proc/{pid}/task").glob("*/children"):
                with contextlib.suppress(OSError):
                    for child in map(int, children.read_text().split()):
                        if child not in found:
                            found.add(child)
                            pending.append(child)
        return found

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM and wait up to ``timeout`` seconds for the exit (``TimeoutExpired`` after it); the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        if self._reader is not None:
            self._reader.join(timeout=5)
        self.stderr()
        return code


def send(connection: http.client.HTTPConnection, method: str, path: str, body: bytes | None,
         headers: Mapping[str, str]) -> Answer:
    """One request on ``connection`` (kept open for the next)."""
    connection.request(method, path, body=body, headers=dict(headers))
    response = connection.getresponse()
    return Answer(response.status, {name.lower(): value for name, value in response.getheaders()}, response.read())


@contextlib.contextmanager
def served(home: Path, *extra: str, home_after_serve: bool = False, cafile: str | None = None) -> Iterator[Server]:
    """``hms-catalog serve --port 0`` on ``home`` with ``extra`` arguments, until the block ends.

    ``home_after_serve``: give ``--home`` after ``serve`` rather than before it. ``cafile``: the
    certificate to trust when it serves https. On a clean exit of the block, checks that the server
    stopped (SIGTERM) with exit code 0 and left nothing behind.
    """
    where = ["serve", "--home", str(home)] if home_after_serve else ["--home", str(home), "serve"]
    command = [sys.executable, "-m", "hms_catalog.cli", *where, "--port", "0", *extra]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:  # from the start, so that a full pipe never stalls the server
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=drain, name=f"serve-{process.pid}-stderr", daemon=True)
    reader.start()
    server: Server | None = None
    children: set[int] = set()
    try:
        server = _started(process, lines, reader, home, cafile)
        yield server
        children = server.descendants()
        code = server.stop()
        assert code == 0, f"the server exited with {code}:\n{server.stderr()}"
    finally:
        if process.poll() is None:  # the block failed, or the server did not stop: end it anyway
            children |= server.descendants() if server is not None else set()
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        reader.join(timeout=5)
        if process.stderr is not None:
            process.stderr.close()
    # Reached only when the block and the stop succeeded: what must not outlive the server.
    assert server is not None
    assert not reader.is_alive()
    survivors = [pid for pid in children if _alive(pid)]
    for pid in survivors:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert survivors == [], f"processes of the server outlived it: {survivors}"
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=2).close()
    assert "Traceback" not in server.stderr(), server.stderr()
    assert server.stderr().rstrip().endswith("hms-catalog service stopped"), server.stderr()


def _started(process: subprocess.Popen[str], lines: queue.Queue[str | None], reader: threading.Thread, home: Path,
             cafile: str | None) -> Server:
    """The server once it has announced itself and answers ``/v1/health``."""
    deadline = time.monotonic() + START_TIMEOUT
    seen: list[str] = []
    announced = None
    while announced is None:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"the server did not announce itself in {START_TIMEOUT:g} s:\n{''.join(seen)}"
        try:
            line = lines.get(timeout=min(remaining, 0.5))
        except queue.Empty:
            continue
        if line is None:
            raise AssertionError(f"the server exited with {process.wait()} before serving:\n{''.join(seen)}")
        seen.append(line)
        announced = ANNOUNCED.match(line.rstrip("\n"))
    token_path = Path(announced.group("token"))
    server = Server(
        url=announced.group("url"), token=token_path.read_text(encoding="utf-8").strip(), token_path=token_path,
        home=home, announced_home=announced.group("home"), process=process, cafile=cafile, _lines=lines, _seen=seen,
        _reader=reader,
    )
    while True:
        try:
            answer = server.request("GET", "/v1/health", token=None)
            if answer.status == 200:
                assert answer.json()["status"] == "ok", answer
                return server
        except OSError:
            pass  # not listening yet
        assert process.poll() is None, f"the server exited with {process.returncode}:\n{server.stderr()}"
        assert time.monotonic() < deadline, f"/v1/health did not answer in {START_TIMEOUT:g} s:\n{server.stderr()}"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs still (a zombie waiting for a parent that is not ours counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def metric(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` in Prometheus ``text`` whose labels include ``labels`` (0 if none)."""
    wanted = [f'{key}="{value}"' for key, value in labels.items()]
    total = 0.0
    for line in text.splitlines():
        series, _, value = line.rpartition(" ")
        if series.startswith(name + "{") and all(label in series for label in wanted):
            total += float(value)
    return total


def hms_properties(uri: str, **extra: str) -> dict[str, str]:
    return {"type": "hms", "hive.metastore.uris": uri, **extra}


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM files), made with ``cryptography`` or else ``openssl``."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    try:
        import cryptography  # noqa: F401
    except ImportError:
        openssl = shutil.which("openssl")
        if openssl is None:
            pytest.skip("making a self-signed certificate needs the cryptography package or the openssl command")
        subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                       check=True, capture_output=True, timeout=60)
        return cert, key
    return _certificate_with_cryptography(cert, key)


def _certificate_with_cryptography(cert: Path, key: Path) -> tuple[Path, Path]:
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(private.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return cert, key


class HoldingRelay:
    """A TCP relay to the metastore that can hold the next request passing through it for a while, so a
    request to the service is surely in flight (waiting on the metastore) when a test acts."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self._upstream = (parts.hostname or "127.0.0.1", parts.port or 9083)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.uri = f"thrift://127.0.0.1:{self._listener.getsockname()[1]}"
        self.holding = threading.Event()
        self._hold = 0.0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._sockets: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._accept, name="relay-accept", daemon=True)]
        self._threads[0].start()

    def hold_next(self, seconds: float) -> None:
        """Hold the next request ``seconds`` before passing it on; ``holding`` is set when it arrives."""
        with self._lock:
            self._hold = seconds
        self.holding.clear()

    def close(self) -> None:
        self._closing.set()
        self._threads[0].join(timeout=5)
        self._listener.close()
        with self._lock:
            sockets, threads = list(self._sockets), list(self._threads[1:])
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(timeout=5)
        for sock in sockets:
            sock.close()

    def __enter__(self) -> HoldingRelay:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                incoming, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            incoming.settimeout(None)
            try:
                outgoing = socket.create_connection(self._upstream, timeout=10)
            except OSError:
                incoming.close()  # the metastore is away: so is this connection
                continue
            outgoing.settimeout(None)
            pumps = [threading.Thread(target=self._pump, args=(incoming, outgoing, True), daemon=True),
                     threading.Thread(target=self._pump, args=(outgoing, incoming, False), daemon=True)]
            with self._lock:
                self._sockets += [incoming, outgoing]
                self._threads += pumps
            for pump in pumps:
                pump.start()

    def _pump(self, source: socket.socket, target: socket.socket, requests: bool) -> None:
        try:
            while chunk := source.recv(65536):
                if requests:
                    with self._lock:
                        hold, self._hold = self._hold, 0.0
                    if hold:
                        self.holding.set()
                        time.sleep(hold)
                target.sendall(chunk)
        except OSError:
            pass  # either side closed: this direction is over
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


# Fixtures ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="package")
def warehouse(spark: Any) -> Iterator[str]:
    """A database written by Spark: ``sales`` (partitioned Parquet, two partitions), ``salaries``, ``other``."""
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    spark.sql(f"CREATE TABLE {DB}.sales (id BIGINT, amount DECIMAL(10,2), tags MAP<STRING, INT>) "
              "PARTITIONED BY (dt STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.sales PARTITION (dt='2024-01-01') VALUES (1, 1.50, map('a', 1))")
    spark.sql(f"INSERT INTO {DB}.sales PARTITION (dt='2024-01-02') VALUES (2, 2.50, NULL)")
    spark.sql(f"CREATE TABLE {DB}.salaries (id INT) STORED AS PARQUET")
    spark.sql(f"CREATE TABLE {DB}.other (id INT) STORED AS PARQUET")
    yield DB
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


@pytest.fixture(scope="package")
def service(tmp_path_factory: pytest.TempPathFactory, warehouse: str) -> Iterator[Server]:
    """The server the API tests share, on a home of its own; stopped when the tests of this package are done,
    so that its catalogs' event followers do not run on through the rest of the suite."""
    with served(tmp_path_factory.mktemp("service") / "home") as running:
        yield running


@pytest.fixture(scope="package")
def api(service: Server, metastore_uri: str) -> Iterator[CatalogServiceClient]:
    """A client of ``service``, whose catalog ``hive`` (following events, with a secret property) is the
    test metastore."""
    opened = service.client()
    opened.create_catalog("hive", hms_properties(metastore_uri, **{"x.password": SECRET}, **EVENTS),
                          comment="the test metastore")
    yield opened
    opened.close()
