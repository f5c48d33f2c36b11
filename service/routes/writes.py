"""Writes through the catalog: a Spark driver begins a job, its tasks write files into the job's staging
folder, and the driver sends the list of files to commit. The commit runs here, under the table's lock and
over this service's metastore pool, so it is one catalog event whoever wrote the files; if the driver dies
before it, the table is as before, and the staging folder goes with the next write.

- ``POST .../tables/{table}/writes``: begin a job on a table (a write token; refused before any file is
  written), answered with its id, staging folder and the table's writer;
- ``POST .../databases/{database}/writes``: begin a CREATE [OR REPLACE] TABLE .. AS SELECT;
- ``POST /v1/catalogs/{catalog}/writes/{job}/alive``: the driver is alive (every 5 s; a job silent for
  30 s is taken for dead, and its staging folder goes with the table's next write);
- ``POST /v1/catalogs/{catalog}/writes/{job}/commit``: commit the listed files;
- ``DELETE /v1/catalogs/{catalog}/writes/{job}``: abort, deleting what the job wrote.

Each begin, commit and abort passes the change gate (:mod:`service.gate`: a line of the audit log, refusals
included); a commit is a change-log entry with source ``write``.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from hms_catalog.ddl.context import DdlContext
from hms_catalog.model import ExternalCatalog
from hms_catalog.write.jobs import jobs_of
from hms_catalog.write.jobs_ops import abort_write, begin_create, begin_write, commit_job
from service.access import Access
from service.ddl_bodies import DdlAnswer
from service.routes._common import Acting, rest_statement
from service.routes._route import ServiceRoute
from service.routes.ddl import DATABASE, TABLE
from service.state import ServiceState
from service.write_bodies import CommitAnswer, CommitBody, NewTableWrite, WriteJobAnswer

__all__ = ["router"]

JOB = "/v1/catalogs/{catalog}/writes/{job}"


def router(state: ServiceState) -> APIRouter:
    routes = APIRouter(route_class=ServiceRoute)

    gate = state.gate

    def context(catalog: str) -> tuple[ExternalCatalog, DdlContext]:
        live = state.manager.catalog(catalog)
        return live, gate.context(live)

    @routes.post(TABLE + "/writes")
    def begin(catalog: str, database: str, table: str, request: Request, who: Acting) -> WriteJobAnswer:
        live, ctx = context(catalog)
        with gate.admitted(who, live.name, rest_statement(request), f"a write to {database}.{table}"):
            job = begin_write(ctx, database, table)
        return WriteJobAnswer(job=job.id, staging=job.staging, target=job.target.descriptor())

    @routes.post(DATABASE + "/writes")
    def begin_table(catalog: str, database: str, body: NewTableWrite, request: Request, who: Acting) -> WriteJobAnswer:
        live, ctx = context(catalog)
        verb = "CREATE OR REPLACE TABLE" if body.replace else "CREATE TABLE"
        with gate.admitted(who, live.name, rest_statement(request, body), f"{verb} {database}.{body.table.name} AS SELECT"):
            job = begin_create(ctx, body.table.spec(database), replace=body.replace)
        return WriteJobAnswer(job=job.id, staging=job.staging, target=job.target.descriptor())

    @routes.post(JOB + "/commit")
    def commit(catalog: str, job: str, body: CommitBody, request: Request, who: Acting) -> CommitAnswer:
        live, ctx = context(catalog)
        shown = f"POST {request.url.path} (mode {body.mode}, {len(body.files)} file(s))"
        with gate.admitted(who, live.name, shown, "a write's commit"):
            outcome = commit_job(ctx, jobs_of(live).get(job), body.request())
        return CommitAnswer.of(outcome)

    @routes.post(JOB + "/alive")
    def alive(catalog: str, job: str, who: Acting) -> DdlAnswer:
        live = state.manager.catalog(catalog)
        who.check(Access.WRITE, live.name, "a write's renewal")  # a heartbeat changes nothing: checked, not audited
        running = jobs_of(live).renew(job)
        return DdlAnswer(result=f"write job {job} of {live.name}.{running.database}.{running.table} is running",
                         version=live.versions.current)

    @routes.delete(JOB)
    def abort(catalog: str, job: str, request: Request, who: Acting) -> DdlAnswer:
        live, ctx = context(catalog)
        with gate.admitted(who, live.name, rest_statement(request), "a write's abort"):
            running = jobs_of(live).get(job)
            abort_write(ctx, running)
        return DdlAnswer(result=f"write job {job} of {live.name}.{running.database}.{running.table} aborted; its files were deleted",
                         version=live.versions.current)

    return routes
