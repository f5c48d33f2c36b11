"""A real catalog service process for tests: ``hms-catalog serve --port 0`` on a home, found by the line it
prints before taking requests, and stopped (SIGTERM, then kill) when the block ends."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hms_catalog.remote import CatalogServiceClient

__all__ = ["RunningService", "running_service"]

_ANNOUNCED = re.compile(r"hms-catalog service at (?P<url>https?://\S+) for ")
_START_TIMEOUT = 60.0


@dataclass
class RunningService:
    url: str
    token: str
    home: Path
    process: subprocess.Popen[str]
    stderr_lines: list[str]
    _reader: threading.Thread
    _pending: queue.Queue[str | None]

    def client(self, **options: object) -> CatalogServiceClient:
        return CatalogServiceClient(self.url, self.token, **options)  # type: ignore[arg-type]

    def stop(self, timeout: float = 10.0) -> tuple[int, str]:
        """SIGTERM, then wait up to ``timeout``; the exit code and all the process wrote to stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=5)
        while not self._pending.empty():
            line = self._pending.get()
            if line is not None:
                self.stderr_lines.append(line)
        return code, "".join(self.stderr_lines)


@contextlib.contextmanager
def running_service(home: Path, *extra: str) -> Iterator[RunningService]:
    """A service on ``home`` (extra ``serve`` arguments appended); stopped when the block ends."""
    command = [sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "serve", "--port", "0", *extra]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env={**os.environ})
    lines: queue.Queue[str | None] = queue.Queue()
    seen: list[str] = []

    def drain() -> None:  # from the start: a full stderr pipe would stall the server
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        url = _announced_url(process, lines, seen)
        token_file = home / "server.token"  # absent when --token-file named another
        token = token_file.read_text(encoding="utf-8").strip() if token_file.exists() else ""
        yield RunningService(url, token, home, process, seen, reader, lines)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        reader.join(timeout=5)
        if process.stderr is not None:
            process.stderr.close()


def _announced_url(process: subprocess.Popen[str], lines: queue.Queue[str | None], seen: list[str]) -> str:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if line is None:
            break
        seen.append(line)
        found = _ANNOUNCED.search(line)
        if found:
            return found.group("url")
    raise AssertionError(f"the service did not start (exit {process.poll()}): {''.join(seen)[-2000:]}")
