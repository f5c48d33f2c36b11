"""The data phase of a SASL connection, on either side: every thrift message in a 4-byte length frame,
wrapped by the negotiated security layer (signed or sealed, or as it is).

Shared by the catalog's metastore client (:mod:`hms_catalog.client._sasl`) and by any server that accepts
SASL clients, so both ends frame, bound and fail the same way. Readable by thrift's accelerated binary
protocol (``CReadableTransport``), as the plain buffered transport is.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from io import BytesIO

from thrift.transport import TTransport

__all__ = ["MAX_FRAME_BYTES", "SaslFrames"]

MAX_FRAME_BYTES = 256 << 20

Layer = Callable[[bytes], bytes]


class SaslFrames(TTransport.TTransportBase, TTransport.CReadableTransport):
    """Frames over the open ``inner`` transport; ``wrap`` and ``unwrap`` apply the negotiated layer to each."""

    def __init__(self, inner: TTransport.TTransportBase, wrap: Layer, unwrap: Layer) -> None:
        self._inner = inner
        self._wrap = wrap
        self._unwrap = unwrap
        self._write_buffer = BytesIO()
        self._read_buffer = BytesIO(b"")

    def isOpen(self) -> bool:  # noqa: N802 - thrift's name
        return bool(self._inner.isOpen())

    def close(self) -> None:
        self._inner.close()

    def write(self, data: bytes) -> None:
        self._write_buffer.write(data)

    def flush(self) -> None:
        payload = _protected("wrap", self._wrap, self._write_buffer.getvalue())
        self._write_buffer = BytesIO()
        self._inner.write(struct.pack("!i", len(payload)) + payload)
        self._inner.flush()

    def read(self, size: int) -> bytes:
        data = self._read_buffer.read(size)
        if data:
            return bytes(data)
        self._read_frame()
        return bytes(self._read_buffer.read(size))

    @property
    def cstringio_buf(self) -> BytesIO:
        return self._read_buffer

    def cstringio_refill(self, partialread: bytes, reqlen: int) -> BytesIO:
        # Called by the accelerated protocol once the buffer is used up: read frames until it has enough.
        data = partialread
        while len(data) < reqlen:
            self._read_frame()
            data += self._read_buffer.getvalue()
        self._read_buffer = BytesIO(data)
        return self._read_buffer

    def _read_frame(self) -> None:
        (length,) = struct.unpack("!i", self._inner.readAll(4))
        if not 0 <= length <= MAX_FRAME_BYTES:
            raise TTransport.TTransportException(TTransport.TTransportException.SIZE_LIMIT,
                                                 f"a SASL frame of {length} bytes is out of bounds")
        self._read_buffer = BytesIO(_protected("unwrap", self._unwrap, self._inner.readAll(length)))


def _protected(what: str, step: Layer, data: bytes) -> bytes:
    """A wrap or unwrap whose failure is a transport error: the connection is out of step, and ends (a client's
    pool discards it and retries elsewhere, as after any broken connection)."""
    try:
        return step(data)
    except Exception as error:
        raise TTransport.TTransportException(TTransport.TTransportException.UNKNOWN,
                                             f"SASL {what} failed: {error}") from error
