"""A table's partitions: listed as SHOW PARTITIONS lists them (pruned by ``where`` as the planner prunes),
added, dropped and recovered from storage (MSCK REPAIR) as the ALTER TABLE statements do."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel

from hms_catalog.ddl import specs
from hms_catalog.errors import ConfigurationError
from hms_catalog.formats.partition_names import parse_partition_name
from hms_catalog.sql import ast, ast_ddl
from hms_catalog.sql.parser import parse_expression
from service.ddl_bodies import AddPartitionsBody, DdlAnswer, RecoverBody
from service.paging import page
from service.routes._common import Acting, Sync, rest_statement, run_ddl
from service.routes._route import ServiceRoute
from service.routes.ddl import TABLE
from service.state import ServiceState

__all__ = ["PartitionList", "router"]

PARTITIONS = TABLE + "/partitions"


class PartitionList(BaseModel):
    partitions: list[str]
    next_page_token: str | None = None  # with page_size: the page_token of the next page (left out after the last)


def router(state: ServiceState) -> APIRouter:
    routes = APIRouter(route_class=ServiceRoute)

    @routes.get(PARTITIONS, response_model_exclude_none=True)  # no next_page_token: every name, or the last page
    def list_partitions(catalog: str, database: str, table: str, who: Acting,
                        where: Annotated[str | None, Query(description="a predicate on partition columns: dt >= '2024-01-01' "
                                                                       "AND h > 2 (typed comparison)")] = None,
                        page_size: Annotated[int | None, Query(ge=1, description="at most this many names, the answer's "
                                                                                 "next_page_token asking for the rest")] = None,
                        page_token: Annotated[str | None, Query(description="the next_page_token of the page before")] = None,
                        ) -> PartitionList:
        """SHOW PARTITIONS' names in their order, all of them or a page at a time: a page starts after the name
        its token holds, so a partition added or dropped between two pages shifts nothing already seen."""
        statement = ast_ddl.ShowPartitions(ast.TableName(catalog, database, table),
                                           where=None if where is None else parse_expression(where))
        result = state.session(who).execute(statement)
        names, following = page((str(row[0]) for row in result.rows), page_token, page_size, in_order=True)
        return PartitionList(partitions=names, next_page_token=following)

    @routes.post(PARTITIONS)
    def add_partitions(catalog: str, database: str, table: str, body: AddPartitionsBody, request: Request, who: Acting,
                       sync: Sync) -> DdlAnswer:
        node = ast_ddl.AlterTable(ast.TableName(catalog, database, table), body.change(), text=rest_statement(request, body))
        return run_ddl(state, who, catalog, [node], sync)

    @routes.delete(PARTITIONS)
    def drop_partitions(catalog: str, database: str, table: str, request: Request, who: Acting, sync: Sync,
                        name: Annotated[list[str], Query(min_length=1, description="k=v/k2=v2 as SHOW PARTITIONS names it "
                                                                                   "(escaped as Hive escapes); a partial "
                                                                                   "spec drops every partition it matches")],
                        if_exists: bool = False, purge: bool = False) -> DdlAnswer:
        change = specs.DropPartitions(tuple(_spec(each) for each in name), if_exists, purge)
        node = ast_ddl.AlterTable(ast.TableName(catalog, database, table), change, text=rest_statement(request))
        return run_ddl(state, who, catalog, [node], sync)

    @routes.post(PARTITIONS + "/recover")
    def recover_partitions(catalog: str, database: str, table: str, request: Request, who: Acting, sync: Sync,
                           body: RecoverBody | None = None) -> DdlAnswer:
        body = body or RecoverBody()
        node = ast_ddl.AlterTable(ast.TableName(catalog, database, table), body.change(), text=rest_statement(request, body))
        return run_ddl(state, who, catalog, [node], sync)

    return routes


def _spec(name: str) -> specs.PartitionValues:
    if not name or any("=" not in part for part in name.split("/")):
        raise ConfigurationError(f"partition name {name!r} must be k=v or k=v/k2=v2 (as SHOW PARTITIONS names them)")
    return specs.PartitionValues(parse_partition_name(name))
