"""The thrift bindings of the metastore API, in one place, so that every module speaks the same ones.

The bindings are those pyiceberg ships as the ``hive_metastore`` package, generated from Hive 4's
``hive_metastore.thrift``: their request structs carry the metastore catalog (``catName``), they have the
``_req`` calls Hive 4 still answers, and they read what a Hive 2.3 metastore sends just as well (a field
an older metastore does not know stays ``None``; one it sends that they lack is skipped). hmsclient's
bindings stop at Hive 2.3 and lack all of that.

Structs of two binding families must not be mixed in one call (the encoder reads one family's field
list from the other's objects), which is why nothing imports ``ttypes`` from anywhere else.

One call the bindings lack, ``get_partitions_by_filter_req`` (Hive 4.0), is added by
:class:`MetastoreThriftClient`, with its request struct as Hive 4 declares it.
"""

from __future__ import annotations

from typing import Any

from hive_metastore import ThriftHiveMetastore, ttypes
from thrift.protocol.TProtocol import TProtocolBase
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TTransport

__all__ = ["GetPartitionsByFilterRequest", "MetastoreThriftClient", "ttypes"]


class _Struct:
    """A thrift struct read and written from its ``thrift_spec`` alone, as generated structs are."""

    thrift_spec: tuple[Any, ...] = (None,)

    def __init__(self, **values: Any) -> None:
        for field in self.thrift_spec:
            if field is not None:
                setattr(self, field[2], values.pop(field[2], field[4]))
        if values:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(sorted(values))}")

    def read(self, iprot: TProtocolBase) -> None:
        if iprot._fast_decode is not None and isinstance(iprot.trans, TTransport.CReadableTransport):
            iprot._fast_decode(self, iprot, [self.__class__, self.thrift_spec])
        else:
            iprot.readStruct(self, self.thrift_spec)

    def write(self, oprot: TProtocolBase) -> None:
        if oprot._fast_encode is not None:
            oprot.trans.write(oprot._fast_encode(self, [self.__class__, self.thrift_spec]))
        else:
            oprot.writeStruct(self, self.thrift_spec)

    def __repr__(self) -> str:
        fields = ", ".join(f"{field[2]}={getattr(self, field[2])!r}" for field in self.thrift_spec if field is not None)
        return f"{type(self).__name__}({fields})"


class GetPartitionsByFilterRequest(_Struct):
    """``struct GetPartitionsByFilterRequest`` of Hive 4.0 (catalog, database, table, filter, limit)."""

    thrift_spec = (
        None,
        (1, TType.STRING, "catName", "UTF8", None),
        (2, TType.STRING, "dbName", "UTF8", None),
        (3, TType.STRING, "tblName", "UTF8", None),
        (4, TType.STRING, "filter", "UTF8", None),
        (5, TType.I16, "maxParts", None, -1),
    )


class _FilterReqArgs(_Struct):
    thrift_spec = (None, (1, TType.STRUCT, "req", [GetPartitionsByFilterRequest, GetPartitionsByFilterRequest.thrift_spec], None))


class _FilterReqResult(_Struct):
    success: list[Any] | None
    o1: BaseException | None
    o2: BaseException | None
    thrift_spec = (
        (0, TType.LIST, "success", (TType.STRUCT, [ttypes.Partition, ttypes.Partition.thrift_spec], False), None),
        (1, TType.STRUCT, "o1", [ttypes.MetaException, ttypes.MetaException.thrift_spec], None),
        (2, TType.STRUCT, "o2", [ttypes.NoSuchObjectException, ttypes.NoSuchObjectException.thrift_spec], None),
    )


class MetastoreThriftClient(ThriftHiveMetastore.Client):
    """The generated client plus ``get_partitions_by_filter_req``."""

    def get_partitions_by_filter_req(self, req: GetPartitionsByFilterRequest) -> list[Any]:
        self._oprot.writeMessageBegin("get_partitions_by_filter_req", TMessageType.CALL, self._seqid)
        _FilterReqArgs(req=req).write(self._oprot)
        self._oprot.writeMessageEnd()
        self._oprot.trans.flush()
        iprot = self._iprot
        _name, kind, _seqid = iprot.readMessageBegin()
        if kind == TMessageType.EXCEPTION:
            error = TApplicationException()
            error.read(iprot)
            iprot.readMessageEnd()
            raise error
        result = _FilterReqResult()
        result.read(iprot)
        iprot.readMessageEnd()
        if result.success is not None:
            return list(result.success)
        for raised in (result.o1, result.o2):
            if raised is not None:
                raise raised
        raise TApplicationException(TApplicationException.MISSING_RESULT, "get_partitions_by_filter_req failed: unknown result")
