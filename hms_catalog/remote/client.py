"""A small typed client for the catalog service's REST API (``hms-catalog serve``).

Plain ``http.client``: one keep-alive connection per thread, so a client shared by threads never mixes
their requests and a warm call costs one round trip. Errors come back as the exceptions a local run
raises (NotFoundError, AlreadyExistsError, ...), found by the class name the server sends, with its
message; a server that cannot be reached is a :class:`ServiceError` naming it.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import ssl
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from hms_catalog import errors
from hms_catalog.errors import ConfigurationError, HmsCatalogError, ServiceError

__all__ = ["SERVER_ENV", "TOKEN_ENV", "TOKEN_FILE", "CatalogServiceClient", "resolve_token"]

SERVER_ENV = "HMS_CATALOG_SERVER"
TOKEN_ENV = "HMS_CATALOG_TOKEN"
TOKEN_FILE = "server.token"
_DEFAULT_TIMEOUT = 300.0  # a SELECT or a cold plan of many partitions can take minutes


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
    """Calls to one catalog service at ``url`` (``http[s]://host:port``) with a bearer ``token``.

    ``cafile``: a CA bundle to verify an https server with (its own certificate, when self-signed).
    """

    def __init__(self, url: str, token: str | None = None, *, timeout: float = _DEFAULT_TIMEOUT,
                 cafile: str | None = None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigurationError(f"catalog service URL must be http://host:port or https://host:port, got {url!r}")
        self.url = f"{parts.scheme}://{parts.netloc}"
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._token = token
        self._timeout = timeout
        self._context = ssl.create_default_context(cafile=cafile) if self._https else None
        self._local = threading.local()

    def close(self) -> None:
        """Close this thread's connection (others close with their threads)."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    # The API ---------------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        return self._json("GET", "/v1/health")

    def metrics_text(self) -> str:
        status, _, body = self._request("GET", "/metrics")
        return body.decode("utf-8")

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
        return self._json("PATCH", f"/v1/catalogs/{_segment(name)}", body, if_version=if_version)

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
             columns: list[str] | None = None) -> str:
        """The split plan as the JSON text ``SplitPlan.dumps`` writes (``SplitPlan.loads`` reads it)."""
        body: dict[str, Any] = {}
        if where is not None:
            body["where"] = where
        if columns is not None:
            body["columns"] = list(columns)
        _, _, answer = self._request("POST", _table_path(catalog, database, table) + "/plan", body)
        return answer.decode("utf-8")

    def refresh(self, catalog: str, database: str | None = None, table: str | None = None) -> dict[str, Any]:
        body = {key: value for key, value in (("database", database), ("table", table)) if value is not None}
        return self._json("POST", f"/v1/catalogs/{_segment(catalog)}/refresh", body)

    def cache(self, catalog: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/catalogs/{_segment(catalog)}/cache")

    def schema_cache(self, catalog: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/catalogs/{_segment(catalog)}/schema-cache")

    def changes(self, catalog: str, since: int = 0, wait: float | None = None, follower: str | None = None) -> dict[str, Any]:
        """Changes after version ``since``; with ``wait``, blocks until there is one or ``wait`` seconds pass.

        ``follower``: this client's id; asking from ``since`` then tells the service it has applied every
        change up to it, which a DDL run with sync_ddl waits for.
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
              timeout: float | None = None) -> dict[str, Any]:
        _, _, answer = self._request(method, path, body, if_version=if_version, timeout=timeout)
        if not answer:
            return {}
        try:
            data = json.loads(answer)
        except ValueError as error:
            raise ServiceError(f"the catalog service at {self.url} answered {method} {path} with something not JSON") from error
        if not isinstance(data, dict):
            raise ServiceError(f"the catalog service at {self.url} answered {method} {path} with {type(data).__name__}")
        return data

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None, *, if_version: int | None = None,
                 timeout: float | None = None) -> tuple[int, dict[str, str], bytes]:
        headers = {"Accept": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        if if_version is not None:
            headers["If-Match"] = f'"{if_version}"'
        payload = None
        if body is not None:
            payload = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):  # a kept-alive connection the server closed while idle is reopened once
            reused = getattr(self._local, "connection", None) is not None
            sent = False
            try:
                connection = self._connection(timeout)
                connection.request(method, path, body=payload, headers=headers)
                sent = True
                response = connection.getresponse()
                answer = response.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as error:
                self.close()
                # Not sent: nothing reached the server, so any request may go again. Sent: only those
                # that change nothing may, since the server may have acted on it before closing.
                again = reused and attempt == 1 and (not sent or method in ("GET", "HEAD"))
                if not again:
                    raise ServiceError(f"the catalog service at {self.url} closed the connection: {error}") from error
            except OSError as error:
                self.close()
                raise ServiceError(f"the catalog service at {self.url} cannot be reached: {error}") from error
        if response.status >= 400:
            self._raise(response.status, answer, method, path)
        return response.status, dict(response.getheaders()), answer

    def _connection(self, timeout: float | None) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is not None and connection.sock is not None and _closed_by_peer(connection.sock):
            self.close()  # the server closed it while idle: reopen rather than fail a request on it
            connection = None
        if connection is None:
            if self._https:
                connection = http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout, context=self._context)
            else:
                connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            connection.connect()
            # Requests are small and answered at once: without this, Nagle's algorithm and the peer's
            # delayed ACK hold each exchange for about 40 ms.
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._local.connection = connection
        connection.timeout = timeout or self._timeout
        if connection.sock is not None:
            connection.sock.settimeout(connection.timeout)
        return connection

    def _raise(self, status: int, answer: bytes, method: str, path: str) -> None:
        try:
            error = json.loads(answer)["error"]
            kind, message = str(error["type"]), str(error["message"])
        except (ValueError, KeyError, TypeError):
            raise ServiceError(
                f"the catalog service at {self.url} answered {method} {path} with HTTP {status}: {answer[:200]!r}"
            ) from None
        if status == 401:
            raise ServiceError(
                f"the catalog service at {self.url} refused the request (401: {message}); pass its token with "
                f"--token, ${TOKEN_ENV} or the home's {TOKEN_FILE}"
            )
        found = getattr(errors, kind, None)
        cls = found if isinstance(found, type) and issubclass(found, HmsCatalogError) else HmsCatalogError
        raise _rebuilt(cls, message, error)


def _closed_by_peer(sock: socket.socket) -> bool:
    """Whether an idle kept-alive socket was closed by the other end (readable with nothing to read)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)  # an idle HTTP connection has nothing to read unless it was closed


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
