"""One cold plan through the Python planning API, in a process of its own, so its peak memory is the plan's.

    python _scale_worker.py '{"home": ..., "catalog": ..., "database": ..., "table": ..., "where": ..., "metastore": DIR}'

The catalog is fresh (this process has no caches); its connection is opened and the table's handle made before
the clock starts, as bench_planning does, so the timed part is ``plan_table`` (the table's definition, the partitions,
the listing and the splits). Metastore calls are counted at the server, in its audit log. Memory: the peak resident
set is reset to the current one just before planning (``/proc/self/clear_refs``), so ``peak_rss`` is the highest
the process reached while planning and ``rss_before`` what it held before (the interpreter, the imports, the
connection). One JSON line on stdout.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _scale_memory import reset_peak, rss

from hms_catalog import open_session
from hms_catalog.errors import HmsCatalogError
from hms_catalog.metastore import EmbeddedMetastore
from planner import plan_table


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
    try:
        plan = plan_table(catalog, handle, job["where"])
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
            "splits": len(plan.splits), "files": summary.files, "partitions": summary.partitions_scanned,
            "partitions_total": summary.partitions_total, "metastore_seconds": summary.hms_seconds,
            "listing_seconds": summary.listing_seconds, "splitting_seconds": summary.splitting_seconds,
            "absent_locations": summary.absent_locations, "notes": list(summary.notes[:3]),
            "splits_held_as": type(plan.splits).__name__, "client_calls": dict(summary.metastore_calls),
        })
    session.manager.close()
    return found


if __name__ == "__main__":
    print(json.dumps(run(json.loads(sys.argv[1]))), flush=True)
