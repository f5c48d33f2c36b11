"""The timed calls of the catalog benchmark: each operation through the service's REST API, its thrift endpoint and
the console's page, and the metastore's own answer to the same call as the peer, all in one run.

- **peer**: the metastore's thrift API on one open connection (as an engine holds one), the median of ``repeat`` calls
  after one untimed call, so the peer is the metastore at its best: its JVM warm, PostgreSQL's pages cached.
- **thrift**: the service's endpoint on one open connection, the same call and arguments.
- **REST**: :class:`CatalogServiceClient`, the route the operation maps to.
- **console**: the page's own requests on one kept-alive HTTP connection, as a browser sends them when the page is
  opened: ``GET /ui/`` (the page) and the API calls its view makes (``views/browse.js``); the rendering is not timed.

Cold is the service's catalog dropped first (``POST .../refresh``, not timed), so every cache misses; warm is after
:func:`warm_up` has loaded every table. Metastore calls are counted at the server (Hive's audit log) for one call of
each.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from _common import progress
from _scale_catalog import Shape
from _scale_listing import _thrift
from _scale_planning import audited

from hms_catalog.client.hive_thrift import MetastoreThriftClient, ttypes
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.remote import CatalogServiceClient

__all__ = ["Console", "Surfaces", "operations", "surfaces", "time_operations", "warm_up"]

SEARCH = "t042"  # a table name every database has: a search across the catalog finds one a database
SEARCH_IN_DATABASE = ("t04*", "t04%")  # the same search in one database, as Hive's pattern and as SQL LIKE


class Console:
    """The console's requests on one kept-alive connection, with the token in the header as the page sends it."""

    def __init__(self, url: str, token: str) -> None:
        parts = urlsplit(url)
        self._connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=3600)
        self._headers = {"Accept": "application/json", "Authorization": f"Bearer {token}"}

    def get(self, path: str) -> bytes:
        try:
            self._connection.request("GET", path, headers=self._headers)
            answer = self._connection.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self._connection.close()  # the service closed it after its keep-alive time: a browser connects again
            self._connection.request("GET", path, headers=self._headers)
            answer = self._connection.getresponse()
        body = answer.read()
        if answer.status >= 400:
            raise SystemExit(f"the console's GET {path} answered {answer.status}: {body[:500]!r}")
        return body

    def page(self, *paths: str) -> int:
        """The page (``/ui/``) and the API calls its view makes; the bytes they answered."""
        return sum(len(self.get(path)) for path in ("/ui/", *paths))

    def close(self) -> None:
        self._connection.close()


@dataclass
class Surfaces:
    """What the calls go through: the metastore itself, and the service's three front ends."""

    metastore: MetastoreThriftClient
    endpoint: MetastoreThriftClient
    rest: CatalogServiceClient
    console: Console
    catalog: str


@contextlib.contextmanager
def surfaces(metastore: EmbeddedMetastore, thrift_port: int, rest: CatalogServiceClient, url: str, token: str,
             catalog: str) -> Iterator[Surfaces]:
    metastore_port = int(metastore.uri.rsplit(":", 1)[1])
    console = Console(url, token)
    try:
        with _thrift(metastore_port) as direct, _thrift(thrift_port) as endpoint:
            yield Surfaces(direct, endpoint, rest, console, catalog)
    finally:
        console.close()


Call = Callable[[Surfaces], Any]


def operations(shape: Shape, catalog: str) -> dict[str, dict[str, Call]]:
    """Each operation: the metastore's own call (``peer``) and the same thing through each front end that has it."""
    database, table = shape.middle()
    api = f"/v1/catalogs/{quote(catalog)}"
    like, pattern = SEARCH_IN_DATABASE[1], SEARCH_IN_DATABASE[0]
    every = [shape.database(d) for d in range(shape.databases)]
    return {
        "SHOW DATABASES": {
            "peer": lambda s: s.metastore.get_all_databases(),
            "thrift": lambda s: s.endpoint.get_all_databases(),
            "REST": lambda s: s.rest.databases(catalog),
            "console": lambda s: s.console.page(api, f"{api}/databases"),  # the catalog's page
        },
        "SHOW TABLES of one database": {
            "peer": lambda s: s.metastore.get_all_tables(database),
            "thrift": lambda s: s.endpoint.get_all_tables(database),
            "REST": lambda s: s.rest.tables(catalog, database),
            "console": lambda s: s.console.page(f"{api}/databases/{database}/tables"),  # the database's page
        },
        f"get_all_tables of all {shape.databases:,} databases": {
            "peer": lambda s: [s.metastore.get_all_tables(name) for name in every],
            "thrift": lambda s: [s.endpoint.get_all_tables(name) for name in every],
            "REST": lambda s: [s.rest.tables(catalog, name) for name in every],
        },
        f"get_table_meta of all {shape.total:,} tables": {
            "peer": lambda s: s.metastore.get_table_meta("*", "*", None),
            "thrift": lambda s: s.endpoint.get_table_meta("*", "*", None),
        },
        f"search by name in the catalog ({SEARCH})": {
            "peer": lambda s: s.metastore.get_table_meta("*", SEARCH, None),
            "thrift": lambda s: s.endpoint.get_table_meta("*", SEARCH, None),
        },
        f"search by name in one database ({pattern})": {
            "peer": lambda s: s.metastore.get_tables(database, pattern),
            "thrift": lambda s: s.endpoint.get_tables(database, pattern),
            "REST": lambda s: s.rest.tables(catalog, database, like=like),
        },
        "DESCRIBE one table": {
            "peer": lambda s: s.metastore.get_table(database, table),
            "thrift": lambda s: s.endpoint.get_table(database, table),
            "REST": lambda s: s.rest.table(catalog, database, table),
            "console": lambda s: s.console.page(f"{api}/databases/{database}/tables/{table}",  # the table's page
                                                f"{api}/databases/{database}/tables/{table}/partitions",
                                                f"{api}/changes?since=0"),
        },
    }


def _median(action: Callable[[], Any], repeat: int, before: Callable[[], Any] | None = None) -> dict[str, Any]:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return {"seconds": round(statistics.median(times), 5), "runs": [round(t, 5) for t in times]}


def _cold(metastore: EmbeddedMetastore, action: Callable[[], Any], times: int, drop: Callable[[], Any]) -> dict[str, Any]:
    """``action`` with ``drop`` before each call, the first counted at the metastore."""
    drop()
    seconds, counted, _ = audited(metastore, action)
    runs: list[float] = [seconds, *(_median(action, times - 1, before=drop)["runs"] if times > 1 else [])]
    return {"seconds": round(statistics.median(runs), 5), "runs": runs, "calls": counted}


def _warm(metastore: EmbeddedMetastore, action: Callable[[], Any], times: int) -> dict[str, Any]:
    _, counted, _ = audited(metastore, action)
    return {**_median(action, max(times, 3)), "calls": counted}


def time_operations(metastore: EmbeddedMetastore, where: Surfaces, shape: Shape, *, repeat: int, big_repeat: int,
                    cold: bool, only: list[str] | None = None,
                    found: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Every operation through each front end, ``cold`` (the catalog dropped before each call) or warm, added to
    ``found``; the peer is measured once, the first time. Operations over the whole catalog repeat ``big_repeat``
    times, the others ``repeat``."""
    def drop() -> None:
        where.rest.refresh(where.catalog)

    found = {} if found is None else found
    state = "cold" if cold else "warm"
    for label, calls in operations(shape, where.catalog).items():
        if only is not None and label not in only:
            continue
        times = big_repeat if shape.databases > 1 and ("all" in label or "catalog" in label) else repeat
        row = found.setdefault(label, {})
        peer = functools.partial(calls.pop("peer"), where)
        if "peer" not in row:
            peer()  # untimed: the metastore's JVM and database warm for this call
            row["peer"] = {**_median(peer, max(times, 3)), "calls": audited(metastore, peer)[1]}
        if cold and "peer after a refresh" not in row:
            # The cold calls each follow a REFRESH through the service, so the machine is in the same state for
            # the metastore's own answer measured the same way: its JVM, its database and the client idle for
            # the refresh's few milliseconds, caches and CPUs gone cool.
            row["peer after a refresh"] = _median(peer, max(times, 3), before=drop)
        for surface, call in calls.items():
            progress(f"{label}: {surface}, {state}")
            action = functools.partial(call, where)
            figures = _cold(metastore, action, times, drop) if cold else _warm(metastore, action, times)
            figures["over_peer"] = round(figures["seconds"] / max(row["peer"]["seconds"], 1e-6), 2)
            if cold:
                figures["over_peer_after_a_refresh"] = round(
                    figures["seconds"] / max(row["peer after a refresh"]["seconds"], 1e-6), 2)
            row[f"{surface} {state}"] = figures
    return found


def warm_up(thrift_port: int, connections: int = 4) -> int:
    """Every table loaded into the service's caches: get_table_objects_by_name_req of each database's every table
    through the endpoint (the service loads them in batches), on ``connections`` connections at once; the tables
    answered."""
    with _thrift(thrift_port) as client:
        names = list(client.get_all_databases())  # "default" too, so a call naming every database finds them cached

    def load(part: list[str]) -> int:
        with _thrift(thrift_port) as client:
            return sum(len(client.get_table_objects_by_name_req(ttypes.GetTablesRequest(dbName=name)).tables) for name in part)

    with ThreadPoolExecutor(connections) as pool:
        return sum(pool.map(load, [names[start::connections] for start in range(connections)]))
