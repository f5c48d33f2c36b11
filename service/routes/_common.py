"""What the routes share: the request's principal, If-Match, the sync_ddl query flags, and running DDL
statement nodes for a REST call (checked, audited, locked and answered as the statements are)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from pydantic import BaseModel

from hms_catalog.errors import ConfigurationError, NotFoundError
from hms_catalog.execution import Result
from hms_catalog.model import ExternalCatalog
from hms_catalog.sql import ast
from service.access import Principal
from service.actor import Actor
from service.ddl_bodies import DdlAnswer
from service.middleware import actor_of, principal_of
from service.state import ServiceState
from service.sync_ddl import MAX_TIMEOUT, SYNC_DDL_TIMEOUT

__all__ = ["Acting", "SyncRequest", "Who", "expected_version", "rest_statement", "run_ddl"]


# The dependencies are coroutines: FastAPI runs a plain function's in the thread pool, one trip there and back for
# each of them on every request, for what only reads the request's scope.
async def _principal(request: Request) -> Principal:
    return principal_of(request)


async def _actor(request: Request) -> Actor:
    return actor_of(request)


Who = Annotated[Principal, Depends(_principal)]
Acting = Annotated[Actor, Depends(_actor)]  # the principal with its front end and address: what changes pass the gate as


@dataclass(frozen=True)
class SyncRequest:
    wanted: bool = False
    timeout: float | None = None


async def _sync_request(
    sync_ddl: Annotated[bool, Query(description="answer only once every live follower of the change feed has seen the change")] = False,
    sync_ddl_timeout: Annotated[float | None, Query(gt=0, le=MAX_TIMEOUT, description="seconds to wait for them (default 30)")] = None,
) -> SyncRequest:
    return SyncRequest(sync_ddl, sync_ddl_timeout)


Sync = Annotated[SyncRequest, Depends(_sync_request)]


def expected_version(if_match: str | None, what: str) -> int | None:
    """The version an ``If-Match`` header names (``"3"``, ``W/"3"``), None for none or ``*``."""
    if if_match is None or if_match.strip() == "*":
        return None
    value = if_match.strip().removeprefix("W/").strip('"')
    if not value.isdigit():
        raise ConfigurationError(f"If-Match must be {what} (\"3\"), got {if_match!r}")
    return int(value)


def rest_statement(request: Request, body: BaseModel | dict[str, Any] | None = None) -> str:
    """A REST call as the audit log shows it: method, path and query, and the body as JSON (masked there)."""
    query = f"?{request.url.query}" if request.url.query else ""
    shown = body.model_dump(mode="json", exclude_defaults=True) if isinstance(body, BaseModel) else body
    return f"{request.method} {request.url.path}{query}" + ("" if shown is None else " " + json.dumps(shown, sort_keys=True))


def run_ddl(state: ServiceState, principal: Principal | Actor, catalog: str, nodes: Sequence[ast.Statement], sync: SyncRequest, *,
            hold: Sequence[tuple[str, str]] = (), precondition: Callable[[], None] | None = None) -> DdlAnswer:
    """Execute ``nodes`` in order as statements of one session (each its own DDL and audit line) and answer the
    last one's message and version. ``hold``: (database, table) locks kept across all of them, so that a
    ``precondition`` (If-Match) checked before the first still holds when the last runs; the sync_ddl wait
    comes after, with the locks released."""
    ran = state.session(principal)
    if sync.timeout is not None:
        ran.options[SYNC_DDL_TIMEOUT] = f"{sync.timeout:g}"
    try:
        live: ExternalCatalog | None = state.manager.catalog(catalog)
    except NotFoundError:
        live = None  # the statement says so, and its refusal is audited like any other
    before = live.versions.current if live is not None else 0
    result = Result()
    with live.ddl_locks.hold(*hold) if hold and live is not None else contextlib.nullcontext():
        for index, node in enumerate(nodes):
            result = ran.execute_checked(node, precondition if index == 0 else None)
    message, version = result.rows[0]
    waiter = ran.sync_waiter
    if sync.wanted and waiter is not None and live is not None:
        message = f"{message} ({waiter.wait_for(live.name, version, since=before)})"
    return DdlAnswer(result=message, version=version)
