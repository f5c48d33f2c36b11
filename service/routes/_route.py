"""The service's own routes: a sync endpoint's JSON answer is written in the worker thread that ran it.

FastAPI runs a sync endpoint in a worker thread, then (when the endpoint has a response model, which a return
annotation such as ``dict[str, Any]`` makes one) goes back to the thread pool a second time to validate and
serialize the answer. The second trip is a quarter of a small answer's time (``GET /v1/health``: 1.13 ms with
it, 0.96 ms without, on two cores). For an answer typed only as a dict or a list of anything, the validation
checks nothing the endpoint's own code does not already say, so such an endpoint is wrapped to serialize its
answer itself, with the same serializer (pydantic's, which writes datetimes, models and dataclasses as FastAPI
would) and the route's status code; FastAPI passes an answer that is already a response through untouched.

Left as FastAPI has them: endpoints with a declared ``response_model`` (validated and filtered by it) or
``response_class``, with a typed model as their answer, async ones (no thread trips to save), and those taking the ``Response`` FastAPI
injects to set headers or a status on the answer it makes.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any

from fastapi import Response
from fastapi.datastructures import DefaultPlaceholder
from fastapi.routing import APIRoute
from pydantic import TypeAdapter

__all__ = ["ServiceRoute"]

_ANY_JSON: TypeAdapter[Any] = TypeAdapter(Any)


class ServiceRoute(APIRoute):
    """The route class of the service's own routers (``APIRouter(route_class=ServiceRoute)``): see the module."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        if _serialized_in_its_thread(endpoint, kwargs):
            endpoint = _answering_json(endpoint, kwargs.get("status_code"))
        super().__init__(path, endpoint, **kwargs)


def _serialized_in_its_thread(endpoint: Callable[..., Any], options: dict[str, Any]) -> bool:
    declared = (options.get(option, DefaultPlaceholder(None)) for option in ("response_model", "response_class"))
    if inspect.iscoroutinefunction(endpoint) or not all(isinstance(value, DefaultPlaceholder) for value in declared):
        return False  # a coroutine, or a response model or class of the route's own
    try:
        hints = typing.get_type_hints(endpoint, include_extras=True)
    except NameError:  # an annotation naming what only FastAPI's own resolution finds: left to it
        return False
    if any(isinstance(hint, type) and issubclass(hint, Response) for name, hint in hints.items() if name != "return"):
        return False
    answer = hints.get("return")
    return typing.get_origin(answer) in (dict, list) and all(
        argument in (str, Any) for argument in typing.get_args(answer))


def _answering_json(endpoint: Callable[..., Any], status_code: int | None) -> Callable[..., Any]:
    @functools.wraps(endpoint)
    def answering(*args: Any, **kwargs: Any) -> Any:
        answer = endpoint(*args, **kwargs)
        if isinstance(answer, Response):
            return answer
        return Response(_ANY_JSON.dump_json(answer), status_code=status_code or 200, media_type="application/json")

    return answering
