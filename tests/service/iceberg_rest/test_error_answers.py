"""Errors a client can act on: every refusal of the endpoint has a status the OpenAPI document declares for its
route, in the spec's error model with the reason, so that pyiceberg raises its typed exception for it.

The walk drives pyiceberg's RestCatalog into each refusal (a missing namespace, table and view, one that already
exists, a bad request the metastore refused, a forbidden token, a commit conflict) and records every answer its
session received; the routes pyiceberg does not refuse through (plans, tasks, credentials, metrics, ``sign``, a
view's HEAD, an oversized body) are asked on the wire. Each answer is checked against the document itself, read
here independently of the service's table of it (:mod:`service.iceberg_rest.statuses`).
"""

from __future__ import annotations

import functools
import re
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg import exceptions as ice
from pyiceberg.types import StringType

from service.iceberg_rest.statuses import DECLARED, answered_status, declared
from tests.service.iceberg_rest.conftest import CATALOG, OTHER_TOKEN, READ_TOKEN, checked, conforms, rest_catalog
from tests.support.service import Answer, Server

V1 = f"/iceberg/v1/{CATALOG}"
_SPEC = Path(__file__).with_name("rest-catalog-open-api.yaml")


@functools.cache
def _spec_routes() -> dict[tuple[str, str], frozenset[str]]:
    """(method, path template) -> the response codes the document declares (``"404"``, ``"5XX"``)."""
    import yaml

    paths = yaml.safe_load(_SPEC.read_text(encoding="utf-8"))["paths"]
    return {(method.upper(), path): frozenset(str(code) for code in operation["responses"])
            for path, operations in paths.items() for method, operation in operations.items()
            if isinstance(operation, dict) and "responses" in operation}


def _spec_codes(method: str, path: str) -> tuple[str, frozenset[str]]:
    """The route of the document a request's path (under ``/iceberg``) matches, and its declared codes."""
    route = path.removeprefix("/iceberg")
    found = [(template, codes) for (verb, template), codes in _spec_routes().items()
             if verb == method and re.fullmatch(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)), route)]
    found.sort(key=lambda item: item[0].count("{"))  # a literal segment wins: tables/rename is no table
    assert found, f"{method} {path} is no route of the spec"
    return found[0]


def assert_declared(method: str, path: str, status: int, body: bytes) -> None:
    """``status`` is declared for the request's route (``5XX`` covers any 5xx), and its body is the spec's error."""
    template, codes = _spec_codes(method, urllib.parse.urlsplit(path).path)
    assert str(status) in codes or (status >= 500 and "5XX" in codes), \
        f"{method} {template} answered {status}, which it does not declare ({sorted(codes)})"
    if method != "HEAD":
        conforms(Answer(status, {}, body).json(), "IcebergErrorResponse")


def test_the_services_table_is_the_documents() -> None:
    spec = {route: frozenset(int(code) for code in codes if code.isdigit() and 400 <= int(code) < 500)
            for route, codes in _spec_routes().items()}
    assert {(method, path): statuses for (method, path), statuses in DECLARED.items()} == spec
    assert all("5XX" in codes for codes in _spec_routes().values())  # so a 5xx is declared everywhere


@pytest.mark.parametrize(("method", "path", "status", "answered"), [
    ("POST", "/v1/ice/namespaces", 406, 406),  # declared there
    ("POST", "/v1/ice/namespaces/db/tables", 406, 400),  # not declared for a create
    ("POST", "/v1/ice/namespaces/db/register", 406, 400),
    ("HEAD", "/v1/ice/namespaces/db/views/v", 403, 400),
    ("HEAD", "/v1/ice/namespaces/db/tables/t", 403, 403),
    ("POST", "/v1/ice/namespaces/db/tables/t/sign", 404, 400),
    ("POST", "/v1/ice/tables/rename", 406, 406),  # the literal route, not a table named "rename"
    ("DELETE", "/v1/ice/namespaces/db/tables/t", 409, 400),
    ("POST", "/v1/ice/namespaces/db/tables/t", 413, 400),
    ("POST", "/v1/ice/namespaces/db/tables/t", 504, 504),  # 5XX everywhere
    ("GET", "/v1/ice/nothing/here", 404, 404),  # no route of the spec: as it is
])
def test_an_undeclared_refusal_is_answered_400(method: str, path: str, status: int, answered: int) -> None:
    assert answered_status(method, path, status) == answered
    assert declared("GET", "/v1/ice/nothing/here") is None


class _Recorded:
    """Every error answer a RestCatalog's session receives: (method, path, status, body)."""

    def __init__(self) -> None:
        self.answers: list[tuple[str, str, int, bytes]] = []

    def __call__(self, response: Any, *args: Any, **kwargs: Any) -> Any:
        if response.status_code >= 400:
            self.answers.append((response.request.method, response.request.path_url, response.status_code, response.content))
        return response


def _recording(server: Server, recorded: _Recorded, token: str | None = None) -> Any:
    catalog = rest_catalog(server, token)
    catalog._session.hooks["response"].append(recorded)
    return catalog


def test_pyiceberg_raises_its_typed_exception_for_each_refusal(iceberg_service: Server, namespace: str) -> None:
    recorded = _Recorded()
    rest = _recording(iceberg_service, recorded)
    ro = _recording(iceberg_service, recorded, READ_TOKEN)
    schema = pa.schema([("id", pa.int64())])
    rest.create_table((namespace, "t"), schema=schema)
    missing = f"{namespace}_missing"
    cases: list[tuple[Callable[[], object], type[Exception], str]] = [
        (lambda: rest.load_namespace_properties(missing), ice.NoSuchNamespaceError, missing),
        (lambda: rest.update_namespace_properties(missing, updates={"a": "1"}), ice.NoSuchNamespaceError, missing),
        (lambda: rest.list_tables(missing), ice.NoSuchNamespaceError, missing),
        (lambda: rest.list_views(missing), ice.NoSuchNamespaceError, missing),
        (lambda: rest.drop_namespace(missing), ice.NoSuchNamespaceError, missing),
        (lambda: rest.create_table((missing, "t"), schema=schema), ice.NoSuchNamespaceError, missing),
        (lambda: rest.create_namespace(namespace), ice.NamespaceAlreadyExistsError, namespace),
        (lambda: rest.drop_namespace(namespace), ice.NamespaceNotEmptyError, namespace),
        (lambda: rest.load_table((namespace, "nope")), ice.NoSuchTableError, "nope"),
        (lambda: rest.drop_table((namespace, "nope")), ice.NoSuchTableError, "nope"),
        (lambda: rest.rename_table((namespace, "nope"), (namespace, "other")), ice.NoSuchTableError, "nope"),
        (lambda: rest.create_table((namespace, "t"), schema=schema), ice.TableAlreadyExistsError, "already exists"),
        (lambda: rest.rename_table((namespace, "t"), (namespace, "t")), ice.TableAlreadyExistsError, "already exists"),
        (lambda: rest.register_table((namespace, "t"), rest.load_table((namespace, "t")).metadata_location),
         ice.TableAlreadyExistsError, "already exists"),
        (lambda: rest.load_view((namespace, "nope")), ice.NoSuchViewError, "nope"),
        (lambda: rest.drop_view((namespace, "nope")), ice.NoSuchViewError, "nope"),
        # the metastore's own refusal (Hive 2.3 keeps a database's comment), with its reason
        (lambda: rest.update_namespace_properties(namespace, updates={"comment": "sales"}), ice.BadRequestError,
         "does not support altering a database's comment"),
        (lambda: ro.create_namespace(f"{namespace}_ro"), ice.ForbiddenError, "may read"),
        (lambda: ro.drop_table((namespace, "t")), ice.ForbiddenError, "may read"),
        (lambda: ro.load_table((namespace, "t")).update_schema().add_column("x", StringType()).commit(), ice.ForbiddenError,
         "may read"),
    ]
    for act, expected, reason in cases:
        with pytest.raises(expected) as raised:
            act()
        assert reason in str(raised.value), (expected, raised.value)
    # a commit conflict: both loaded the same schema, the second change of it is refused, and may be retried
    first, second = rest.load_table((namespace, "t")), rest.load_table((namespace, "t"))
    with first.update_schema() as update:
        update.add_column("a", StringType())
    with pytest.raises(ice.CommitFailedException, match="schema"):
        with second.update_schema() as update:
            update.add_column("b", StringType())
    assert [field.name for field in rest.load_table((namespace, "t")).schema().fields] == ["id", "a"]

    seen = {(method, _spec_codes(method, urllib.parse.urlsplit(path).path)[0], status)
            for method, path, status, _ in recorded.answers}
    assert {status for _, _, status in seen} == {400, 403, 404, 409}, seen
    for method, path, status, body in recorded.answers:
        assert_declared(method, path, status, body)


def test_the_other_routes_refuse_with_declared_statuses(iceberg_service: Server, namespace: str) -> None:
    table = rest_catalog(iceberg_service).create_table((namespace, "t"), schema=pa.schema([("id", pa.int64())]))
    tables = f"{V1}/namespaces/{namespace}/tables"
    cases: list[tuple[str, str, Any, str | None, int, str]] = [
        ("POST", f"{tables}/nope/plan", {}, "", 404, "NoSuchTableException"),
        ("GET", f"{tables}/t/plan/no-such-plan", None, "", 404, ""),
        ("DELETE", f"{tables}/t/plan/no-such-plan", None, "", 404, ""),
        ("POST", f"{tables}/t/tasks", {"plan-task": "no-such-task"}, "", 404, ""),
        ("POST", f"{tables}/t/plan", {"filter": {"type": "no-such-expression", "term": "id"}}, "", 400, "BadRequestException"),
        ("GET", f"{tables}/nope/credentials", None, "", 404, "NoSuchTableException"),
        ("POST", f"{tables}/nope/metrics", {"report-type": "scan-report"}, "", 404, "NoSuchTableException"),
        ("POST", f"{tables}/t/plan", {}, OTHER_TOKEN, 403, "ForbiddenException"),
        # answered 400 where the route declares no 406, 403, 404 or 413: with the type and reason kept
        ("POST", f"{V1}/namespaces/{namespace}/register",
         {"name": "again", "metadata-location": table.metadata_location, "overwrite": True}, "", 400,
         "UnsupportedOperationException"),
        ("POST", f"{tables}/t/sign", {"method": "GET", "uri": "s3://b/k", "region": "us-east-1", "headers": {}}, "", 400,
         "NotFoundException"),
        ("POST", f"{tables}/t", b"{" + b" " * (1024 * 1024) + b"}", "", 400, "BadRequestException"),
        ("HEAD", f"{V1}/namespaces/{namespace}/views/v", None, OTHER_TOKEN, 400, ""),
    ]
    for method, path, body, token, status, kind in cases:
        answer = iceberg_service.request(method, path, body, token=token,
                                         headers={"Content-Type": "application/json"} if isinstance(body, bytes) else None)
        assert answer.status == status, (method, path, answer.status, answer.body[:500])
        assert_declared(method, path, answer.status, answer.body)
        if kind:
            error = checked(answer, status, "IcebergErrorResponse")["error"]
            assert error["type"] == kind and error["code"] == status and error["message"], error
