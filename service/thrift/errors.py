"""The catalog's errors as the metastore's own exceptions, of the kinds each call declares.

The generated processor answers an exception only when the call declares its type (``get_table`` declares
MetaException and NoSuchObjectException); anything else becomes an anonymous "Internal error". So a
missing object is a NoSuchObjectException where the call declares one and a MetaException otherwise, and
every other failure is a MetaException carrying the catalog's message (which never holds a secret); a call
that declares no exception gets an application error with that message (not the processor's bare
"Internal error").
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from hive_metastore import ThriftHiveMetastore
from thrift.Thrift import TApplicationException, TException

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import ErrorKind, HmsCatalogError, kind_of

__all__ = ["EndpointRefusal", "THRIFT_OF_KIND", "declared_exceptions", "metastore_exception", "translated"]

_log = logging.getLogger(__name__)
_Call = TypeVar("_Call", bound=Callable[..., Any])


class EndpointRefusal(HmsCatalogError):
    """The endpoint will not do what was asked: a change to a read-only catalog (``forbidden``), a call it
    cannot route (``unsupported``)."""

    error_kind = ErrorKind.FORBIDDEN

    def __init__(self, message: str, kind: ErrorKind = ErrorKind.FORBIDDEN) -> None:
        super().__init__(message)
        self.error_kind = kind  # type: ignore[misc]


# Every kind's exceptions, the first one the call declares answering; MetaException otherwise
# (tests/service/test_error_model.py checks that no kind is missing). A refusal of access is a MetaException, as
# HMS's own authorizer answers one; an invalid request is what HMS answers its own: InvalidOperation or InvalidObject.
_META = (ttypes.MetaException,)
_INVALID = (ttypes.InvalidOperationException, ttypes.InvalidObjectException, ttypes.MetaException)
THRIFT_OF_KIND: dict[ErrorKind, tuple[type[TException], ...]] = {
    ErrorKind.INVALID: _INVALID,
    ErrorKind.UNSUPPORTED: _INVALID,
    ErrorKind.FORBIDDEN: _META,
    ErrorKind.NOT_FOUND: (ttypes.NoSuchObjectException, ttypes.MetaException),
    ErrorKind.ALREADY_EXISTS: (ttypes.AlreadyExistsException, ttypes.MetaException),
    ErrorKind.CONFLICT: _META,
    ErrorKind.STALE: _META,
    ErrorKind.UPSTREAM_REFUSED: _META,
    ErrorKind.UNAVAILABLE: _META,
    ErrorKind.TIMED_OUT: _META,
    ErrorKind.INTERNAL: _META,
}


@functools.cache
def declared_exceptions(method: str) -> tuple[type[BaseException], ...]:
    result = getattr(ThriftHiveMetastore, f"{method}_result", None)
    if result is None:
        return ()
    return tuple(field[3][0] for field in result.thrift_spec if field is not None and field[2] != "success")


def metastore_exception(method: str, error: BaseException) -> TException:
    """The exception to answer ``method``'s caller with for ``error``."""
    declared = declared_exceptions(method)
    message = str(error) or type(error).__name__
    for answer in THRIFT_OF_KIND[kind_of(error)]:
        if answer in declared:
            return answer(message=message)  # type: ignore[call-arg]
    # A call that declares none of them (every kind ends in MetaException, so it declares no MetaException).
    if isinstance(error, EndpointRefusal) and declared:  # a refused transaction call: its own kind, saying why
        return declared[0](message=message)  # type: ignore[call-arg]
    # not for a failure: a NoSuchLockException for an outage would tell the client its lock is gone
    return TApplicationException(TApplicationException.INTERNAL_ERROR, message)


def translated(method: str) -> Callable[[_Call], _Call]:
    """Answer the metastore's own exceptions as they are, and the catalog's as :func:`metastore_exception`."""

    def decorate(call: _Call) -> _Call:
        @functools.wraps(call)
        def answering(*args: Any, **kwargs: Any) -> Any:
            try:
                return call(*args, **kwargs)
            except TException:
                raise  # the metastore's own answer (forwarded), or one made here
            except HmsCatalogError as error:
                raise metastore_exception(method, error) from error
            except Exception as error:
                _log.exception("thrift %s failed", method)
                raise metastore_exception(method, error) from error

        return answering  # type: ignore[return-value]

    return decorate
