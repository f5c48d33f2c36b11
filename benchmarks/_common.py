"""Helpers shared by the benchmark scripts: timing, a fresh metastore, result files."""

from __future__ import annotations

import json
import os
import platform
import queue
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hms_catalog.demo.loopback import keep_spark_on_loopback
from hms_catalog.errors import ServiceError
from hms_catalog.remote import CatalogServiceClient

RESULTS = Path(__file__).resolve().parent / "results"

# Every Spark JVM a benchmark starts (its sessions, spark-submit children, servers' drivers) binds 127.0.0.1.
keep_spark_on_loopback()
_ANNOUNCED = re.compile(r"hms-catalog service at (?P<url>https?://\S+) for ")


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


def machine() -> dict[str, Any]:
    """The cores and the load average now: stated beside every figure measured on a shared machine."""
    return {"cores": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]}


def run_in_scratch(prefix: str, data: Path | None, run: Callable[[Path, Path], dict[str, Any]]) -> dict[str, Any]:
    """``run(data directory, scratch directory)``'s report, with its ``run_seconds``: the data kept in ``data``
    when given (for later runs to reuse), else in the scratch directory, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch_dir:
        scratch = Path(scratch_dir)
        directory = data.resolve() if data is not None else scratch / "data"
        directory.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        report = run(directory, scratch)
        report["run_seconds"] = round(time.perf_counter() - started, 1)
    return report


def free_port() -> int:
    """A port free on 127.0.0.1 now, for a server that must be told its port (the thrift endpoint)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Service:
    """``hms-catalog --home HOME serve --port 0 [extra ...]`` as a child process; its stderr is drained by a
    thread so it never blocks. Found by the line it prints before serving, then by ``/v1/health``; its token
    is the home's ``server.token``."""

    def __init__(self, home: Path, *extra: str, timeout: float = 60.0, cwd: Path | None = None) -> None:
        """``cwd``: run the service from that source tree (a worktree of another commit) instead of the installed one."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "serve", "--port", "0", *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=cwd,
        )
        self.lines: list[str] = []
        announced: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._drain, args=(announced,), name="serve-stderr", daemon=True)
        self._reader.start()
        try:
            line = announced.get(timeout=timeout)
        except queue.Empty:
            line = None
        found = _ANNOUNCED.search(line or "")
        if found is None:
            self.stop()
            raise SystemExit(f"the catalog service did not announce itself within {timeout:g}s:\n{''.join(self.lines[-20:])}")
        self.url = found.group("url")
        self.token = (home / "server.token").read_text(encoding="utf-8").strip()
        client = self.client()
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    if client.health().get("status") == "ok":
                        return
                except ServiceError:
                    pass  # not listening yet
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise SystemExit(f"the catalog service at {self.url} never answered /v1/health:\n{''.join(self.lines[-20:])}")
                time.sleep(0.1)
        finally:
            client.close()

    def _drain(self, announced: queue.Queue[str | None]) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)
            if _ANNOUNCED.search(line):
                announced.put(line)
        announced.put(None)  # ended (without announcing, if nothing came before)

    def client(self) -> CatalogServiceClient:
        return CatalogServiceClient(self.url, self.token)

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, then the exit code (SIGKILL and -9 after ``timeout``)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self._reader.join(timeout=5)
        return code
