"""A small typed client for the catalog service's REST API (``hms-catalog serve``).

Plain ``http.client``: one keep-alive connection per thread, so a client shared by threads never mixes
their requests and a warm call costs one round trip; several replicas of the service are failed over
between as the metastore pool fails over between thrift URIs (:mod:`hms_catalog.remote._replicas`). Errors
come back as the exceptions a local run raises (NotFoundError, AlreadyExistsError, ...), found by the class
name the server sends, with its message; a service that cannot be reached is a :class:`ServiceError`
naming each URL tried and why it failed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from hms_catalog import errors
from hms_catalog.errors import HmsCatalogError, ServiceError
from hms_catalog.remote._replicas import Answer, Replicas, parse_urls

__all__ = ["SERVER_ENV", "TOKEN_ENV", "TOKEN_FILE", "CatalogServiceClient", "resolve_token"]

SERVER_ENV = "HMS_CATALOG_SERVER"
TOKEN_ENV = "HMS_CATALOG_TOKEN"
TOKEN_FILE = "server.token"
_DEFAULT_TIMEOUT = 300.0  # a SELECT or a cold plan of many partitions can take minutes
_CONNECT_TIMEOUT = 10.0  # a replica that accepts no connection in this long is taken for away


def resolve_token(token: str | None, home: Path | None) -> str | None:
    """The token to send: given, else ``$HMS_CATALOG_TOKEN``, else the home's ``server.token`` if readable."""
    if token:
        return token
    if os.environ.get(TOKEN_ENV):
        return os.environ[TOKEN_ENV]
    if home is not None:
        try:
            return (home / TOKEN_FILE).read_text(encoding="utf-8").strip() or None
        except OSError:
            return None
    return None


class CatalogServiceClient:
    """Calls to a catalog service at ``urls`` (``http[s]://host:port``) with a bearer ``token``.

    ``urls``: one URL, several comma-separated in one string, or a sequence of them: the replicas of one
    service over one shared store. Requests go to the one that answered last and fail over to the next
    when it cannot be reached or answers 503 (see :mod:`hms_catalog.remote._replicas` for which requests
    may be sent again). ``timeout`` bounds an answer, ``connect_timeout`` opening a connection: a replica
    that does not accept one within it counts as away. ``cafile``: a CA bundle to verify an https server
    with (its own certificate, when self-signed).
    """

    def __init__(self, urls: str | Sequence[str], token: str | None = None, *, timeout: float = _DEFAULT_TIMEOUT,
                 connect_timeout: float = _CONNECT_TIMEOUT, cafile: str | None = None) -> None:
        self._replicas = Replicas(parse_urls(urls), timeout=timeout, connect_timeout=connect_timeout, cafile=cafile)
        self._token = token
        self._timeout = timeout

    @property
    def url(self) -> str:
        """The URL requests go to first: the replica that answered last."""
        return self._replicas.current.url

    @property
    def urls(self) -> tuple[str, ...]:
        """Every replica's URL, in the order given."""
        return tuple(replica.url for replica in self._replicas.replicas)

    def close(self) -> None:
        """Close this thread's connection (others close with their threads)."""
        self._replicas.close()

    # The API ---------------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        return self._json("GET", "/v1/health")

    def metrics_text(self) -> str:
        return self._request("GET", "/metrics").body.decode("utf-8")

    def catalogs(self) -> list[dict[str, Any]]:
        return list(self._json("GET", "/v1/catalogs")["catalogs"])

    def create_catalog(self, name: str, properties: Mapping[str, str], comment: str = "") -> dict[str, Any]:
        return self._json("POST", "/v1/catalogs", {"name": name, "comment": comment, "properties": dict(properties)})

    def catalog(self, name: str) -> dict[str, Any]:
        """The definition, secrets masked; its ``version`` is what :meth:`alter_catalog` may expect."""
        return self._json("GET", f"/v1/catalogs/{_segment(name)}")

    def alter_catalog(self, name: str, *, properties: Mapping[str, str] | None = None, rename: str | None = None,
                      if_version: int | None = None) -> dict[str, Any]:
        """Merge ``properties`` and/or rename; with ``if_version``, only if the catalog is still at it."""
        body: dict[str, Any] = {}
        if properties is not None:
            body["properties"] = dict(properties)
        if rename is not None:
            body["rename"] = rename
        # Merging properties twice is merging them once; a rename or a version check is not repeatable.
        return self._json("PATCH", f"/v1/catalogs/{_segment(name)}", body, if_version=if_version,
                          repeatable=rename is None and if_version is None)

    def drop_catalog(self, name: str, *, if_version: int | None = None) -> None:
        self._json("DELETE", f"/v1/catalogs/{_segment(name)}", if_version=if_version)

    def databases(self, catalog: str) -> list[str]:
        return list(self._json("GET", f"/v1/catalogs/{_segment(catalog)}/databases")["databases"])

    def tables(self, catalog: str, database: str, like: str | None = None) -> list[str]:
        query = f"?{urlencode({'like': like})}" if like is not None else ""
        path = f"/v1/catalogs/{_segment(catalog)}/databases/{_segment(database)}/tables{query}"
        return list(self._json("GET", path)["tables"])

    def table(self, catalog: str, database: str, table: str) -> dict[str, Any]:
        return self._json("GET", _table_path(catalog, database, table))

    def plan(self, catalog: str, database: str, table: str, where: str | None = None,
             columns: list[str] | None = None, *, into: Callable[[bytes], None] | None = None) -> str:
        """The split plan as the JSON text ``SplitPlan.dumps`` writes (``SplitPlan.loads`` reads it).

        ``into``: the text goes to it piece by piece as the service streams it, never held whole, and ""
        is returned (``planner.plan_json.PlanReader().feed`` reads a plan so; ``planner.fetch_plan`` does it)."""
        body: dict[str, Any] = {}
        if where is not None:
            body["where"] = where
        if columns is not None:
            body["columns"] = list(columns)
        return self._request("POST", _table_path(catalog, database, table) + "/plan", body,
                             repeatable=True, sink=into).body.decode("utf-8")  # a plan changes nothing

    def refresh(self, catalog: str, database: str | None = None, table: str | None = None) -> dict[str, Any]:
        body = {key: value for key, value in (("database", database), ("table", table)) if value is not None}
        return self._json("POST", f"/v1/catalogs/{_segment(catalog)}/refresh", body, repeatable=True)  # twice is once

    def cache(self, catalog: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/catalogs/{_segment(catalog)}/cache")

    def schema_cache(self, catalog: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/catalogs/{_segment(catalog)}/schema-cache")

    def changes(self, catalog: str, since: int = 0, wait: float | None = None, follower: str | None = None) -> dict[str, Any]:
        """Changes after version ``since``; with ``wait``, blocks until there is one or ``wait`` seconds pass.

        ``follower``: this client's id; asking from ``since`` then tells the service it has applied every
        change up to it, which a DDL run with sync_ddl waits for. A replica that goes away mid-poll is
        left for the next, asked from the same ``since``: replicas share one store, which numbers the
        changes, so a version means the same change on every one.
        """
        query: dict[str, Any] = {"since": since}
        if wait is not None:
            query["wait"] = wait
        if follower is not None:
            query["follower"] = follower
        return self._json("GET", f"/v1/catalogs/{_segment(catalog)}/changes?{urlencode(query)}",
                          timeout=self._timeout + (wait or 0.0))

    def statement(self, sql: str, catalog: str | None = None, database: str | None = None, *,
                  options: Mapping[str, str] | None = None, sync_ddl: bool = False) -> dict[str, Any]:
        """Run statements on the server with this current catalog and database; rows as JSON (see values.py).

        ``options``: session options (``SET sync_ddl = true`` and the like) for the statements to run with.
        """
        body = {"sql": sql, "catalog": catalog, "database": database, "options": dict(options) if options else None,
                "sync_ddl": sync_ddl or None}
        return self._json("POST", "/v1/statements", {k: v for k, v in body.items() if v is not None})

    # DDL: each answers {"result": what was done, "version": the catalog's version after it} -------------

    def create_database(self, catalog: str, name: str, **options: Any) -> dict[str, Any]:
        """``options``: comment, location, properties, if_not_exists (as the body of POST .../databases)."""
        return self._json("POST", f"/v1/catalogs/{_segment(catalog)}/databases", {"name": name, **options})

    def alter_database(self, catalog: str, database: str, properties: Mapping[str, str]) -> dict[str, Any]:
        return self._json("PATCH", _database_path(catalog, database), {"properties": dict(properties)})

    def drop_database(self, catalog: str, database: str, *, cascade: bool = False, if_exists: bool = False) -> dict[str, Any]:
        return self._json("DELETE", _database_path(catalog, database) + _flags(cascade=cascade, if_exists=if_exists))

    def create_table(self, catalog: str, database: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``body`` as POST .../tables takes it: ``{"name", "columns": [{"name", "type"}], ...}`` or ``{"name", "like"}``."""
        return self._json("POST", _database_path(catalog, database) + "/tables", dict(body))

    def alter_table(self, catalog: str, database: str, table: str, changes: list[Mapping[str, Any]], *,
                    if_version: int | None = None, sync_ddl: bool = False) -> dict[str, Any]:
        """``changes`` in order (``{"op": "add_columns", "columns": [...]}``, ...); with ``if_version``, only if
        the table is still at the version its :meth:`table` reported."""
        return self._json("PATCH", _table_path(catalog, database, table) + _flags(sync_ddl=sync_ddl),
                          {"changes": [dict(change) for change in changes]}, if_version=if_version)

    def drop_table(self, catalog: str, database: str, table: str, *, purge: bool = False, if_exists: bool = False) -> dict[str, Any]:
        return self._json("DELETE", _table_path(catalog, database, table) + _flags(purge=purge, if_exists=if_exists))

    def partitions(self, catalog: str, database: str, table: str, where: str | None = None) -> list[str]:
        """Partition names (``k=v/k2=v2``), narrowed by ``where`` as SHOW PARTITIONS ... WHERE narrows them."""
        query = "" if where is None else f"?{urlencode({'where': where})}"
        return list(self._json("GET", _table_path(catalog, database, table) + "/partitions" + query)["partitions"])

    def add_partitions(self, catalog: str, database: str, table: str, partitions: list[Mapping[str, Any]], *,
                       if_not_exists: bool = False) -> dict[str, Any]:
        """``partitions``: ``{"values": {"dt": "2024-01-01"}, "location": ...}`` each."""
        body = {"partitions": [dict(partition) for partition in partitions], "if_not_exists": if_not_exists}
        return self._json("POST", _table_path(catalog, database, table) + "/partitions", body)

    def drop_partitions(self, catalog: str, database: str, table: str, names: list[str], *, if_exists: bool = False,
                        purge: bool = False) -> dict[str, Any]:
        query = urlencode([("name", name) for name in names] + [("if_exists", _flag(if_exists)), ("purge", _flag(purge))])
        return self._json("DELETE", _table_path(catalog, database, table) + f"/partitions?{query}")

    def recover_partitions(self, catalog: str, database: str, table: str, *, add: bool = True, drop: bool = False) -> dict[str, Any]:
        return self._json("POST", _table_path(catalog, database, table) + "/partitions/recover", {"add": add, "drop": drop})

    # Transport -------------------------------------------------------------------------------------

    def _json(self, method: str, path: str, body: Mapping[str, Any] | None = None, *, if_version: int | None = None,
              timeout: float | None = None, repeatable: bool = False) -> dict[str, Any]:
        answer = self._request(method, path, body, if_version=if_version, timeout=timeout, repeatable=repeatable)
        if not answer.body:
            return {}
        try:
            data = json.loads(answer.body)
        except ValueError as error:
            raise ServiceError(f"the catalog service at {answer.url} answered {method} {path} with something not JSON") from error
        if not isinstance(data, dict):
            raise ServiceError(f"the catalog service at {answer.url} answered {method} {path} with {type(data).__name__}")
        return data

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None, *, if_version: int | None = None,
                 timeout: float | None = None, repeatable: bool = False,
                 sink: Callable[[bytes], None] | None = None) -> Answer:
        headers = {"Accept": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        if if_version is not None:
            headers["If-Match"] = f'"{if_version}"'
        payload = None
        if body is not None:
            payload = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        answer = self._replicas.send(method, path, payload, headers, timeout, repeatable=repeatable, sink=sink)
        if answer.status >= 400:
            self._raise(answer, method, path)
        return answer

    def _raise(self, answer: Answer, method: str, path: str) -> None:
        status = answer.status
        try:
            error = json.loads(answer.body)["error"]
            kind, message = str(error["type"]), str(error["message"])
        except (ValueError, KeyError, TypeError):
            raise ServiceError(
                f"the catalog service at {answer.url} answered {method} {path} with HTTP {status}: {answer.body[:200]!r}"
            ) from None
        if status == 401:
            raise ServiceError(
                f"the catalog service at {answer.url} refused the request (401: {message}); pass its token with "
                f"--token, ${TOKEN_ENV} or the home's {TOKEN_FILE}"
            )
        found = getattr(errors, kind, None)
        cls = found if isinstance(found, type) and issubclass(found, HmsCatalogError) else HmsCatalogError
        raise _rebuilt(cls, message, error)


def _rebuilt(cls: type[HmsCatalogError], message: str, details: Mapping[str, Any]) -> HmsCatalogError:
    """An exception of ``cls`` whose message is the server's, bypassing constructors that build their own
    (NotFoundError takes a kind and a name); the attributes the server sent along are set on it."""
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    for key, value in details.items():
        if key not in ("type", "message"):
            setattr(error, key, value)
    return error


def _segment(name: str) -> str:
    return quote(name, safe="")


def _database_path(catalog: str, database: str) -> str:
    return f"/v1/catalogs/{_segment(catalog)}/databases/{_segment(database)}"


def _table_path(catalog: str, database: str, table: str) -> str:
    return f"{_database_path(catalog, database)}/tables/{_segment(table)}"


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _flags(**flags: bool) -> str:
    """Query flags that are set, as ``?a=true&b=true`` (none: "")."""
    set_ = [(name, _flag(True)) for name, value in flags.items() if value]
    return f"?{urlencode(set_)}" if set_ else ""
