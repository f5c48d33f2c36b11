"""Request bodies of the catalog, browsing, freshness and statement routes, as typed models: FastAPI
validates them (unknown fields are refused) and the OpenAPI document is generated from them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["AggregateBody", "AggregateFunctionBody", "Body", "CatalogChange", "NewCatalog", "PlanRequest", "RefreshRequest",
           "StatementRequest"]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewCatalog(Body):
    name: str
    comment: str = ""
    properties: dict[str, str]


class CatalogChange(Body):
    properties: dict[str, str] | None = None
    rename: str | None = None


class AggregateFunctionBody(Body):
    function: Literal["count_star", "count", "min", "max"]
    column: str | None = None


class AggregateBody(Body):
    """Aggregates to answer from metadata; the answer is per partition, whatever the grouping."""

    functions: list[AggregateFunctionBody]
    group_by: list[str] = []


class PlanRequest(Body):
    where: str | None = None
    columns: list[str] | None = None
    statistics: bool = False
    aggregate: AggregateBody | None = None


class RefreshRequest(Body):
    database: str | None = None
    table: str | None = None


class StatementRequest(Body):
    """Statements to run in order. ``options``: the session's options as earlier ``SET key = value`` left
    them (a remote session sends its own, since each request runs in a session of its own); ``sync_ddl``
    as ``SET sync_ddl = true`` before them."""

    sql: str
    catalog: str | None = None
    database: str | None = None
    options: dict[str, str] = {}
    sync_ddl: bool = False
