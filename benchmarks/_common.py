"""Helpers shared by the benchmark scripts: timing, a fresh metastore, result files."""

from __future__ import annotations

import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


def median_seconds(action: Callable[[], Any], repeat: int) -> float:
    return statistics.median(timed(action)[0] for _ in range(repeat))


def save(name: str, report: dict[str, Any]) -> Path:
    report = {
        "benchmark": name,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **report,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(report, indent=2, sort_keys=False) + "\n")
    print(json.dumps(report, indent=2))
    print(f"saved {path}", file=sys.stderr)
    return path


def progress(text: str) -> None:
    print(f"... {text}", file=sys.stderr, flush=True)
