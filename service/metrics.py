"""``GET /metrics`` in Prometheus' text format: requests and latency by route, metastore calls by catalog
and method, cache hits, misses, loads, entries, bytes and evictions by catalog and cache, the caches'
memory budget with the bytes held under it, and each metastore event follower's counters by catalog.

Request counters live here; the catalog figures are read from the live catalogs at scrape time (a
catalog rebuilt after ALTER starts its counters again, which Prometheus reads as a counter reset).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable

from hms_catalog.cache.budget import MemoryBudget
from hms_catalog.model import ExternalCatalog

__all__ = ["LATENCY_BUCKETS", "RequestMetrics", "render_metrics"]

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class RequestMetrics:
    """Thread-safe request counts by (method, route, status) and a latency histogram by (method, route)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str, int], int] = defaultdict(int)
        self._buckets: dict[tuple[str, str], list[int]] = {}
        self._sums: dict[tuple[str, str], float] = defaultdict(float)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route)
        with self._lock:
            self._counts[(method, route, status)] += 1
            buckets = self._buckets.setdefault(key, [0] * (len(LATENCY_BUCKETS) + 1))
            for index, bound in enumerate(LATENCY_BUCKETS):
                if seconds <= bound:
                    buckets[index] += 1
            buckets[-1] += 1  # +Inf: every observation
            self._sums[key] += seconds

    def lines(self) -> list[str]:
        with self._lock:
            counts = dict(self._counts)
            buckets = {key: list(value) for key, value in self._buckets.items()}
            sums = dict(self._sums)
        lines = ["# HELP hms_catalog_requests_total HTTP requests answered, by method, route and status.",
                 "# TYPE hms_catalog_requests_total counter"]
        for (method, route, status), count in sorted(counts.items()):
            lines.append(f"hms_catalog_requests_total{_labels(method=method, route=route, status=str(status))} {count}")
        lines += ["# HELP hms_catalog_request_seconds Time to answer HTTP requests, by method and route.",
                  "# TYPE hms_catalog_request_seconds histogram"]
        for (method, route), counted in sorted(buckets.items()):
            for bound, count in zip((*map(str, LATENCY_BUCKETS), "+Inf"), counted):
                lines.append(f"hms_catalog_request_seconds_bucket{_labels(method=method, route=route, le=bound)} {count}")
            lines.append(f"hms_catalog_request_seconds_sum{_labels(method=method, route=route)} {sums[(method, route)]:.6f}")
            lines.append(f"hms_catalog_request_seconds_count{_labels(method=method, route=route)} {counted[-1]}")
        return lines


def render_metrics(requests: RequestMetrics, catalogs: Iterable[ExternalCatalog], budget: MemoryBudget | None = None) -> str:
    catalogs = sorted(catalogs, key=lambda each: each.name)
    lines = requests.lines()
    calls = ["# HELP hms_catalog_metastore_calls_total Metastore calls answered, by catalog and thrift method.",
             "# TYPE hms_catalog_metastore_calls_total counter"]
    errors = ["# HELP hms_catalog_metastore_errors_total Metastore calls that failed, by catalog and thrift method.",
              "# TYPE hms_catalog_metastore_errors_total counter"]
    caches: dict[str, list[str]] = {
        name: [f"# HELP hms_catalog_cache_{name}_total Cache {name} by catalog and cache.",
               f"# TYPE hms_catalog_cache_{name}_total counter"]
        for name in ("hits", "misses", "loads")
    }
    caches["evictions"] = ["# HELP hms_catalog_cache_evictions_total Entries evicted (count cap, expiry or memory), by "
                           "catalog and cache.", "# TYPE hms_catalog_cache_evictions_total counter"]
    caches["memory_evictions"] = ["# HELP hms_catalog_cache_memory_evictions_total Entries evicted to keep the cache memory "
                                  "budget, by catalog and cache.", "# TYPE hms_catalog_cache_memory_evictions_total counter"]
    entries = ["# HELP hms_catalog_cache_entries Entries held, by catalog and cache.", "# TYPE hms_catalog_cache_entries gauge"]
    held = ["# HELP hms_catalog_cache_bytes Bytes held (as measured for the memory budget), by catalog and cache.",
            "# TYPE hms_catalog_cache_bytes gauge"]
    for catalog in catalogs:
        snapshot = catalog.metrics()
        for method, count in sorted(snapshot.calls.items()):
            calls.append(f"hms_catalog_metastore_calls_total{_labels(catalog=catalog.name, method=method)} {count}")
        for method, count in sorted(snapshot.errors.items()):
            errors.append(f"hms_catalog_metastore_errors_total{_labels(catalog=catalog.name, method=method)} {count}")
        for cache in catalog.caches:
            stats = cache.stats()
            labels = _labels(catalog=catalog.name, cache=stats.name)
            caches["hits"].append(f"hms_catalog_cache_hits_total{labels} {stats.hits}")
            caches["misses"].append(f"hms_catalog_cache_misses_total{labels} {stats.misses}")
            caches["loads"].append(f"hms_catalog_cache_loads_total{labels} {stats.loads}")
            caches["evictions"].append(f"hms_catalog_cache_evictions_total{labels} {stats.evictions}")
            caches["memory_evictions"].append(f"hms_catalog_cache_memory_evictions_total{labels} {stats.memory_evictions}")
            entries.append(f"hms_catalog_cache_entries{labels} {stats.entries}")
            held.append(f"hms_catalog_cache_bytes{labels} {stats.bytes}")
    return "\n".join([*lines, *calls, *errors, *(line for each in caches.values() for line in each), *entries, *held,
                      *_budget_lines(budget), *_follower_lines(catalogs)]) + "\n"


# The event followers' counters (FollowerStatus fields), as counters and gauges by catalog.
_FOLLOWER_COUNTERS = (
    ("events", "Metastore events read, by catalog."),
    ("batches", "Batches of events applied, each in one pass (one invalidation pass, one change-log entry set)."),
    ("applied", "Events applied to the caches (superseded and ignored ones are not)."),
    ("superseded", "Events a later event of their batch made pointless to apply (still logged)."),
    ("full_invalidations", "Times the whole catalog was dropped: events gone from the log, too far behind, or a "
                           "batch that failed."),
    ("skipped", "Events never applied because the whole catalog was dropped instead."),
)
_FOLLOWER_GAUGES = (
    ("last_event_id", "The id of the newest metastore event applied."),
    ("last_batch_events", "Events in the last batch applied."),
    ("last_batch_seconds", "Seconds the last batch took to apply."),
)


def _follower_lines(catalogs: Iterable[ExternalCatalog]) -> list[str]:
    followed = [(catalog.name, catalog.follower.status()) for catalog in catalogs if catalog.follower is not None]
    lines: list[str] = []
    for field, help_text in _FOLLOWER_COUNTERS:
        lines += [f"# HELP hms_catalog_events_{field}_total {help_text}", f"# TYPE hms_catalog_events_{field}_total counter"]
        lines += [f"hms_catalog_events_{field}_total{_labels(catalog=name)} {getattr(status, field)}"
                  for name, status in followed]
    for field, help_text in _FOLLOWER_GAUGES:
        lines += [f"# HELP hms_catalog_events_{field} {help_text}", f"# TYPE hms_catalog_events_{field} gauge"]
        lines += [f"hms_catalog_events_{field}{_labels(catalog=name)} {getattr(status, field) or 0}"
                  for name, status in followed]
    return lines


def _budget_lines(budget: MemoryBudget | None) -> list[str]:
    """The budget every catalog's caches share (+Inf when unlimited) and the bytes they hold under it."""
    if budget is None:
        return []
    limit = "+Inf" if budget.limit is None else str(budget.limit)
    return ["# HELP hms_catalog_cache_memory_limit_bytes The memory budget of every catalog's caches together.",
            "# TYPE hms_catalog_cache_memory_limit_bytes gauge", f"hms_catalog_cache_memory_limit_bytes {limit}",
            "# HELP hms_catalog_cache_memory_bytes Bytes every catalog's caches hold together under the budget.",
            "# TYPE hms_catalog_cache_memory_bytes gauge", f"hms_catalog_cache_memory_bytes {budget.held}"]


def _labels(**labels: str) -> str:
    escaped = (f'{key}="{_escape(value)}"' for key, value in labels.items())
    return "{" + ",".join(escaped) + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
