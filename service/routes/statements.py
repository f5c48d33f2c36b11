"""``POST /v1/statements``: statements run in order in one session acting for the request's token.

Each statement is checked as it comes (a DDL with a read token is refused with 403 before it runs, those
before it stay applied, as a failing statement leaves them), and each change is audited.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from hms_catalog.execution import Result
from hms_catalog.execution.ddl_commands import SYNC_DDL
from hms_catalog.masking import mask_text
from service.bodies import StatementRequest
from service.routes._common import Acting
from service.routes._route import ServiceRoute
from service.state import ServiceState
from service.views import result_json

__all__ = ["router"]

_COMPANION_WAIT_SECONDS = 180.0  # a Spark Connect server being started: SELECTs wait for it, not start their own Spark


def router(state: ServiceState) -> APIRouter:
    routes = APIRouter(route_class=ServiceRoute)

    @routes.post("/v1/statements")
    def statements(body: StatementRequest, who: Acting) -> dict[str, Any]:
        for companion in state.companions.values():  # SELECT's engine is chosen once: not before the companion is up
            companion.wait_ready(_COMPANION_WAIT_SECONDS)
        ran = state.session(who, body.catalog, body.database)
        ran.options.update({key.lower(): value for key, value in body.options.items()})
        if body.sync_ddl:
            ran.options[SYNC_DDL] = "true"
        try:
            outcomes = list(ran.run(body.sql))  # every statement in order; the answer is the last one's
        finally:
            state.keep_engines(ran)
        text, result = outcomes[-1] if outcomes else ("", Result())
        answer = result_json(result)
        # The statement is echoed as JSON output shows it: secret property values masked.
        answer.update(statement=mask_text(text), catalog=ran.current_catalog, database=ran.current_database)
        if result.message:
            answer["message"] = result.message
        waiter = ran.sync_waiter
        if waiter is not None and waiter.note:
            answer["sync_ddl"] = waiter.note  # what the last wait found (no live follower, say)
        return answer

    return routes
