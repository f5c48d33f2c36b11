"""Counters of one catalog's traffic to its metastores.

Kept per pool (and so per catalog) rather than globally, so that two catalogs over two metastores can
be told apart and a test can count exactly the calls one operation made.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["ClientMetrics", "MetricsSnapshot"]


@dataclass(frozen=True)
class MetricsSnapshot:
    """A consistent copy of the counters at one moment."""

    calls: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    unsupported: dict[str, int] = field(default_factory=dict)
    retries: int = 0
    connections_opened: int = 0
    connect_failures: int = 0
    clients_discarded: int = 0
    wait_seconds: float = 0.0

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    def calls_since(self, earlier: MetricsSnapshot) -> dict[str, int]:
        """Calls by method made between ``earlier`` and this snapshot (methods with none left out)."""
        delta = Counter(self.calls)
        delta.subtract(earlier.calls)
        return {method: count for method, count in delta.items() if count}


class ClientMetrics:
    """Thread-safe counters: calls, errors and refused methods by method, retries, connections, time spent waiting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: Counter[str] = Counter()
        self._errors: Counter[str] = Counter()
        self._unsupported: Counter[str] = Counter()
        self._retries = 0
        self._opened = 0
        self._connect_failures = 0
        self._discarded = 0
        self._wait = 0.0

    def call(self, method: str) -> None:
        with self._lock:
            self._calls[method] += 1

    def error(self, method: str) -> None:
        with self._lock:
            self._errors[method] += 1

    def unsupported(self, method: str) -> None:
        """The metastore refused ``method`` as unknown (it is too old or too new for it)."""
        with self._lock:
            self._unsupported[method] += 1

    def retry(self) -> None:
        with self._lock:
            self._retries += 1

    def opened(self) -> None:
        with self._lock:
            self._opened += 1

    def connect_failed(self) -> None:
        with self._lock:
            self._connect_failures += 1

    def discarded(self) -> None:
        with self._lock:
            self._discarded += 1

    def waited(self, seconds: float) -> None:
        with self._lock:
            self._wait += seconds

    def snapshot(self) -> MetricsSnapshot:
        with self._lock:
            return MetricsSnapshot(
                calls=dict(self._calls),
                errors=dict(self._errors),
                unsupported=dict(self._unsupported),
                retries=self._retries,
                connections_opened=self._opened,
                connect_failures=self._connect_failures,
                clients_discarded=self._discarded,
                wait_seconds=self._wait,
            )
