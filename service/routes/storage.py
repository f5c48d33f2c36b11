"""A catalog's storage settings for a Spark driver, credentials included: the one answer of the REST API that
carries them.

Spark's readers and writers reach a catalog's store with Hadoop settings (``fs.s3a.endpoint``,
``fs.s3a.access.key``, the HDFS HA keys, ...). The connector's driver asks for them here when it plans a
scan or a write, and keeps them out of everything Spark shows (plans, the UI, event logs); every other
answer of the service shows catalog properties with their secrets masked.

What credential the answer carries is the catalog's vending rule, as for Iceberg REST
(:mod:`hms_catalog.storage.vending`): an STS session scoped to the table named by ``?table=<db>.<table>``
(reads only unless the token may change the catalog) where a role is set, or to the folder of the write job
``?job=<id>`` (a CREATE TABLE AS, whose table does not exist until its commit; write tokens only); the catalog's
own key only with ``'storage.vending'='catalog_key'``; where vending is off, 403, and the driver then takes the
catalog's settings without any credential from ``GET /v1/catalogs/{c}/storage-settings`` (the HDFS HA keys, the
S3 endpoint, the jars) and Spark's own S3 credentials. ``vending`` says which, and ``expires_at_ms`` when a
session ends (null for a key that does not), so the driver keeps a table's session and asks for the next one
before it ends. The answer goes to tokens that may read the catalog, is audited (which
keys, never their values) and is never stored by a cache on the way (``Cache-Control: no-store``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field
from starlette.responses import JSONResponse

from hms_catalog.errors import ConfigurationError
from hms_catalog.model import ExternalCatalog
from hms_catalog.storage.engines import SPARK_JARS_BY_SCHEME, hadoop_settings, vended_hadoop_settings
from hms_catalog.storage.properties import VendingMode
from hms_catalog.storage.vending import VendedCredentials
from hms_catalog.write.jobs import jobs_of
from service.access import Access, Principal
from service.routes._common import Acting, rest_statement
from service.routes._route import ServiceRoute
from service.state import ServiceState

__all__ = ["NO_STORE", "StorageCredentials", "router"]

# Neither a browser nor a proxy may keep an answer that holds credentials.
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


class StorageCredentials(BaseModel):
    """The answer, declared for the OpenAPI document."""

    catalog: str
    hadoop_settings: dict[str, str] = Field(description="Hadoop Configuration keys of the catalog's store, credentials included")
    spark_jars: dict[str, str] = Field(description="by scheme, the jar Spark needs for its Hadoop FileSystem")
    vending: str | None = Field(None, description="the catalog's vending: 'role' (a session scoped to the table or "
                                "job named), 'catalog_key'; absent from /storage-settings")
    expires_at_ms: int | None = Field(None, description="when the vended session ends (epoch milliseconds); null "
                                      "for a key that does not end")


def router(state: ServiceState) -> APIRouter:
    routes = APIRouter(route_class=ServiceRoute)
    manager = state.manager

    @routes.get("/v1/catalogs/{catalog}/storage-credentials", response_model=StorageCredentials)
    def storage_credentials(catalog: str, request: Request, who: Acting,
                            table: Annotated[str | None, Query(description="<database>.<table>: the table a role's "
                                                               "session is scoped to")] = None,
                            job: Annotated[str | None, Query(description="a write job: a role's session is scoped to "
                                                             "its table's folder (a CREATE TABLE AS)")] = None,
                            ) -> JSONResponse:
        """The Hadoop settings of the catalog's store, its vended credential included, and the jar each scheme
        needs in Spark."""

        def version() -> int | None:
            found = manager.store.find(catalog)
            return None if found is None else found.version

        with state.gate.admitted(who, catalog, rest_statement(request), "reading the catalog's storage credentials",
                                 need=Access.READ, version=version) as entry:
            live = manager.catalog(catalog)
            if job is not None:
                who.check(Access.WRITE, live.name, "reading a write job's storage credentials")
            settings, vended = _settings(live, who.principal, table, job)
            entry.extra["vending"] = live.storage.config.vending.mode.value
            entry.extra["access"] = "write" if who.principal.may_change(live.name) else "read"
            entry.extra["keys"] = sorted(settings)  # which settings went out, never their values
            ends = None if vended is None else vended.expiration
            if ends is not None:
                entry.extra["expires"] = ends.isoformat()
        expires = None if ends is None else int(ends.timestamp() * 1000)
        body: dict[str, Any] = {"catalog": live.name, "hadoop_settings": settings, "spark_jars": dict(SPARK_JARS_BY_SCHEME),
                                "vending": live.storage.config.vending.mode.value, "expires_at_ms": expires}
        return JSONResponse(body, headers=NO_STORE)

    @routes.get("/v1/catalogs/{catalog}/storage-settings", response_model=StorageCredentials)
    def storage_settings(catalog: str, who: Acting) -> JSONResponse:
        """The Hadoop settings of the catalog's store without any credential, and the jar each scheme needs in
        Spark: what a driver uses where the catalog vends no credentials."""
        who.check(Access.READ, catalog.lower(), "reading the catalog's storage settings")
        live = manager.catalog(catalog)
        body = {"catalog": live.name, "hadoop_settings": hadoop_settings(live.storage.config, secrets=False),
                "spark_jars": dict(SPARK_JARS_BY_SCHEME)}
        return JSONResponse(body)

    return routes


def _settings(catalog: ExternalCatalog, who: Principal, table: str | None,
              job: str | None) -> tuple[dict[str, str], VendedCredentials | None]:
    """The catalog's Hadoop settings with the credential its vending rule gives ``who`` (VendingDisabledError: none),
    and that credential (None: the catalog's key, or none)."""
    vendor = catalog.storage.vendor()
    vendor.check_enabled()
    if vendor.mode is VendingMode.CATALOG_KEY:
        return hadoop_settings(catalog.storage.config, secrets=True), None
    if job is not None:
        location = jobs_of(catalog).get(job).root  # a new table's folder: its staging folder is under it
    elif table is None or table.count(".") != 1:
        raise ConfigurationError(f"catalog '{catalog.name}' vends sessions scoped to one table: name it with "
                                 f"?table=<database>.<table> (or a write job with ?job=<id>)"
                                 + (f" (got {table!r})" if table is not None else ""))
    else:
        database, name = table.lower().split(".")
        location = catalog.table(database, name).thrift.sd.location
    vended = vendor.vend(location, write=who.may_change(catalog.name), requester=who.name)
    return vended_hadoop_settings(catalog.storage.config, vended), vended
