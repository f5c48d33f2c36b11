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

from hms_catalog.errors import ErrorKind, kind_of
from hms_catalog.masking import mask_text

__all__ = ["STATUS_OF_KIND", "error_response", "exception_response", "status_of"]

log = logging.getLogger(__name__)

# Every kind's status (tests/service/test_error_model.py checks that none is missing).
STATUS_OF_KIND: dict[ErrorKind, int] = {
    ErrorKind.INVALID: 400,
    ErrorKind.UNSUPPORTED: 400,  # valid, but not something this catalog or its metastore can do: the message says so
    ErrorKind.FORBIDDEN: 403,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.ALREADY_EXISTS: 409,
    ErrorKind.CONFLICT: 409,
    ErrorKind.STALE: 412,
    ErrorKind.UPSTREAM_REFUSED: 502,
    ErrorKind.UNAVAILABLE: 503,
    ErrorKind.TIMED_OUT: 504,
    ErrorKind.INTERNAL: 500,
}


_DETAILS: tuple[tuple[str, type], ...] = (
    ("kind", str), ("name", str), ("token", str), ("access", str), ("catalogs", list), ("lagging", dict),
)


def status_of(error: BaseException) -> int:
    return STATUS_OF_KIND[kind_of(error)]


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
