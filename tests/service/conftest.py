"""Real ``hms-catalog serve`` processes for the service's end-to-end tests, and what the tests share.

:func:`served` starts a server on a home, finds it by the line it prints before taking requests, waits
until ``/v1/health`` answers, and on exit stops it and checks that nothing outlived it: no process of its,
no listening port, no traceback on its stderr. Most API tests share one server (``service``) over one
Spark-written warehouse (``warehouse``); the DDL tests share another (``ddl_service``), started with named
tokens and needing no Spark; only the lifecycle tests start servers of their own.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from hms_catalog.remote import CatalogServiceClient
from tests.support.service import Server, served, tokens_file

# Catalog properties of a catalog that follows the metastore's notification log, quickly.
EVENTS = {"hive.enable_hms_events_incremental_sync": "true", "hive.hms_events_polling_interval_ms": "200"}
SECRET = "hunter2-not-to-be-shown"
DB = f"svc{os.getpid()}"
# The named tokens of ``ddl_service``: one that reads, one that may change catalog ``hive`` only.
READ_TOKEN = "read-only-token-of-the-tests-0001"
WRITE_TOKEN = "etl-token-of-the-tests-for-hive-0002"
TOKENS = {"tokens": [{"name": "ro", "token": READ_TOKEN, "access": "read", "catalogs": ["*"]},
                     {"name": "etl", "token": WRITE_TOKEN, "access": "write", "catalogs": ["hive"]}]}


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


@pytest.fixture(scope="package")
def ddl_service(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str) -> Iterator[Server]:
    """A server started with ``--tokens`` (``ro`` reads, ``etl`` changes ``hive`` only), whose catalogs ``hive``
    and ``other`` are both the test metastore (without event following: the DDLs' own bookkeeping is tested)."""
    directory = tmp_path_factory.mktemp("ddl")
    tokens = tokens_file(directory / "tokens.json", TOKENS)
    with served(directory / "home", "--tokens", str(tokens)) as running:
        client = running.client()
        try:
            for name in ("hive", "other"):
                client.create_catalog(name, hms_properties(metastore_uri))
        finally:
            client.close()
        yield running
