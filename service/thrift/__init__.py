"""The service as a Hive Metastore: a thrift endpoint that every engine speaking the metastore API can use.

One ThriftHiveMetastore server beside the REST API, on the same catalogs, caches and versions. The catalogs
of the home appear as one metastore (federation, :mod:`.names`); reads are answered from the warm caches
(:mod:`.reads`); every other call is forwarded to the metastore that owns its object (:mod:`.forwarder`),
and changes become catalog events (:mod:`.changes`).
"""

from __future__ import annotations

from service.thrift.server import ThriftEndpoint, ThriftSettings

__all__ = ["ThriftEndpoint", "ThriftSettings"]
