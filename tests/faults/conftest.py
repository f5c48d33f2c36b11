"""A metastore of the faults suite's own, which its tests may stop, restart and fill as they please.

It listens on a fixed port below the kernel's ephemeral range, so it comes back where its clients look
for it after a restart and no outgoing connection of this machine can be holding that port meanwhile.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hms_catalog.client import HmsClientPool
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris
from tests.support import hms

_PORTS = range(21000, 32000)  # below /proc/sys/net/ipv4/ip_local_port_range's default 32768


def _quiet_port() -> int:
    """A port nothing uses, not even a socket in TIME_WAIT (bound without SO_REUSEADDR to make sure)."""
    first = _PORTS.start + os.getpid() % len(_PORTS)
    for offset in range(len(_PORTS)):
        port = _PORTS.start + (first - _PORTS.start + offset) % len(_PORTS)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


class FaultsMetastore:
    """The faults suite's embedded metastore: where it is, and a restart that keeps that place."""

    def __init__(self, directory: Path, port: int) -> None:
        self.server = EmbeddedMetastore(directory, port)
        self.uri = f"thrift://127.0.0.1:{port}"

    @property
    def warehouse(self) -> Path:
        return self.server.warehouse

    def start(self) -> float:
        """Start the server; returns the seconds it took."""
        started = time.monotonic()
        self.server.start()
        return time.monotonic() - started

    def stop(self) -> None:
        self.server.stop()

    def ensure_running(self) -> None:
        """Start it again if a test left it stopped (so a failed restart test fails alone)."""
        if not self.server.status().running:
            self.start()


@pytest.fixture(scope="package")
def faults_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultsMetastore]:
    server = FaultsMetastore(tmp_path_factory.mktemp("faults-metastore"), _quiet_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def faults_server(faults_metastore: FaultsMetastore) -> FaultsMetastore:
    """The faults metastore, running."""
    faults_metastore.ensure_running()
    return faults_metastore


@pytest.fixture(scope="package")
def faults_admin(faults_metastore: FaultsMetastore) -> Iterator[hms.Admin]:
    """A thrift client for arranging data in the faults metastore, with retries to ride out its restart."""
    pool = HmsClientPool(ClientConfig(uris=parse_uris(faults_metastore.uri), pool_size=2, retries=10, retry_delay=0.5))
    yield hms.Admin(pool, faults_metastore.warehouse)
    pool.close()


@pytest.fixture
def refused_uri() -> str:
    """A local port nothing listens on (below the ephemeral range, so no connection of ours takes it)."""
    return f"thrift://127.0.0.1:{_quiet_port()}"


@pytest.fixture
def unaccepted_uri() -> Iterator[str]:
    """A metastore too busy to accept: its accept queue is full, so a new connection is never set up."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    address = server.getsockname()
    queued: list[socket.socket] = []
    try:
        while True:  # fill the queue until a connection attempt is left waiting
            probe = socket.socket()
            probe.settimeout(0.2)
            try:
                probe.connect(address)
            except OSError:
                probe.close()
                break
            queued.append(probe)
            assert len(queued) < 64, "the accept queue never filled"
        yield f"thrift://127.0.0.1:{address[1]}"
    finally:
        for probe in queued:
            probe.close()
        server.close()
