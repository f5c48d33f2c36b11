"""An in-process thrift endpoint over a temporary home whose catalogs reach the session's embedded metastore.

``hive`` (the primary) and ``other`` are two catalogs on the one metastore of the test session (two
metastores cost a second JVM per run; federation is about names and routing, which two catalogs exercise
the same way); ``down`` points at a closed port, for the failure paths. The raw thrift client is the
generated one, as any engine's client is.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from hms_catalog.client.hive_thrift import MetastoreThriftClient
from hms_catalog.manager import CatalogManager
from hms_catalog.state import open_definitions
from service.audit import AuditLog
from service.thrift import ThriftEndpoint, ThriftSettings

__all__ = ["Endpoint", "thrift_client"]


class Endpoint:
    def __init__(self, home: Path, metastore_uri: str, *, refused_uri: str | None = None) -> None:
        self.home = home
        self.manager = CatalogManager(open_definitions(home, None))
        base = {"type": "hms", "hive.metastore.uris": metastore_uri, "hive.metastore.failure.retries": "0"}
        self.manager.create("hive", {**base, "thrift.access": "write"})
        self.manager.create("other", base)
        if refused_uri is not None:
            self.manager.create("down", {**base, "hive.metastore.uris": refused_uri,
                                         "hive.metastore.client.connect.timeout": "1"})
        self.audit_path = home / "audit.log"
        self.endpoint = ThriftEndpoint(self.manager, AuditLog(self.audit_path), ThriftSettings(port=0)).start()
        self.port = self.endpoint.address[1]

    def close(self) -> None:
        self.endpoint.stop()
        self.manager.close()


@contextlib.contextmanager
def thrift_client(port: int, *, framed: bool = False, timeout_ms: int = 30_000) -> Iterator[MetastoreThriftClient]:
    socket = TSocket.TSocket("127.0.0.1", port)
    socket.setTimeout(timeout_ms)
    transport = TTransport.TFramedTransport(socket) if framed else TTransport.TBufferedTransport(socket)
    transport.open()
    try:
        yield MetastoreThriftClient(TBinaryProtocol.TBinaryProtocol(transport))
    finally:
        transport.close()


@pytest.fixture
def endpoint(home: Path, metastore_uri: str, refused_uri: str) -> Iterator[Endpoint]:
    opened = Endpoint(home, metastore_uri, refused_uri=refused_uri)
    yield opened
    opened.close()


@pytest.fixture
def direct(metastore_uri: str) -> Iterator[MetastoreThriftClient]:
    """The generated client on the metastore itself, to compare the endpoint's answers with its own."""
    port = int(metastore_uri.rsplit(":", 1)[1])
    with thrift_client(port) as client:
        yield client
