"""The ``planning`` section of bench_iceberg_rest.py: pyiceberg's ``plan_files()`` with server-side scan planning
(``scan-planning-mode=server``) against its own planning, on moto's S3 and on local disk, with the S3 requests the
client makes per scan counted.

One table per store, made by ``appends`` appends of ``files`` data files each (one per value of the partition
column ``part``), so ``appends`` manifests and ``appends * files`` data files; the appends are committed
``_APPENDS_PER_COMMIT`` to a transaction (one commit of them all would pass the service's body limit). The client plans
through a counting proxy in front of moto (the tables are written straight to moto), and the service reaches moto
directly, so the count is the planning client's requests alone. Cold: a table loaded anew (pyiceberg's caches are
per FileIO) and, for the server, the first plan of the table by the service; warm: the same table object planned
again.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import http.server
import statistics
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _common import Service, progress

from hms_catalog.metastore import EmbeddedMetastore
from tests.support.s3 import S3Server

__all__ = ["plan_server_and_client"]

CATALOG = "planned"
NAMESPACE = "plans"
GOAL_WARM_RATIO_S3 = 0.2
_APPENDS_PER_COMMIT = 10
_MODES = ("client", "server")


class CountingProxy:
    """An HTTP proxy in front of moto that counts the requests passing through it (the client's alone)."""

    def __init__(self, host: str, port: int) -> None:
        self.requests = 0
        self._lock = threading.Lock()
        proxy = self

        class Forward(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                with proxy._lock:
                    proxy.requests += 1
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                upstream = http.client.HTTPConnection(host, port, timeout=120)
                try:
                    # the Host header is kept as sent: the request's signature covers it
                    upstream.request(self.command, self.path, body=body, headers=dict(self.headers.items()))
                    answer = upstream.getresponse()
                    data = answer.read()
                    self.send_response(answer.status)
                    for key, value in answer.getheaders():
                        # a HEAD's Content-Length is the object's size; a body read whole is sent with its own
                        if key.lower() not in ("transfer-encoding", "connection") and \
                                (key.lower() != "content-length" or self.command == "HEAD"):
                            self.send_header(key, value)
                    if self.command != "HEAD":
                        self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                finally:
                    upstream.close()

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward  # noqa: N815 - the base class's names

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Forward)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def counted(self, action: Callable[[], Any]) -> tuple[Any, int]:
        before = self.requests
        value = action()
        return value, self.requests - before

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def plan_server_and_client(service: Service, scratch: Path, *, appends: int, files: int, repeat: int) -> dict[str, Any]:
    scratch.mkdir(parents=True, exist_ok=True)
    s3 = S3Server.start(scratch / "s3")
    proxy = CountingProxy(s3.host, s3.port)
    try:
        with EmbeddedMetastore(scratch / "metastore", 0, events=False, object_store_stub=True) as metastore:
            client = service.client()
            try:
                client.create_catalog(CATALOG, {"type": "hms", "hive.metastore.uris": metastore.uri,
                                                **s3.catalog_properties()})
            finally:
                client.close()
            return _measure(service, s3, proxy, scratch, appends, files, repeat)
    finally:
        proxy.close()
        s3.stop()


def _catalog(service: Service, s3: S3Server, proxy: CountingProxy | None, mode: str) -> Any:
    """pyiceberg's RestCatalog planning in ``mode``, reaching S3 through ``proxy`` (writes: straight to moto)."""
    from pyiceberg.catalog.rest import RestCatalog

    properties = {"uri": f"{service.url}/iceberg", "warehouse": CATALOG, "token": service.token,
                  "s3.endpoint": proxy.endpoint if proxy is not None else s3.endpoint, "s3.access-key-id": s3.access_key,
                  "s3.secret-access-key": s3.secret_key, "s3.region": "us-east-1", "s3.force-virtual-addressing": "false"}
    if mode == "server":
        properties["scan-planning-mode"] = "server"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return RestCatalog(f"bench-{mode}", **properties)


@contextlib.contextmanager
def _staged_metadata_remembered() -> Iterator[None]:
    """pyiceberg's transactions with their staged metadata worked out once per change instead of at every look.

    A transaction's ``table_metadata`` re-applies its staged changes and deep-copies the result each time it is
    read, about 21 times an append; at 2,000 snapshots that copying is nearly all of the build's time (a profile
    of the build). The answer depends only on the table's metadata and the staged changes (both immutable), so the
    last one is kept while neither changes: the table written is the same, sooner. Only the build uses this.
    """
    import pyiceberg.table

    apply = pyiceberg.table.update_table_metadata
    last: list[Any] = [None, None, None]

    def remembered(base: Any, updates: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return apply(base, updates, *args, **kwargs)
        if last[0] is not base or last[1] is not updates:
            last[:] = [base, updates, apply(base, updates)]
        return last[2]

    pyiceberg.table.update_table_metadata = remembered  # type: ignore[assignment]
    try:
        yield
    finally:
        pyiceberg.table.update_table_metadata = apply


def _build(catalog: Any, name: str, location: str, appends: int, files: int) -> float:
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField

    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "part", LongType(), required=True))
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "part"))
    table = catalog.create_table((NAMESPACE, name), schema=schema, partition_spec=spec, location=location)
    arrow = pa.schema([pa.field("id", pa.int64(), False), pa.field("part", pa.int64(), False)])
    started = time.perf_counter()
    done = 0
    with _staged_metadata_remembered():
        while done < appends:
            with table.transaction() as transaction:
                for index in range(done, min(appends, done + _APPENDS_PER_COMMIT)):
                    first = index * files  # ids grow with the appends: a filter on id prunes by the files' bounds
                    transaction.append(pa.table({"id": list(range(first, first + files)), "part": list(range(files))},
                                                schema=arrow))
            done = min(appends, done + _APPENDS_PER_COMMIT)
            if done % 100 == 0 or done == appends:
                progress(f"{name}: {done} of {appends} appends")
    return time.perf_counter() - started


def _files(tasks: Any) -> frozenset[str]:
    return frozenset(task.file.file_path for task in tasks)


def _plan(table: Any, row_filter: str) -> tuple[float, frozenset[str]]:
    """The seconds ``plan_files()`` takes, and the data files it planned."""
    started = time.perf_counter()
    planned = _files(table.scan(row_filter=row_filter).plan_files())
    return time.perf_counter() - started, planned


def _store(service: Service, s3: S3Server, proxy: CountingProxy, name: str, filters: dict[str, str],
           repeat: int) -> dict[str, Any]:
    """Cold and warm plans of each filter by each mode; the client's S3 requests per scan (0 for local disk)."""
    measured: dict[str, Any] = {}
    for mode in reversed(_MODES):  # the server's first plan of the table is its cold plan
        catalog = _catalog(service, s3, proxy, mode)
        try:
            for label, row_filter in filters.items():
                cold: list[float] = []
                requests: list[int] = []
                planned: frozenset[str] = frozenset()
                for _ in range(repeat):
                    table = catalog.load_table((NAMESPACE, name))
                    (seconds, planned), counted = proxy.counted(functools.partial(_plan, table, row_filter))
                    cold.append(seconds)
                    requests.append(counted)
                warm = []
                for _ in range(repeat):
                    seconds, again = _plan(table, row_filter)
                    assert again == planned, f"{mode} planned other files warm than cold ({label})"
                    warm.append(seconds)
                measured.setdefault(label, {})[mode] = {
                    "first_plan_seconds": round(cold[0], 4), "cold_median_seconds": round(statistics.median(cold), 4),
                    "warm_median_seconds": round(statistics.median(warm), 4), "files": len(planned),
                    "client_s3_requests_per_cold_scan": statistics.median(requests), "_planned": planned}
        finally:
            catalog.close()
    for label, modes in measured.items():
        same = modes["server"].pop("_planned") == modes["client"].pop("_planned")
        assert same, f"server and client planned different files for {name} ({label})"
        modes["same_files"] = same
        # Cold: each side's first plan (the server answers later repeats from its cache of plans); warm: medians.
        for ratio, kind in (("ratio_cold", "first_plan_seconds"), ("ratio_warm", "warm_median_seconds")):
            modes[ratio] = round(modes["server"][kind] / modes["client"][kind], 3) if modes["client"][kind] else None
    return measured


def _measure(service: Service, s3: S3Server, proxy: CountingProxy, scratch: Path, appends: int, files: int,
             repeat: int) -> dict[str, Any]:
    bucket = s3.bucket("bench-planning")
    catalog = _catalog(service, s3, None, "client")
    try:
        catalog.create_namespace(NAMESPACE)
        built = {"s3": _build(catalog, "on_s3", f"s3a://{bucket}/plans/on_s3", appends, files),
                 "local": _build(catalog, "on_disk", (scratch / "local" / "on_disk").as_uri(), appends, files)}
    finally:
        catalog.close()
    filters = {"partition": "part == 3", "data_column": f"id < {files * max(1, appends // 10)}"}
    report: dict[str, Any] = {"appends": appends, "files_per_append": files, "manifests": appends,
                              "data_files": appends * files, "repeat": repeat, "filters": filters,
                              "build_seconds": {key: round(value, 1) for key, value in built.items()}}
    for store, name in (("s3", "on_s3"), ("local", "on_disk")):
        progress(f"planning: {name}, server and client, cold and warm")
        report[store] = _store(service, s3, proxy, name, filters, repeat)
    report["goal_warm_ratio_on_s3_at_most"] = GOAL_WARM_RATIO_S3
    report["goal_met"] = all(modes["ratio_warm"] is not None and modes["ratio_warm"] <= GOAL_WARM_RATIO_S3
                             for modes in report["s3"].values())
    return report
