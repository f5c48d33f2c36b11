"""``/v1/principal``: whose token a request carries and what it may change, so a client (the console) can
offer only what the service would accept. It grants nothing: every change is still checked where it is made."""

from __future__ import annotations

from fastapi import APIRouter

from service.access import Access
from service.bodies import Body
from service.routes._common import Who
from service.routes._route import ServiceRoute
from service.state import ServiceState

__all__ = ["PrincipalAnswer", "router"]


class PrincipalAnswer(Body):
    """The token's name, its access, and the catalogs a ``write`` token may change (``*``: every one)."""

    name: str
    access: Access
    catalogs: list[str]


def router(state: ServiceState) -> APIRouter:
    del state  # the answer is the request's own principal; nothing shared is read
    routes = APIRouter(route_class=ServiceRoute)

    @routes.get("/v1/principal")
    def principal(who: Who) -> PrincipalAnswer:
        return PrincipalAnswer(name=who.name, access=who.access, catalogs=list(who.catalogs))

    return routes
