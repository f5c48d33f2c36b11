"""One cold plan through the Python planning API, in a process of its own, so its peak memory is the plan's.

    python _scale_worker.py '{"home": ..., "catalog": ..., "database": ..., "table": ..., "where": ..., "metastore": DIR}'

The catalog is fresh (this process has no caches); its connection is opened and the table's handle made before
the clock starts, as bench_planning does, so the timed part is ``plan_table`` (the table's definition, the partitions,
the listing and the splits). Metastore calls are counted at the server, in its audit log. Memory: the peak resident
set is reset to the current one just before planning (``/proc/self/clear_refs``), so ``peak_rss`` is the highest
the process reached while planning and ``rss_before`` what it held before (the interpreter, the imports, the
connection). One JSON line on stdout.

With ``"stream": true`` the plan is made as a stream (``plan_table_stream``) and its JSON text written, a piece at
a time, to the null device, as the CLI and the service write it: the splits are never held, and ``json_mib`` says
how much text was written.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _scale_memory import reset_peak, rss

from hms_catalog import open_session
from hms_catalog.errors import HmsCatalogError
from hms_catalog.metastore import EmbeddedMetastore
from planner import SplitPlan, plan_json_pieces, plan_table, plan_table_stream


def _streamed(catalog: Any, handle: Any, where: str) -> tuple[SplitPlan, int, int]:
    """The plan written as JSON to the null device as it is cut: (the plan without splits, splits, bytes)."""
    stream = plan_table_stream(catalog, handle, where)
    written = 0
    with open(os.devnull, "w", encoding="utf-8") as sink:
        for piece in plan_json_pieces(stream):
            written += sink.write(piece)
    done = stream.finished()
    return done, done.summary.splits, written


def run(job: dict[str, Any]) -> dict[str, Any]:
    metastore = EmbeddedMetastore(job["metastore"])
    session = open_session(job["home"])
    catalog = session.manager.catalog(job["catalog"])
    catalog.database_names()
    handle = catalog.table(job["database"], job["table"])
    time.sleep(0.1)
    mark, _ = metastore.audited_calls()
    before = rss()
    reset_peak()
    started = time.perf_counter()
    written = None
    try:
        if job.get("stream"):
            plan, splits, written = _streamed(catalog, handle, job["where"])
        else:
            plan = plan_table(catalog, handle, job["where"])
            splits = len(plan.splits)
        error = None
    except HmsCatalogError as refused:
        plan, error = None, f"{type(refused).__name__}: {refused}"
    seconds = time.perf_counter() - started
    peak = rss(peak=True)
    time.sleep(0.3)  # the audit log is written asynchronously
    _, calls = metastore.audited_calls(mark)
    found: dict[str, Any] = {"seconds": round(seconds, 4), "calls": calls, "rss_before": before, "peak_rss": peak,
                             "error": error}
    if plan is not None:
        summary = plan.summary
        found.update({
            "splits": splits, "files": summary.files, "partitions": summary.partitions_scanned,
            "partitions_total": summary.partitions_total, "metastore_seconds": summary.hms_seconds,
            "listing_seconds": summary.listing_seconds, "splitting_seconds": summary.splitting_seconds,
            "absent_locations": summary.absent_locations, "notes": list(summary.notes[:3]),
            "splits_held_as": "stream" if written is not None else type(plan.splits).__name__,
            "client_calls": dict(summary.metastore_calls),
        })
        if written is not None:
            found["json_mib"] = round(written / 2**20, 1)
    session.manager.close()
    return found


if __name__ == "__main__":
    print(json.dumps(run(json.loads(sys.argv[1]))), flush=True)
