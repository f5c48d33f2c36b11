"""Where a ``get_partitions_by_filter`` answer's time goes: the metastore computing it, the bytes crossing, decoding.

The filter the planner sent (from its plan's notes) is sent again on a raw thrift connection whose transport notes
when the answer's first byte arrives and keeps every byte. The metastore writes its answer only once it has it all,
so the first byte marks the end of its work (its direct SQL and building the objects); the rest is the transfer with
the client's decoding interleaved. The kept bytes are then decoded again from memory, alone, with the accelerated
protocol the project's client uses: that is the client's own share (the garbage collector paused).
"""

from __future__ import annotations

import gc
import time
from typing import Any

from _scale_memory import mib
from _scale_table import DATABASE, TABLE
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TTransport

from hms_catalog.client.hive_thrift import MetastoreThriftClient

__all__ = ["anatomy", "sent_filter"]

_MARK = "metastore narrowed by filter "


class _Recording(TTransport.TTransportBase):
    def __init__(self, inner: TSocket.TSocket) -> None:
        self.inner = inner
        self.first: float | None = None
        self.chunks: list[bytes] = []

    def isOpen(self) -> bool:  # noqa: N802 - thrift's name
        return bool(self.inner.isOpen())

    def open(self) -> None:
        self.inner.open()

    def close(self) -> None:
        self.inner.close()

    def read(self, size: int) -> bytes:
        data = self.inner.read(size)
        if self.first is None:
            self.first = time.perf_counter()
        self.chunks.append(data)
        return data

    def write(self, buf: bytes) -> None:
        self.inner.write(buf)

    def flush(self) -> None:
        self.inner.flush()


def sent_filter(notes: list[str]) -> str | None:
    """The filter a plan's notes say the metastore was asked, if it was asked one."""
    return next((note[len(_MARK):] for note in notes if note.startswith(_MARK)), None)


def anatomy(port: int, expression: str) -> dict[str, Any]:
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(3_600_000)
    recording = _Recording(sock)
    transport = TTransport.TBufferedTransport(recording)
    transport.open()
    try:
        client = MetastoreThriftClient(TBinaryProtocolAccelerated(transport))
        started = time.perf_counter()
        client.send_get_partitions_by_filter(DATABASE, TABLE, expression, -1)
        sent = time.perf_counter()
        partitions = client.recv_get_partitions_by_filter()
        done = time.perf_counter()
    finally:
        transport.close()
    answer = b"".join(recording.chunks)
    gc.collect()
    gc.disable()  # the collector's passes over the first answer's objects are not the decoding's
    try:
        decoding = time.perf_counter()
        again = MetastoreThriftClient(TBinaryProtocolAccelerated(TTransport.TMemoryBuffer(answer))).recv_get_partitions_by_filter()
        decode_seconds = time.perf_counter() - decoding
    finally:
        gc.enable()
    assert recording.first is not None and len(again) == len(partitions)
    return {"filter": expression, "partitions": len(partitions), "seconds": round(done - started, 3),
            "metastore_seconds": round(recording.first - sent, 3), "transfer_and_decode_seconds": round(done - recording.first, 3),
            "decode_alone_seconds": round(decode_seconds, 3), "answer_mib": mib(len(answer)),
            "answer_bytes_per_partition": round(len(answer) / max(1, len(partitions)))}
