"""Vended credentials: what an Iceberg REST client that reads and writes a table's files itself is given to reach
them, so that it needs nothing but its bearer token.

A client asks with ``X-Iceberg-Access-Delegation: vended-credentials`` (pyiceberg and DuckDB send it unless told
otherwise); a table's load and create then carry the store's settings and a credential in ``config`` and in
``storage-credentials`` (prefixed by the table's location), and ``GET .../tables/{t}/credentials`` answers the
credential alone (the spec's way to refresh one). What the credential is, the catalog decides
(:mod:`hms_catalog.storage.vending`): an STS session scoped to the table, reads only unless the token may
change the catalog, or its own key where it says so. A catalog that vends nothing loads tables with an empty
``config``, as before, and its ``/credentials`` answers 403. Every vending is one audit line (the keys given,
the session's expiry, never a value), and no answer that carries one is kept by a cache on the way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from starlette.responses import JSONResponse

from hms_catalog.model import ExternalCatalog
from hms_catalog.storage.engines import iceberg_client_properties
from hms_catalog.storage.properties import VendingMode
from service.access import Access, Principal
from service.iceberg_rest.context import IcebergContext, namespace_of
from service.iceberg_rest.errors import IcebergRoute
from service.routes._common import Who
from service.routes.storage import NO_STORE

__all__ = ["DELEGATION_HEADER", "Delegation", "Vended", "router", "vend"]

DELEGATION_HEADER = "X-Iceberg-Access-Delegation"
_VENDED_CREDENTIALS = "vended-credentials"

Delegation = Annotated[str | None, Header(alias=DELEGATION_HEADER)]


@dataclass(frozen=True)
class Vended:
    """What a LoadTableResult carries for the client's FileIO (empty: nothing vended), and the headers then due."""

    config: dict[str, str] = field(default_factory=dict, repr=False)
    storage_credentials: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def headers(self) -> dict[str, str]:
        return dict(NO_STORE) if self.config else {}


def _asked(delegation: str | None) -> bool:
    return delegation is not None and _VENDED_CREDENTIALS in [part.strip().lower() for part in delegation.split(",")]


def vend(context: IcebergContext, request: Request, principal: Principal, catalog: ExternalCatalog, location: str,
         delegation: str | None, *, required: bool = False) -> Vended:
    """The credential for the table at ``location``, when the client asked for one (``required``: the
    ``/credentials`` endpoint, which asks by being called) and the catalog vends them; a write credential for a
    token that may change the catalog. VendingDisabledError (403) where ``required`` and the catalog vends none."""
    if not required and not _asked(delegation):
        return Vended()  # the common load: nothing asked, nothing looked up
    vendor = catalog.storage.vendor()
    if not required and vendor.mode is VendingMode.NONE:
        return Vended()
    write = principal.may_change(catalog.name)
    statement = f"{request.method} {request.url.path} (vend {'write' if write else 'read'} credentials for {location})"
    with context.state.gate.admitted(context.actor(request, principal), catalog.name, statement, "vending credentials",
                                     need=Access.READ) as entry:
        vendor.check_enabled()
        vended = vendor.vend(location, write=write, requester=principal.name)
        config = iceberg_client_properties(catalog.storage.config, vended)
        entry.extra.update(vending=vendor.mode.value, access="write" if write else "read", keys=sorted(config))
        if vended is not None and vended.expiration is not None:
            entry.extra["expires"] = vended.expiration.isoformat()
    return Vended(config, [{"prefix": location, "config": config}])


def router(context: IcebergContext) -> APIRouter:
    routes = APIRouter(prefix="/iceberg/v1/{prefix}", route_class=IcebergRoute, tags=["iceberg"], include_in_schema=False)

    @routes.get("/namespaces/{namespace}/tables/{table}/credentials")
    def load_credentials(prefix: str, namespace: str, table: str, request: Request, principal: Who) -> JSONResponse:
        catalog = context.catalog(prefix)
        context.read(principal, catalog)
        metadata = context.read_metadata(catalog, context.metadata_location(catalog, namespace_of(namespace), table.lower()))
        vended = vend(context, request, principal, catalog, metadata.location, None, required=True)
        return JSONResponse({"storage-credentials": vended.storage_credentials}, headers=NO_STORE)

    return routes
