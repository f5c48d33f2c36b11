"""The ASGI layers around the routes: the token gate, the body limit and the request metrics.

Plain ASGI rather than Starlette's ``BaseHTTPMiddleware``, which costs a task group per request.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import FastAPI, Request
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.access import Principal
from service.actor import Actor, FrontEnd
from service.errors import error_response
from service.iceberg_rest.auth import IssuedTokens
from service.iceberg_rest.errors import declared_error_model, error_model
from service.metrics import RequestMetrics
from service.tokens import TokenTable

__all__ = ["BodyLimit", "Gate", "Measured", "PRINCIPAL", "TOKEN_EXCHANGE", "actor_of", "principal_of"]

PRINCIPAL = "hms_catalog.principal"  # the scope key under which the gate leaves whose token a request carries
TOKEN_EXCHANGE = "hms_catalog.token_exchange"  # the key under which the Iceberg OAuth endpoint finds its IssuedTokens
_ICEBERG = "/iceberg/"
_OAUTH_PATH = "/iceberg/v1/oauth/tokens"  # the Iceberg client-credentials exchange: credentials, not a bearer token
_OPEN_PATHS = frozenset({"/v1/health", _OAUTH_PATH})
_DRAIN_BYTES = 16 * 1024 * 1024  # the most of an oversized body read and dropped before answering 413


def principal_of(request: Request) -> Principal:
    """The principal the gate found for this request (a FastAPI dependency)."""
    principal = request.scope.get(PRINCIPAL)
    assert isinstance(principal, Principal), "the gate lets no request through without a principal"
    return principal


def actor_of(request: Request) -> Actor:
    """The request's actor (a FastAPI dependency): its token's principal, front end and the client's address."""
    front_end = FrontEnd.ICEBERG_REST if request.url.path.startswith(_ICEBERG) else FrontEnd.REST
    return Actor(principal_of(request), front_end, request.client.host if request.client else None)


class Gate:
    """Refuses requests without a known bearer token (401); leaves the token's principal in the scope.

    Under ``/iceberg`` the tokens the Iceberg OAuth exchange issued (``issued``) are known too, and a refusal
    is in the Iceberg spec's error model."""

    def __init__(self, app: ASGIApp, tokens: TokenTable, issued: IssuedTokens | None = None) -> None:
        self.app = app
        self.tokens = tokens
        self.issued = issued if issued is not None else IssuedTokens(tokens)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == _OAUTH_PATH:
            scope[TOKEN_EXCHANGE] = self.issued
        elif scope["type"] == "http" and scope["path"] not in _OPEN_PATHS:
            header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            iceberg = scope["path"].startswith(_ICEBERG)
            principal = self.tokens.principal(header)
            if principal is None and iceberg:
                principal = self.issued.principal(header)
            if principal is None:
                message = "a valid 'Authorization: Bearer <token>' header is required"
                refused = error_model(401, "NotAuthorizedException", message, head=scope["method"] == "HEAD") if iceberg \
                    else error_response(401, "Unauthorized", message)
                await refused(scope, receive, send)
                return
            scope[PRINCIPAL] = principal
        await self.app(scope, receive, send)


class Measured:
    """Measures every request by route template, with the status it was answered with.

    Outside the body limit, which answers 413 itself (and drops what the application then answers), so
    those are counted as 413.
    """

    def __init__(self, app: ASGIApp, requests: RequestMetrics) -> None:
        self.app = app
        self.requests = requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status = 500

        async def noted(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, noted)
        finally:
            route = _route_of(scope["app"], scope) if "app" in scope else "other"
            self.requests.observe(scope["method"], route, status, time.perf_counter() - began)


class BodyLimit:
    """413 for a request body over ``limit`` bytes, declared or streamed, before anything reads it."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._too_large(scope, receive, send, unread=int(declared))
            return
        received = 0
        refused = False

        async def counted() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                received += len(message.get("body", b""))
                if received > self.limit:
                    # Answer now: the application may turn the exception below into an answer of its own
                    # (a body it could not parse), which ``guarded`` then drops.
                    refused = True
                    more = bool(message.get("more_body", False))
                    await self._too_large(scope, receive, send, unread=_DRAIN_BYTES if more else 0)
                    raise _TooLarge
            return message

        async def guarded(message: Message) -> None:
            if not refused:
                await send(message)

        try:
            await self.app(scope, counted, guarded)
        except Exception:
            if not refused:
                raise

    async def _too_large(self, scope: Scope, receive: Receive, send: Send, *, unread: int) -> None:
        # Read (and drop) what the client is still sending, up to a bound, so that it reads the answer
        # instead of a connection reset by a server closing on unread bytes.
        drained = 0
        while 0 < unread <= _DRAIN_BYTES and drained <= _DRAIN_BYTES:
            message = await receive()
            drained += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        text = f"the request body is over {self.limit} bytes"
        # The Iceberg REST spec declares no 413: there, a refusal its route declares, in its error model.
        response = declared_error_model(scope["method"], scope["path"], 413, "BadRequestException", text) \
            if scope["path"].startswith(_ICEBERG) else error_response(413, "PayloadTooLarge", text)
        await response(scope, receive, send)


class _TooLarge(Exception):
    pass


def _route_of(app: FastAPI, scope: Scope) -> str:
    """The route template a request matches (``/v1/catalogs/{catalog}``), so metrics do not grow per name."""
    matched = scope.get("route")  # the router records the route it dispatched to
    if matched is not None and getattr(matched, "path", None):
        return str(matched.path)
    return _matching(app.router.routes, scope) or "other"  # answered before routing (a 413, a 401)


def _matching(routes: Any, scope: Scope) -> str | None:
    for route in routes:
        included = getattr(route, "original_router", None)  # an included router: its routes carry whole paths
        if included is not None:
            found = _matching(included.routes, scope)
            if found is not None:
                return found
            continue
        match, _ = route.matches(scope)
        if match is Match.FULL and getattr(route, "path", None):
            return str(route.path)
    return None
