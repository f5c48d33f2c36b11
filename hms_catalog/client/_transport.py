"""The only module that opens thrift transports to a metastore.

The socket is connected by hand (not through ``TSocket.open``) so that a refused or unreachable URI
raises one plain ``OSError`` without thrift logging a traceback for every address it tried; after that
the socket timeout bounds every read and write of every call.
"""

from __future__ import annotations

import contextlib
import socket

from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from hms_catalog.client.hive_thrift import MetastoreThriftClient
from hms_catalog.properties import MetastoreUri

__all__ = ["Connection", "open_connection"]


class Connection:
    """One open thrift connection to one metastore URI."""

    def __init__(self, uri: MetastoreUri, transport: TTransport.TTransportBase, client: MetastoreThriftClient):
        self.uri = uri
        self.client = client
        self._transport = transport

    def close(self) -> None:
        """Close the transport; closing twice is harmless."""
        with contextlib.suppress(OSError):
            self._transport.close()


def open_connection(uri: MetastoreUri, *, connect_timeout: float, socket_timeout: float) -> Connection:
    """Connect to ``uri``; raises ``OSError`` (refused, unreachable, timed out) when it cannot."""
    sock = socket.create_connection((uri.host, uri.port), timeout=connect_timeout)
    sock.settimeout(socket_timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    thrift_socket = TSocket.TSocket(uri.host, uri.port)
    thrift_socket.setHandle(sock)
    transport = TTransport.TBufferedTransport(thrift_socket)
    protocol = TBinaryProtocol.TBinaryProtocolAccelerated(transport)
    return Connection(uri, transport, MetastoreThriftClient(protocol))
