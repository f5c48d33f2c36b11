"""The refusals the Iceberg REST spec declares for each route, and the status an undeclared one is answered with.

A client maps a route's statuses to its typed exceptions per route (pyiceberg's ``{404: NoSuchTableError}`` for a
load, ``{409: TableAlreadyExistsError}`` for a create), and falls back to a bare ``RESTError`` for a status the
route does not declare: a 406 on a create, a 403 on a view's HEAD, a 404 on the unserved ``sign``, or a 413 from
the body limit would reach it as an error it cannot act on. So a refusal whose status the route does not declare
is answered 400 (every route declares it), its type and message kept; 5xx answers stay as they are (every route
declares ``5XX``). The table is the OpenAPI document's (tests/service/iceberg_rest/test_error_answers.py checks
it is).
"""

from __future__ import annotations

import functools
import re

__all__ = ["DECLARED", "answered_status", "declared"]

_READ = frozenset({400, 401, 403, 404, 419})  # what most routes declare
_CHANGE = _READ | {409}
_RENAME = _CHANGE | {406}
_P = "/v1/{prefix}/namespaces/{namespace}"

# (method, path) -> the 4xx statuses the route declares.
DECLARED: dict[tuple[str, str], frozenset[int]] = {
    ("GET", "/v1/config"): _READ,
    ("POST", "/v1/oauth/tokens"): frozenset({400, 401}),
    ("GET", "/v1/{prefix}/namespaces"): _READ,
    ("POST", "/v1/{prefix}/namespaces"): frozenset({400, 401, 403, 406, 409, 419}),
    ("GET", _P): _READ,
    ("HEAD", _P): _READ,
    ("DELETE", _P): _CHANGE,
    ("POST", f"{_P}/properties"): _READ | {406, 422},
    ("GET", f"{_P}/tables"): _READ,
    ("POST", f"{_P}/tables"): _CHANGE,
    ("GET", f"{_P}/functions"): _READ,
    ("GET", f"{_P}/functions/{{function}}"): _READ,
    ("POST", f"{_P}/tables/{{table}}/plan"): _READ | {406},
    ("GET", f"{_P}/tables/{{table}}/plan/{{plan-id}}"): _READ,
    ("DELETE", f"{_P}/tables/{{table}}/plan/{{plan-id}}"): _READ,
    ("POST", f"{_P}/tables/{{table}}/tasks"): _READ,
    ("POST", f"{_P}/register"): _CHANGE,
    ("GET", f"{_P}/tables/{{table}}"): _READ,
    ("POST", f"{_P}/tables/{{table}}"): _CHANGE,
    ("DELETE", f"{_P}/tables/{{table}}"): _READ,
    ("HEAD", f"{_P}/tables/{{table}}"): _READ,
    ("POST", f"{_P}/tables/{{table}}/unregister"): _READ,
    ("GET", f"{_P}/tables/{{table}}/credentials"): _READ,
    ("POST", f"{_P}/tables/{{table}}/sign"): frozenset({400, 401, 403, 419}),
    ("POST", "/v1/{prefix}/tables/rename"): _RENAME,
    ("POST", f"{_P}/tables/{{table}}/metrics"): _READ,
    ("POST", "/v1/{prefix}/transactions/commit"): _CHANGE,
    ("GET", f"{_P}/views"): _READ,
    ("POST", f"{_P}/views"): _CHANGE,
    ("GET", f"{_P}/views/{{view}}"): _READ,
    ("POST", f"{_P}/views/{{view}}"): _CHANGE,
    ("DELETE", f"{_P}/views/{{view}}"): _READ,
    ("HEAD", f"{_P}/views/{{view}}"): frozenset({400, 401, 404, 419}),  # the spec declares no 403 here
    ("POST", "/v1/{prefix}/views/rename"): _RENAME,
    ("POST", f"{_P}/register-view"): _CHANGE,
}


@functools.cache
def _patterns() -> tuple[tuple[str, re.Pattern[str], frozenset[int]], ...]:
    # Literal segments first: ``tables/rename`` is not the table ``rename`` of the namespace ``tables``.
    ordered = sorted(DECLARED.items(), key=lambda item: item[0][1].count("{"))
    return tuple((method, re.compile(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$"), statuses)
                 for (method, path), statuses in ordered)


def declared(method: str, path: str) -> frozenset[int] | None:
    """The 4xx statuses the spec declares for ``method`` on ``path`` (under ``/iceberg``, as ``/v1/ice/...``);
    None for a request the spec has no route for."""
    for route_method, pattern, statuses in _patterns():
        if route_method == method and pattern.match(path):
            return statuses
    return None


def answered_status(method: str, path: str, status: int) -> int:
    """The status a refusal of ``status`` is answered with: itself if the route declares it (or it is a 5xx, or the
    spec has no such route), else 400."""
    statuses = declared(method, path)
    if status >= 500 or statuses is None or status in statuses:
        return status
    return 400
