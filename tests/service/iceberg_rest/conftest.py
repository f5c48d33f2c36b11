"""A served service whose catalog ``ice`` is the session's metastore, reached with pyiceberg's RestCatalog.

Named tokens: ``ro`` reads, ``etl`` changes ``ice`` only, ``other`` changes another catalog only. Every answer
the tests read through :func:`checked` is validated against the Iceberg REST OpenAPI document's schemas.
"""

from __future__ import annotations

import contextlib
import functools
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.service import Answer, Server, served, tokens_file

CATALOG = "ice"
READ_TOKEN = "iceberg-read-token-of-the-tests-01"
WRITE_TOKEN = "iceberg-etl-token-of-the-tests-002"
OTHER_TOKEN = "iceberg-other-token-of-the-tests-3"
TOKENS = {"tokens": [{"name": "ro", "token": READ_TOKEN, "access": "read"},
                     {"name": "etl", "token": WRITE_TOKEN, "access": "write", "catalogs": [CATALOG]},
                     {"name": "other", "token": OTHER_TOKEN, "access": "write", "catalogs": ["elsewhere"]}]}
EVENTS = {"hive.enable_hms_events_incremental_sync": "true", "hive.hms_events_polling_interval_ms": "200"}


@pytest.fixture(scope="package")
def iceberg_service(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("iceberg-rest")
    tokens = tokens_file(directory / "tokens.json", TOKENS)
    with serving_ice(directory / "home", metastore_uri, "--tokens", str(tokens)) as running:
        yield running


@contextlib.contextmanager
def serving_ice(home: Path, metastore_uri: str, *extra: str) -> Iterator[Server]:
    """A served service (``serve`` with ``extra``) whose catalog ``ice`` is the metastore at ``metastore_uri``."""
    with served(home, *extra) as running:
        client = running.client()
        try:
            client.create_catalog(CATALOG, {"type": "hms", "hive.metastore.uris": metastore_uri, **EVENTS})
        finally:
            client.close()
        yield running


def rest_catalog(server: Server, token: str | None = None, **properties: str) -> Any:
    """pyiceberg's RestCatalog on the service's ``ice`` catalog (the server's own token unless ``token``)."""
    from pyiceberg.catalog.rest import RestCatalog

    if "credential" not in properties:
        properties["token"] = token or server.token
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pyiceberg's note about the oauth2-server-uri default
        opened = RestCatalog("rest", uri=f"{server.url}/iceberg", warehouse=CATALOG, **properties)
    _OPENED.append(opened)
    return opened


_OPENED: list[Any] = []  # the tests' RestCatalogs, closed after each test (an unclosed socket warns, and warnings fail)


@pytest.fixture(autouse=True)
def _close_catalogs() -> Iterator[None]:
    yield
    while _OPENED:
        _OPENED.pop().close()


@pytest.fixture
def rest(iceberg_service: Server) -> Any:
    return rest_catalog(iceberg_service)


@pytest.fixture
def namespace(rest: Any, unique_name: str) -> Iterator[str]:
    """A namespace of its own for one test, dropped after with whatever tables remain."""
    rest.create_namespace(unique_name)
    yield unique_name
    for identifier in rest.list_tables(unique_name):
        rest.drop_table(identifier, purge_requested=True)
    rest.drop_namespace(unique_name)


_SPEC = Path(__file__).with_name("rest-catalog-open-api.yaml")
_BASE = "urn:iceberg-rest-catalog-open-api"


@functools.cache
def _registry() -> Any:
    import yaml
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    document = _nullable(yaml.safe_load(_SPEC.read_text(encoding="utf-8")))
    # PrimitiveTypeValue is "oneOf" kinds that overlap (every date is a string, every int a long and a double), so
    # no value would pass: it is any of them, as meant (a value's kind follows from its field's type).
    primitive = document["components"]["schemas"]["PrimitiveTypeValue"]
    primitive["anyOf"] = primitive.pop("oneOf")
    return Registry().with_resource(_BASE, DRAFT202012.create_resource(document))


def _nullable(node: Any) -> Any:
    """The document still marks some schemas ``nullable: true`` (OpenAPI 3.0's spelling, which JSON Schema ignores):
    as a type that also allows null, as the spec means (``next-page-token`` is null on the last page)."""
    if isinstance(node, dict):
        node = {key: _nullable(value) for key, value in node.items()}
        if node.get("nullable") is True and isinstance(node.get("type"), str):
            node["type"] = [node["type"], "null"]
        return node
    if isinstance(node, list):
        return [_nullable(item) for item in node]
    return node


def conforms(body: Any, schema: str) -> Any:
    """``body`` checked against the OpenAPI document's ``components/schemas/<schema>`` (raises if it does not)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator({"$ref": f"{_BASE}#/components/schemas/{schema}"}, registry=_registry())
    validator.validate(body)
    return body


def checked(answer: Answer, status: int, schema: str | None) -> Any:
    """The JSON of an answer of ``status``, checked against ``schema`` (an error answer: IcebergErrorResponse)."""
    assert answer.status == status, (answer.status, answer.body[:2000])
    if schema is None:
        return None
    return conforms(answer.json(), schema)


def audit_lines(server: Server) -> list[dict[str, Any]]:
    path = Path(server.home) / "audit.log"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


__all__ = ["CATALOG", "OTHER_TOKEN", "READ_TOKEN", "WRITE_TOKEN", "audit_lines", "checked", "conforms", "rest_catalog"]
