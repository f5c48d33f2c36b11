"""A borrowed connection's thrift client, and which failures leave a connection usable.

Kept apart from the pool (:mod:`hms_catalog.client.pool`), which hands these out and takes back or
discards their connections by what :func:`is_application_error` says of a failure.
"""

from __future__ import annotations

from typing import Any

from thrift.protocol.TProtocol import TProtocolException
from thrift.Thrift import TApplicationException, TException
from thrift.transport.TTransport import TTransportException

from hms_catalog.client._transport import Connection
from hms_catalog.client.config import MetastoreUri
from hms_catalog.client.metrics import ClientMetrics
from hms_catalog.client.versions import is_unknown_method

__all__ = ["BorrowedClient", "is_application_error"]


def is_application_error(error: BaseException) -> bool:
    """Whether ``error`` is an answer from the metastore (the connection is still in sync).

    Generated exceptions such as NoSuchObjectException and MetaException derive from TException but not
    from TTransportException; those were read off the wire in full, so the connection stays usable. A
    protocol error (a reply that is not thrift, a half-read message) leaves unread bytes behind: broken.
    """
    if isinstance(error, (TTransportException, TProtocolException)):
        return False
    return isinstance(error, (TApplicationException, TException)) and not isinstance(error, OSError)


class BorrowedClient:
    """The thrift client of one borrowed connection, counting each call by method.

    Any attribute is the thrift method of the same name. A call that fails on transport marks the
    client broken, and the pool then discards its connection. A call the metastore refused as an unknown
    method is counted apart (``unsupported``), neither as a call it answered nor as an error.
    """

    def __init__(self, connection: Connection, metrics: ClientMetrics) -> None:
        self._connection = connection
        self._metrics = metrics
        self.broken = False

    @property
    def uri(self) -> MetastoreUri:
        return self._connection.uri

    @property
    def protocols(self) -> tuple[Any, Any]:
        """The connection's input and output thrift protocols, for a caller that relays a call the bindings do
        not know (a proxy passing bytes through); it marks the client broken itself if the relay fails."""
        client = self._connection.client
        return client._iprot, client._oprot

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._connection.client, name)
        if not callable(method) or name.startswith("_"):
            return method

        def invoke(*args: Any, **kwargs: Any) -> Any:
            try:
                result = method(*args, **kwargs)
            except BaseException as error:
                if is_unknown_method(error):
                    self._metrics.unsupported(name)
                    raise
                self._metrics.call(name)
                self._metrics.error(name)
                if not is_application_error(error):
                    self.broken = True
                raise
            self._metrics.call(name)
            return result

        return invoke
