"""Calls the bindings do not know, relayed byte for byte to the primary metastore.

The bindings are Hive 4's; a Hive 2 or 3 client may call a method Hive 4 removed (the index calls, for
one). Rather than answer "Invalid method name", the endpoint reads the call's argument struct as raw bytes
(by skipping it through a transport that keeps what it reads), writes them to a pooled connection of the
primary metastore under the same name, and copies the reply back the same way. Nothing is renamed, so
such a call reaches the primary's own databases only; a change the endpoint cannot recognise is refused.
"""

from __future__ import annotations

from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport.TTransport import TTransportBase

from hms_catalog.client.metastore import MetastoreClient

__all__ = ["relay_call", "refuse_call"]


class _Recording(TTransportBase):
    """Reads through to ``inner`` and keeps every byte read."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.kept = bytearray()

    def read(self, size: int) -> bytes:
        data: bytes = self.inner.read(size)
        self.kept += data
        return data

    def readAll(self, size: int) -> bytes:  # noqa: N802 - thrift's name
        data: bytes = self.inner.readAll(size)
        self.kept += data
        return data


def _raw_struct(protocol: Any) -> bytes:
    recording = _Recording(protocol.trans)
    TBinaryProtocol(recording).skip(TType.STRUCT)
    return bytes(recording.kept)


def relay_call(client: MetastoreClient, name: str, kind: int, seqid: int, iprot: Any, oprot: Any) -> None:
    """Relay one call whose message header was read from ``iprot``; answer on ``oprot``."""
    arguments = _raw_struct(iprot)
    iprot.readMessageEnd()
    with client.pool.borrow() as borrowed:
        upstream_in, upstream_out = borrowed.protocols
        try:
            upstream_out.writeMessageBegin(name, kind, 0)
            upstream_out.trans.write(arguments)
            upstream_out.writeMessageEnd()
            upstream_out.trans.flush()
            _, reply_kind, _ = upstream_in.readMessageBegin()
            reply = _raw_struct(upstream_in)
            upstream_in.readMessageEnd()
        except BaseException:
            borrowed.broken = True
            raise
    oprot.writeMessageBegin(name, reply_kind, seqid)
    oprot.trans.write(reply)
    oprot.writeMessageEnd()
    oprot.trans.flush()


def refuse_call(name: str, seqid: int, iprot: Any, oprot: Any, reason: str) -> None:
    """Skip the call's arguments and answer it with an application error saying ``reason``."""
    iprot.skip(TType.STRUCT)
    iprot.readMessageEnd()
    error = TApplicationException(TApplicationException.UNKNOWN_METHOD, reason)
    oprot.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
    error.write(oprot)
    oprot.writeMessageEnd()
    oprot.trans.flush()
