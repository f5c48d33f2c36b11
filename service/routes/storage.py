"""A catalog's storage settings for a Spark driver, credentials included: the one answer that carries them.

Spark's readers and writers reach a catalog's store with Hadoop settings (``fs.s3a.endpoint``,
``fs.s3a.access.key``, the HDFS HA keys, ...). The connector's driver asks for them here when it plans a
scan or a write, and keeps them out of everything Spark shows (plans, the UI, event logs); every other
answer of the service shows catalog properties with their secrets masked. As Iceberg REST catalogs vend
credentials, the answer goes to tokens that may read the catalog, is audited (which keys, never their
values) and is never stored by a cache on the way (``Cache-Control: no-store``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field
from starlette.responses import JSONResponse

from hms_catalog.storage.engines import SPARK_JARS_BY_SCHEME, hadoop_settings
from service.access import Access
from service.routes._common import Who, rest_statement
from service.state import ServiceState

__all__ = ["NO_STORE", "StorageCredentials", "router"]

# Neither a browser nor a proxy may keep an answer that holds credentials.
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


class StorageCredentials(BaseModel):
    """The answer, declared for the OpenAPI document."""

    catalog: str
    hadoop_settings: dict[str, str] = Field(description="Hadoop Configuration keys of the catalog's store, credentials included")
    spark_jars: dict[str, str] = Field(description="by scheme, the jar Spark needs for its Hadoop FileSystem")


def router(state: ServiceState) -> APIRouter:
    routes = APIRouter()
    manager = state.manager

    @routes.get("/v1/catalogs/{catalog}/storage-credentials", response_model=StorageCredentials)
    def storage_credentials(catalog: str, request: Request, who: Who) -> JSONResponse:
        """The Hadoop settings of the catalog's store, secrets included, and the jar each scheme needs in Spark."""

        def version() -> int | None:
            found = manager.store.find(catalog)
            return None if found is None else found.version

        with state.audit.recording(who.name, catalog.lower(), rest_statement(request), version) as entry:
            who.check(Access.READ, catalog.lower(), "reading the catalog's storage credentials")
            live = manager.catalog(catalog)
            settings = hadoop_settings(live.storage.config, secrets=True)
            entry.extra["keys"] = sorted(settings)  # which settings went out, never their values
        body = {"catalog": live.name, "hadoop_settings": settings, "spark_jars": dict(SPARK_JARS_BY_SCHEME)}
        return JSONResponse(body, headers=NO_STORE)

    return routes
