"""The service's route class: a sync endpoint answering a plain dict or list is serialized in the worker thread
that ran it (one trip to the thread pool a request, not two), and answers exactly as FastAPI's own
serialization would; what FastAPI must still do (a declared response model or class, an injected Response) is
left to it. The real service's routes are checked end to end by the API tests; this counts the trips."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import pytest
from fastapi import APIRouter, FastAPI, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel

from service.access import Access, Principal
from service.middleware import PRINCIPAL
from service.routes import browse, health
from service.routes._common import Acting
from service.routes._route import ServiceRoute


class _Stamped(JSONResponse):
    media_type = "application/vnd.stamped+json"


class Shown(BaseModel):
    name: str
    secret: str | None = None


class Public(BaseModel):
    name: str


def _answer() -> dict[str, Any]:
    return {"when": datetime.datetime(2026, 11, 30, 10, 0, tzinfo=datetime.UTC), "model": Shown(name="n"),
            "text": "é\u2603", "numbers": [1, 2.5, None], "date": datetime.date(2026, 1, 2)}


def _app(route_class: type) -> FastAPI:
    routes = APIRouter(route_class=route_class)

    @routes.get("/plain")
    def plain() -> dict[str, Any]:
        return _answer()

    @routes.get("/listed")
    def listed() -> list[Any]:
        return [1, "two"]

    @routes.post("/made", status_code=202)
    def made() -> dict[str, Any]:
        return {"made": True}

    @routes.get("/headed")
    def headed(response: Response) -> dict[str, Any]:
        response.headers["ETag"] = '"7"'
        return {"version": 7}

    @routes.get("/declared", response_model=Public)
    def declared() -> Any:
        return Shown(name="n", secret="kept out by the response model")

    @routes.get("/acting")
    def acting(who: Acting) -> dict[str, Any]:
        return {"who": who.principal.name}

    @routes.get("/stamped", response_class=_Stamped)
    def stamped() -> dict[str, Any]:
        return {"shown": "as the route's class writes it"}

    @routes.get("/own")
    def own() -> Response:
        return Response("as it is", media_type="text/plain")

    app = FastAPI()
    app.include_router(routes)
    return app


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Each trip a request makes to the thread pool, by the name of what ran there."""
    made: list[str] = []
    real = anyio.to_thread.run_sync

    async def counted(function: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(getattr(function, "__name__", repr(function)))
        return await real(function, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    yield made


@dataclass
class _Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def _call(app: FastAPI, method: str, path: str) -> _Answer:
    """One request straight into the application, as the gate leaves it (its principal in the scope)."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "path": path,
             "raw_path": path.encode(), "query_string": b"", "headers": [], "client": ("127.0.0.1", 50000),
             "server": ("testserver", 80), "scheme": "http", "root_path": "",
             PRINCIPAL: Principal("reader", Access.READ)}
    anyio.run(app, scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return _Answer(start["status"], {k.decode().lower(): v.decode() for k, v in start["headers"]}, body)


def _get(app: FastAPI, path: str, trips: list[str], method: str = "GET") -> tuple[_Answer, list[str]]:
    trips.clear()
    answer = _call(app, method, path)
    return answer, list(trips)


@pytest.mark.parametrize(("method", "path"), [("GET", "/plain"), ("GET", "/listed"), ("POST", "/made")])
def test_a_plain_answer_is_one_trip_and_the_same_answer(trips: list[str], method: str, path: str) -> None:
    ours, our_trips = _get(_app(ServiceRoute), path, trips, method)
    theirs, their_trips = _get(_app(APIRoute), path, trips, method)
    assert len(our_trips) == 1 and len(their_trips) == 2
    assert (ours.status, ours.headers["content-type"], ours.body) == (theirs.status, theirs.headers["content-type"], theirs.body)
    assert ours.status == (202 if method == "POST" else 200)


def test_what_fastapi_must_do_is_left_to_it(trips: list[str]) -> None:
    app = _app(ServiceRoute)
    headed, _ = _get(app, "/headed", trips)
    assert headed.headers["etag"] == '"7"' and headed.json() == {"version": 7}
    declared, _ = _get(app, "/declared", trips)
    assert declared.json() == {"name": "n"}  # the declared model still leaves the secret out
    stamped, made = _get(app, "/stamped", trips)
    assert stamped.headers["content-type"] == _Stamped.media_type and len(made) == 2
    assert stamped.json() == {"shown": "as the route's class writes it"}
    own, _ = _get(app, "/own", trips)
    assert own.body == b"as it is"


def test_who_is_asking_costs_no_trip(trips: list[str]) -> None:
    """The principal is read from the request's scope by a coroutine: a plain function would be a trip of its own."""
    acting, made = _get(_app(ServiceRoute), "/acting", trips)
    assert acting.json() == {"who": "reader"} and len(made) == 1


def test_the_service_reads_answer_in_one_trip() -> None:
    """The routes a browser and a client call most (the console's pages) are the serialized-in-thread kind."""
    from unittest import mock

    state = mock.MagicMock()
    wrapped = {route.path for module in (browse, health) for route in module.router(state).routes
               if hasattr(getattr(route, "endpoint", None), "__wrapped__")}
    assert {"/v1/health", "/v1/catalogs/{catalog}/databases", "/v1/catalogs/{catalog}/databases/{database}/tables"} <= wrapped
