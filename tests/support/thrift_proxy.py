"""A thrift proxy that answers chosen metastore methods as a server without them does.

Hive 4.0.1 removed ``get_table`` and ``get_table_objects_by_name`` (HIVE-26537) and metastores before 2.3
lack the ``_req`` forms; neither can run here, so tests put this proxy in front of the embedded Hive 2.3
metastore. It finds message boundaries by skipping each message's struct (it never decodes arguments), so a
refused call is answered on its own connection and that connection stays usable, as on a real server.

It speaks what the project's client sends: unframed, strict ``TBinaryProtocol``.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import Counter
from typing import Any, BinaryIO, NamedTuple

from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TTransport

__all__ = ["HIVE4_REMOVED", "HIVE21_MISSING", "Message", "RefusingProxy", "read_message", "unknown_method_reply"]

# Hive 4.0.1 dropped these two in favour of get_table_req and get_table_objects_by_name_req (HIVE-26537).
HIVE4_REMOVED = frozenset({"get_table", "get_table_objects_by_name"})

# The ``_req`` methods a Hive 2.1 metastore does not have: those of the client's bindings (generated
# from Hive 4's thrift) and get_partitions_by_filter_req, which the client adds. The four ``_req``
# methods of Hive 2.3's thrift left out (add_partitions_req, drop_partitions_req,
# get_table_statistics_req, get_partitions_statistics_req) date from Hive 0.13; a 2.1 server answers them.
HIVE21_MISSING = frozenset(
    {
        # Added in Hive 2.3 by HIVE-15062: the pair a 2.3 client uses that breaks against older servers.
        "get_table_req",
        "get_table_objects_by_name_req",
        # Added in Hive 3 or 4. The 2.3 upstream refuses them itself, with the same reply; listing them
        # makes the proxy count them and not depend on that.
        "alter_partitions_req",
        "alter_table_req",
        "create_table_req",
        "drop_database_req",
        "get_database_req",
        "get_dataconnector_req",
        "get_fields_req",
        "get_open_txns_req",
        "get_partition_names_ps_req",
        "get_partition_names_req",
        "get_partition_req",
        "get_partitions_by_filter_req",
        "get_partitions_by_names_req",
        "get_partitions_ps_with_auth_req",
        "get_partitions_req",
        "get_partitions_with_specs",
        "get_schema_req",
        "rename_partition_req",
        "truncate_table_req",
        "update_partition_column_statistics_req",
        "update_table_column_statistics_req",
    }
)

_JOIN_TIMEOUT = 5.0
_ACCEPT_POLL = 0.05


class Message(NamedTuple):
    """One whole thrift message as it went over the wire: its header and every byte of it."""

    name: str
    type: int
    seqid: int
    data: bytes


class _RecordingTransport(TTransport.TTransportBase):
    """Reads from a socket's stream and keeps every byte read, so that a skipped message can be passed on."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.recorded = bytearray()

    def isOpen(self) -> bool:  # noqa: N802 - thrift's name
        return True

    def read(self, sz: int) -> bytes:
        chunk = self._stream.read(sz)
        if not chunk:
            raise TTransport.TTransportException(TTransport.TTransportException.END_OF_FILE, "the peer closed the connection")
        self.recorded += chunk
        return chunk


class _SkippingProtocol(TBinaryProtocol.TBinaryProtocol):
    """Skips strings as bytes: the stock skip decodes them as UTF-8, which a ``binary`` field need not be."""

    def skip(self, ttype: int, max_depth: int = 64) -> None:
        if ttype == TType.STRING:
            self.readBinary()
        else:
            super().skip(ttype, max_depth)


def read_message(stream: BinaryIO) -> Message | None:
    """Read one whole message (header, then its struct) from ``stream``; ``None`` when the stream ends before it.

    A stream that ends inside a message raises ``TTransportException``."""
    transport = _RecordingTransport(stream)
    protocol = _SkippingProtocol(transport, strictRead=False, string_length_limit=None)
    try:
        name, kind, seqid = protocol.readMessageBegin()
    except TTransport.TTransportException:
        if transport.recorded:
            raise
        return None
    protocol.skip(TType.STRUCT)
    protocol.readMessageEnd()
    return Message(name, kind, seqid, bytes(transport.recorded))


def unknown_method_reply(name: str, seqid: int) -> bytes:
    """The reply thrift's Java processor (so Hive's) writes for a method it does not have."""
    buffer = TTransport.TMemoryBuffer()
    protocol = TBinaryProtocol.TBinaryProtocol(buffer, strictWrite=True)
    protocol.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
    TApplicationException(TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{name}'").write(protocol)
    protocol.writeMessageEnd()
    return buffer.getvalue()


class RefusingProxy:
    """A TCP proxy on 127.0.0.1 to one metastore that refuses the methods in ``refuse``.

    Each client connection gets its own upstream connection and thread. Every other call is passed on
    byte for byte and its whole reply relayed back. ``seen`` and ``refused`` count method names.
    """

    def __init__(self, upstream: tuple[str, int], refuse: frozenset[str] | set[str], *, connect_timeout: float = 5.0) -> None:
        self.upstream = upstream
        self.refuse = frozenset(refuse)
        self._connect_timeout = connect_timeout
        self._lock = threading.Lock()
        self._seen: Counter[str] = Counter()
        self._refused: Counter[str] = Counter()
        self._closing = threading.Event()
        self._threads: list[threading.Thread] = []
        self._live: set[socket.socket] = set()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen()
        self._listener.settimeout(_ACCEPT_POLL)  # the accept loop looks at _closing this often
        self.port: int = self._listener.getsockname()[1]
        self.uri = f"thrift://127.0.0.1:{self.port}"
        self._acceptor = threading.Thread(target=self._accept, name=f"thrift-proxy-{self.port}-accept", daemon=True)
        self._started = False

    @property
    def seen(self) -> Counter[str]:
        """A snapshot of the method names received, refused ones included."""
        with self._lock:
            return Counter(self._seen)

    @property
    def refused(self) -> Counter[str]:
        """A snapshot of the method names answered with UNKNOWN_METHOD by the proxy itself."""
        with self._lock:
            return Counter(self._refused)

    @property
    def threads(self) -> list[threading.Thread]:
        """The proxy's threads still alive (none once closed)."""
        with self._lock:
            candidates = [self._acceptor, *self._threads]
        return [thread for thread in candidates if thread.is_alive()]

    def start(self) -> RefusingProxy:
        """Start accepting (the port is bound already, so ``uri`` is known before); a closed proxy cannot restart."""
        if self._closing.is_set():
            raise RuntimeError("the proxy is closed")
        if not self._started:
            self._started = True
            self._acceptor.start()
        return self

    def close(self) -> None:
        """Stop accepting, cut every connection, and wait for the threads; closing twice is harmless."""
        self._closing.set()
        deadline = time.monotonic() + _JOIN_TIMEOUT
        if self._started:
            self._acceptor.join(_JOIN_TIMEOUT)
        self._listener.close()
        with self._lock:
            live = list(self._live)
            threads = list(self._threads)
        for sock in live:
            # Wakes a thread blocked reading either side; the thread itself closes the socket. OSError: it
            # was shut down already, or closed by its thread meanwhile.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> RefusingProxy:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # the listener was closed
            client.settimeout(None)
            with self._lock:
                if self._closing.is_set():
                    client.close()
                    return
                self._live.add(client)
                thread = threading.Thread(
                    target=self._serve, args=(client,), name=f"thrift-proxy-{self.port}-conn-{len(self._threads) + 1}", daemon=True
                )
                self._threads.append(thread)
            thread.start()

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            upstream = socket.create_connection(self.upstream, timeout=self._connect_timeout)
            upstream.settimeout(None)
            with self._lock:
                self._live.add(upstream)
                closing = self._closing.is_set()
            if closing:
                return
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with client.makefile("rb") as from_client, upstream.makefile("rb") as from_upstream:
                self._relay(client, from_client, upstream, from_upstream)
        except (OSError, EOFError, TTransport.TTransportException):
            pass  # a peer went away mid-message, or the proxy is closing: this connection is over either way
        finally:
            with self._lock:
                self._live.discard(client)
                if upstream is not None:
                    self._live.discard(upstream)
            client.close()
            if upstream is not None:
                upstream.close()

    def _relay(self, client: socket.socket, from_client: BinaryIO, upstream: socket.socket, from_upstream: BinaryIO) -> None:
        while (request := read_message(from_client)) is not None:
            refused = request.name in self.refuse
            with self._lock:
                self._seen[request.name] += 1
                if refused:
                    self._refused[request.name] += 1
            if refused:
                # Java's processor answers an unknown method even when the call was oneway; so do we.
                client.sendall(unknown_method_reply(request.name, request.seqid))
                continue
            upstream.sendall(request.data)
            if request.type == TMessageType.ONEWAY:
                continue
            reply = read_message(from_upstream)
            if reply is None:
                return
            client.sendall(reply.data)
