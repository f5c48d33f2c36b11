"""Freshness: REFRESH, and the change feed other caches (Spark drivers, other services) follow.

The feed's long poll (``wait``) waits on a pool of its own, in slices, so long polls cannot starve the
other requests and a stopping server ends them at once. A poll naming its ``follower`` acknowledges that
the follower has applied every change up to ``since``, which is what a sync_ddl DDL waits for.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Query

from hms_catalog.errors import ConfigurationError
from service.access import Access
from service.bodies import RefreshRequest
from service.routes._common import Acting
from service.routes._route import ServiceRoute
from service.state import ServiceState

__all__ = ["MAX_WAIT_SECONDS", "router"]

MAX_WAIT_SECONDS = 60.0
_WAIT_SLICE = 0.5  # a long poll looks at other processes' REFRESHes and at shutdown this often


def router(state: ServiceState) -> APIRouter:
    routes = APIRouter(route_class=ServiceRoute)
    manager = state.manager

    @routes.post("/v1/catalogs/{catalog}/refresh")
    def refresh(catalog: str, body: RefreshRequest, who: Acting) -> dict[str, Any]:
        if body.table is not None and body.database is None:
            raise ConfigurationError("refreshing a table needs its 'database' too")
        state.reading(who, catalog, "REFRESH")
        refreshed = manager.refresh(catalog, body.database, body.table)
        return {"catalog": refreshed.name, "database": body.database, "table": body.table,
                "version": refreshed.versions.current}

    @routes.get("/v1/catalogs/{catalog}/changes")
    async def changes(
        catalog: str, who: Acting, since: int = 0, wait: float | None = None,
        follower: Annotated[str | None, Query(min_length=1, max_length=128, description=(
            "the polling client's id: polling from 'since' says it has applied every change up to it (sync_ddl waits "
            "for that)"))] = None,
    ) -> dict[str, Any]:
        if wait is not None and not 0 <= wait <= MAX_WAIT_SECONDS:
            raise ConfigurationError(f"'wait' must be between 0 and {MAX_WAIT_SECONDS:g} seconds, got {wait:g}")
        deadline = time.monotonic() + (wait or 0.0)
        first = await anyio.to_thread.run_sync(manager.catalog, catalog, limiter=state.long_polls)
        who.check(Access.READ, first.name, "the change feed")
        # A position past the catalog's current version was taken before the catalog was rebuilt: it
        # acknowledges nothing of this one.
        acknowledged = since if since <= first.versions.current else 0
        polling = state.followers.polling(first.name, follower, acknowledged) if follower else contextlib.nullcontext()
        with polling:
            live = first
            while True:
                remaining = deadline - time.monotonic()
                log = await anyio.to_thread.run_sync(
                    live.versions.wait_for_change, since, min(max(remaining, 0.0), _WAIT_SLICE), limiter=state.long_polls
                )
                # A catalog rebuilt by ALTER (here or in another process) counts versions from 0 again: a
                # position taken before that says nothing now, so the client hears at once that it lost track.
                rebuilt = live is not first or since > log.current
                if rebuilt or log.changes or time.monotonic() >= deadline or state.stopping.is_set():
                    break
                await asyncio.sleep(0)
                live = await anyio.to_thread.run_sync(manager.catalog, catalog, limiter=state.long_polls)
        return {
            "current": log.current, "oldest": log.oldest, "truncated": log.truncated or rebuilt,
            "changes": [{"version": c.version, "kind": c.kind.value, "object": str(c.object), "source": c.source.value}
                        for c in log.changes],
        }

    return routes
