"""The spec's ``ErrorModel`` for every failure under ``/iceberg``, mapped once from the exceptions.

``{"error": {"message", "type", "code"}}`` with the type names Iceberg's own clients map to their exceptions
(``NoSuchTableException``, ``CommitFailedException``, ...). The service's other routes keep their own error
shape; :class:`IcebergRoute` turns whatever an Iceberg route raises (a refused token, a bad body, a metastore
that is away) into this one, so that no client of the protocol sees a body it cannot parse, and answers it with a
status the route declares (:mod:`.statuses`), so that the client raises its typed exception for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

from hms_catalog.errors import ErrorKind, HmsCatalogError, NotFoundError, kind_of
from hms_catalog.masking import mask_text
from service.iceberg_rest.statuses import answered_status

__all__ = ["ICEBERG_OF_KIND", "ICEBERG_PREFIX", "IcebergError", "IcebergRoute", "declared_error_model", "error_model",
           "iceberg_error"]

log = logging.getLogger(__name__)

ICEBERG_PREFIX = "/iceberg"  # where the protocol's routes are mounted; the spec's paths start after it


# Every kind's status and the spec's error type (tests/service/test_error_model.py checks that none is missing).
# A missing object's type says what is missing (_not_found_kind); the protocol's own refusals are IcebergErrors.
ICEBERG_OF_KIND: dict[ErrorKind, tuple[int, str]] = {
    ErrorKind.INVALID: (400, "BadRequestException"),
    ErrorKind.UNSUPPORTED: (400, "BadRequestException"),  # the message says what the catalog or its metastore cannot do
    ErrorKind.FORBIDDEN: (403, "ForbiddenException"),
    ErrorKind.NOT_FOUND: (404, "NotFoundException"),
    ErrorKind.ALREADY_EXISTS: (409, "AlreadyExistsException"),
    ErrorKind.CONFLICT: (409, "CommitFailedException"),
    ErrorKind.STALE: (409, "CommitFailedException"),  # the spec's answer to a requirement that no longer holds
    ErrorKind.UPSTREAM_REFUSED: (502, "BadGatewayException"),
    ErrorKind.UNAVAILABLE: (503, "ServiceUnavailableException"),
    ErrorKind.TIMED_OUT: (504, "CommitStateUnknownException"),  # done, not confirmed: the spec's unknown state
    ErrorKind.INTERNAL: (500, "InternalServerError"),
}

_KIND_OF_STATUS = {400: ErrorKind.INVALID, 403: ErrorKind.FORBIDDEN, 404: ErrorKind.NOT_FOUND, 406: ErrorKind.UNSUPPORTED,
                   409: ErrorKind.CONFLICT, 422: ErrorKind.INVALID, 500: ErrorKind.INTERNAL, 503: ErrorKind.UNAVAILABLE}


class IcebergError(HmsCatalogError):
    """A refusal the protocol names itself: ``status`` and the spec's ``kind`` (``NamespaceNotEmptyException``);
    its error kind follows the status."""

    error_kind = ErrorKind.INVALID

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.error_kind = _KIND_OF_STATUS.get(status, ErrorKind.INVALID)  # type: ignore[misc]


def error_model(status: int, kind: str, message: str, *, head: bool = False) -> Response:
    """The spec's error answer (no body for a HEAD, whose answer has none); secrets in ``message`` masked."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if head:
        return Response(status_code=status, headers=headers)
    body = {"error": {"message": mask_text(message), "type": kind, "code": status}}
    return JSONResponse(body, status_code=status, headers=headers)


def declared_error_model(method: str, path: str, status: int, kind: str, message: str) -> Response:
    """:func:`error_model` for a request to ``path`` (the request's, under ``/iceberg``), with a status its route
    declares: a refusal the route does not declare is answered 400, its type and message kept."""
    route = path.removeprefix(ICEBERG_PREFIX)
    return error_model(answered_status(method, route, status), kind, message, head=method == "HEAD")


def _not_found_kind(error: NotFoundError) -> str:
    kind = getattr(error, "kind", "")
    if kind == "database":
        return "NoSuchNamespaceException"
    if kind == "catalog":
        return "NotFoundException"
    return "NoSuchTableException"


def _pyiceberg(error: Exception) -> tuple[int, str] | None:
    """The status and type of one of pyiceberg's exceptions (raised by its HiveCatalog on our behalf)."""
    from pyiceberg import exceptions as ice

    table: list[tuple[type[Exception], int, str]] = [
        (ice.CommitFailedException, 409, "CommitFailedException"),
        (ice.NoSuchTableError, 404, "NoSuchTableException"),
        (ice.NoSuchNamespaceError, 404, "NoSuchNamespaceException"),
        (ice.NoSuchIcebergTableError, 404, "NoSuchTableException"),
        (ice.TableAlreadyExistsError, 409, "AlreadyExistsException"),
        (ice.NamespaceAlreadyExistsError, 409, "AlreadyExistsException"),
        (ice.NamespaceNotEmptyError, 409, "NamespaceNotEmptyException"),
        (ice.ValidationError, 400, "ValidationException"),
    ]
    for kind, status, name in table:
        if isinstance(error, kind):
            return status, name
    return None


def iceberg_error(error: BaseException) -> tuple[int, str, str]:
    """(status, type, message) of ``error`` as the protocol answers it."""
    message = str(error) or type(error).__name__
    if isinstance(error, IcebergError):
        return error.status, error.kind, message
    if isinstance(error, NotFoundError):
        return 404, _not_found_kind(error), message
    if isinstance(error, RequestValidationError):
        return 400, "BadRequestException", "bad request: " + "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in error.errors())
    if isinstance(error, ValidationError):
        return 400, "BadRequestException", f"bad request: {error.error_count()} problem(s): " + "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in error.errors()[:5])
    if isinstance(error, HTTPException):
        return error.status_code, "NotFoundException" if error.status_code == 404 else "BadRequestException", str(error.detail)
    if isinstance(error, NotImplementedError):
        return 406, "UnsupportedOperationException", message
    found = _pyiceberg(error) if isinstance(error, Exception) else None
    if found is not None:
        return found[0], found[1], message
    kind = kind_of(error)
    if kind is ErrorKind.INTERNAL:
        log.exception("unexpected error answering an Iceberg REST request", exc_info=error)
        return 500, "InternalServerError", f"{type(error).__name__}: {message}"
    status, name = ICEBERG_OF_KIND[kind]
    return status, name, message


class IcebergRoute(APIRoute):
    """A route whose every failure, a body that does not parse included, answers in the spec's error model."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as error:  # noqa: BLE001 - every failure gets the protocol's answer
                status, kind, message = iceberg_error(error)
                return declared_error_model(request.method, request.scope["path"], status, kind, message)

        return answer
