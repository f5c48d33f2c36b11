"""The service's routes by resource, each module a factory ``router(state)`` over the shared state."""

from __future__ import annotations

from fastapi import APIRouter

from service.iceberg_rest import router as iceberg_rest
from service.routes import browse, catalogs, changes, ddl, health, partitions, principal, statements, storage, writes
from service.state import ServiceState

__all__ = ["routers"]


def routers(state: ServiceState) -> list[APIRouter]:
    return [module.router(state) for module in (health, principal, catalogs, browse, changes, statements, ddl, partitions, writes,
                                                   storage, iceberg_rest)]
