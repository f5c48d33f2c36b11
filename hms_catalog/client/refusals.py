"""The metastore's thrift exceptions as the catalog's errors, in one place.

Every path that calls the metastore (the catalog's own client, and pyiceberg's HiveCatalog that the Iceberg REST
endpoint commits through) turns the same exception into the same error of the one hierarchy, so each front end
answers it by its kind: a name or an operation the metastore refuses as invalid is a bad request, a missing object
is not found, a metastore that cannot be reached is unavailable. An object that exists already stays a
MetastoreError whose cause the caller reads, since only the caller knows which of the call's objects that is.

The metastore's exception rides along as the error's cause and is never modified. That is also why
:class:`CatalogErrors` exists: generated thrift exceptions are immutable, and contextlib's context managers (the
locks and change contexts a change passes through) set the traceback of an exception that leaves them, which an
immutable one refuses with a TypeError that would hide the metastore's answer.
"""

from __future__ import annotations

from types import TracebackType

from thrift.Thrift import TException
from thrift.transport.TTransport import TTransportException

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import (
    HmsCatalogError,
    MetastoreError,
    MetastoreRejectedError,
    MetastoreUnavailableError,
    NotFoundError,
)

__all__ = ["CatalogErrors", "catalog_error"]

_REJECTED = (ttypes.InvalidObjectException, ttypes.InvalidOperationException, ttypes.InvalidInputException,
             ttypes.InvalidPartitionException, ttypes.ConfigValSecurityException)
_MISSING = (ttypes.NoSuchObjectException, ttypes.UnknownDBException, ttypes.UnknownTableException,
            ttypes.UnknownPartitionException)


def _said(error: TException) -> str:
    return getattr(error, "message", None) or str(error) or type(error).__name__


def catalog_error(method: str, error: TException, missing: tuple[str, str] | None = None) -> HmsCatalogError:
    """The catalog's error for the metastore's ``error`` answering ``method``; raise it ``from error``.

    ``missing`` (kind, name) is what a missing-object answer means for this call; without it, such an answer to a
    call that names no single object is the metastore's failure, not the caller's.
    """
    said = _said(error)
    if isinstance(error, _MISSING):
        if missing is None and isinstance(error, ttypes.NoSuchObjectException):
            return MetastoreError(f"{method}: {said}")
        kind, name = missing or ("object", "?")
        return NotFoundError(kind, name, said)
    if isinstance(error, _REJECTED):
        return MetastoreRejectedError(f"the metastore refused {method}: {said}")
    if isinstance(error, TTransportException):
        return MetastoreUnavailableError(f"metastore call {method} failed: the connection failed: {said}")
    return MetastoreError(f"metastore call {method} failed: {said}")


class CatalogErrors:
    """``with CatalogErrors("create_table"):`` around a call into code that raises the metastore's exceptions as
    they are (pyiceberg's HiveCatalog): they leave the block as the catalog's errors (:func:`catalog_error`).

    A class rather than a generator context manager, so the metastore's exception passes through no contextlib
    frame before it is wrapped. An error that such code made of the metastore's refusal is answered as that refusal:
    pyiceberg's rename reads every InvalidOperationException as a missing namespace, where the metastore said that
    the new name is not valid.
    """

    def __init__(self, method: str, missing: tuple[str, str] | None = None) -> None:
        self.method = method
        self.missing = missing

    def __enter__(self) -> CatalogErrors:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if isinstance(error, TException) and not isinstance(error, OSError):
            raise catalog_error(self.method, error, self.missing) from error
        cause = getattr(error, "__cause__", None)
        if isinstance(cause, _REJECTED):
            raise catalog_error(self.method, cause, self.missing) from error
