"""Errors as the API answers them: ``{"error": {"type": <exception class>, "message": ...}}`` and a status.

Statuses follow what the error lets a client do: 400 fix the request, 403 use a token that may, 404
create or name another object, 409 pick another name, 412 read again and retry, 502 the metastore
or a store refused, 503 try later, 504 the change is done but not every follower of the change feed saw it in time.
Fields a client can act on without parsing the message ride along: what was missing (``kind``, ``name``),
whose token was refused and what it may do (``token``, ``access``, ``catalogs``), which followers lag.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.responses import JSONResponse

from hms_catalog.errors import (
    AlreadyExistsError,
    HmsCatalogError,
    MetastoreError,
    MetastoreUnavailableError,
    NotFoundError,
    PoolClosedError,
    StorageError,
    StoreUnavailableError,
    VersionMismatchError,
    WriteConflictError,
)
from hms_catalog.masking import mask_text
from service.access import ForbiddenError
from service.sync_ddl import SyncDdlTimeoutError

__all__ = ["error_response", "exception_response", "status_of"]

log = logging.getLogger(__name__)

_STATUSES: tuple[tuple[type[BaseException], int], ...] = (
    (ForbiddenError, 403),
    (SyncDdlTimeoutError, 504),
    (NotFoundError, 404),
    (AlreadyExistsError, 409),
    (WriteConflictError, 409),
    (VersionMismatchError, 412),
    (MetastoreUnavailableError, 503),  # before MetastoreError: it is one
    (PoolClosedError, 503),
    (StoreUnavailableError, 503),
    (MetastoreError, 502),
    (StorageError, 502),  # a store (S3, HDFS, ...) refused or could not be reached
    (HmsCatalogError, 400),
)


_DETAILS: tuple[tuple[str, type], ...] = (
    ("kind", str), ("name", str), ("token", str), ("access", str), ("catalogs", list), ("lagging", dict),
)


def status_of(error: BaseException) -> int:
    for kind, status in _STATUSES:
        if isinstance(error, kind):
            return status
    return 500


def error_response(status: int, error_type: str, message: str, details: dict[str, Any] | None = None) -> JSONResponse:
    """The JSON error body every failure answers with; secret values in ``message`` are masked.

    ``details``: fields a client can act on without parsing the message (a NotFoundError's kind and name).
    """
    body = {"error": {**(details or {}), "type": error_type, "message": mask_text(message)}}
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(body, status_code=status, headers=headers)


def exception_response(error: BaseException) -> JSONResponse:
    status = status_of(error)
    if status == 500:
        log.exception("unexpected error answering a request", exc_info=error)
        return error_response(500, "InternalError", f"{type(error).__name__}: {error}")
    details = {key: getattr(error, key) for key, kind in _DETAILS if isinstance(getattr(error, key, None), kind)}
    return error_response(status, type(error).__name__, str(error) or type(error).__name__, details)
