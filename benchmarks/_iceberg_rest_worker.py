"""A client process of bench_iceberg_rest: ``python _iceberg_rest_worker.py '<json config>'``, one JSON line out.

Clients run in processes of their own so that their GIL is not the measuring process's: the service is a
process of its own, and pyiceberg's ``HiveCatalog`` talks to the metastore's JVM, so neither side shares a GIL
with the clients. Config keys: ``mode`` (``load`` or ``append``), ``side`` (``rest`` or ``hive``), ``catalog``
(the pyiceberg properties of the side's catalog), ``table`` (``[namespace, name]``), ``threads`` (load),
``seconds``, ``start_at`` (a wall-clock time every process of a round starts at), ``worker`` (append).
"""

from __future__ import annotations

import json
import sys
import threading
import time
import warnings
from typing import Any


def _catalog(side: str, properties: dict[str, str]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pyiceberg's note about the oauth2-server-uri default
        if side == "rest":
            from pyiceberg.catalog.rest import RestCatalog

            return RestCatalog("bench", **properties)
        from pyiceberg.catalog.hive import HiveCatalog

        return HiveCatalog("bench", **properties)


def _wait(start_at: float | None) -> None:
    if start_at is not None:
        time.sleep(max(0.0, start_at - time.time()))


def load(config: dict[str, Any]) -> dict[str, Any]:
    """``threads`` threads, each with its own catalog, loop ``load_table`` for ``seconds``: every call's seconds."""
    identifier = tuple(config["table"])
    catalogs = [_catalog(config["side"], config["catalog"]) for _ in range(config["threads"])]
    for catalog in catalogs:
        catalog.load_table(identifier)  # a first load per client: connections open, nothing cold in the figures
    samples: list[list[float]] = [[] for _ in catalogs]
    failures = [0] * len(catalogs)
    _wait(config.get("start_at"))
    deadline = time.perf_counter() + config["seconds"]

    def loop(index: int) -> None:
        catalog, mine = catalogs[index], samples[index]
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            try:
                catalog.load_table(identifier)
            except Exception:  # noqa: BLE001 - counted, and the figures say how many
                failures[index] += 1
                continue
            mine.append(time.perf_counter() - started)

    began = time.perf_counter()
    threads = [threading.Thread(target=loop, args=(index,)) for index in range(len(catalogs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    for catalog in catalogs:
        _close(catalog)
    return {"seconds": elapsed, "samples": [value for mine in samples for value in mine], "failures": sum(failures)}


def append(config: dict[str, Any]) -> dict[str, Any]:
    """Appends of ``rows`` rows for ``seconds``; a commit that lost the race (CommitFailedException) is retried on
    a freshly loaded table. Answers the commits that landed, the retries and each landed commit's seconds."""
    import pyarrow as pa
    from pyiceberg.exceptions import CommitFailedException

    catalog = _catalog(config["side"], config["catalog"])
    identifier = tuple(config["table"])
    worker, rows = config["worker"], config["rows"]
    schema = pa.schema([pa.field("worker", pa.int64(), False), pa.field("n", pa.int64(), False)])
    commits, retries, gave_up = 0, 0, 0
    samples: list[float] = []
    _wait(config.get("start_at"))
    deadline = time.perf_counter() + config["seconds"]
    began = time.perf_counter()
    while time.perf_counter() < deadline:
        batch = pa.table({"worker": [worker] * rows, "n": list(range(commits * rows, (commits + 1) * rows))}, schema=schema)
        started = time.perf_counter()
        for _ in range(50):
            try:
                catalog.load_table(identifier).append(batch)
                break
            except CommitFailedException:
                retries += 1
        else:
            gave_up += 1
            continue
        samples.append(time.perf_counter() - started)
        commits += 1
    elapsed = time.perf_counter() - began
    _close(catalog)
    return {"seconds": elapsed, "commits": commits, "retries": retries, "gave_up": gave_up, "rows": commits * rows,
            "samples": samples}


def _close(catalog: Any) -> None:
    close = getattr(catalog, "close", None)
    if close is not None:
        close()


if __name__ == "__main__":
    settings = json.loads(sys.argv[1])
    answer = load(settings) if settings["mode"] == "load" else append(settings)
    print(json.dumps(answer))
