"""The spec's ``ErrorModel`` for every failure under ``/iceberg``, mapped once from the exceptions.

``{"error": {"message", "type", "code"}}`` with the type names Iceberg's own clients map to their exceptions
(``NoSuchTableException``, ``CommitFailedException``, ...). The service's other routes keep their own error
shape; :class:`IcebergRoute` turns whatever an Iceberg route raises (a refused token, a bad body, a metastore
that is away) into this one, so that no client of the protocol sees a body it cannot parse.
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

from hms_catalog.errors import (
    AlreadyExistsError,
    HmsCatalogError,
    MetastoreUnavailableError,
    NotFoundError,
    PoolClosedError,
    StoreUnavailableError,
    WriteConflictError,
)
from hms_catalog.masking import mask_text
from service.access import ForbiddenError

__all__ = ["IcebergError", "IcebergRoute", "error_model", "iceberg_error"]

log = logging.getLogger(__name__)


class IcebergError(HmsCatalogError):
    """A refusal the protocol names itself: ``status`` and the spec's ``kind`` (``NamespaceNotEmptyException``)."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


def error_model(status: int, kind: str, message: str, *, head: bool = False) -> Response:
    """The spec's error answer (no body for a HEAD, whose answer has none); secrets in ``message`` masked."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if head:
        return Response(status_code=status, headers=headers)
    body = {"error": {"message": mask_text(message), "type": kind, "code": status}}
    return JSONResponse(body, status_code=status, headers=headers)


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
    if isinstance(error, ForbiddenError):
        return 403, "ForbiddenException", message
    if isinstance(error, NotFoundError):
        return 404, _not_found_kind(error), message
    if isinstance(error, AlreadyExistsError):
        return 409, "AlreadyExistsException", message
    if isinstance(error, WriteConflictError):
        return 409, "CommitFailedException", message
    if isinstance(error, (MetastoreUnavailableError, PoolClosedError, StoreUnavailableError)):
        return 503, "ServiceUnavailableException", message
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
    if isinstance(error, HmsCatalogError):
        return 400, "BadRequestException", message
    log.exception("unexpected error answering an Iceberg REST request", exc_info=error)
    return 500, "InternalServerError", f"{type(error).__name__}: {message}"


class IcebergRoute(APIRoute):
    """A route whose every failure, a body that does not parse included, answers in the spec's error model."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as error:  # noqa: BLE001 - every failure gets the protocol's answer
                status, kind, message = iceberg_error(error)
                return error_model(status, kind, message, head=request.method == "HEAD")

        return answer
