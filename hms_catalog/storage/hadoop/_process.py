"""One running helper JVM and the JSON-line conversation with it.

Requests carry ids and answers come back in any order (the JVM runs them on a pool of threads), so many
Python threads share one process: a request registers a future under its id, writes its line under a
lock, and a reader thread hands each answer line to the future of its id. When the process ends, every
waiting request fails with :class:`ProcessGone`, which the helper turns into a restart or a clear error.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import IO, Any

__all__ = ["HelperProcess", "ProcessGone"]

Answer = dict[str, Any]


class ProcessGone(Exception):
    """The helper's process ended (or could not be written to); ``sent`` says whether the request reached it."""

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent


class HelperProcess:
    """A started JVM: ``call`` sends one request and waits for its answer."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], log_file: Path) -> None:
        self.log_file = log_file
        with log_file.open("ab") as log:
            self._popen = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                           env=dict(env), start_new_session=True)
        assert self._popen.stdin is not None and self._popen.stdout is not None
        self._stdin: IO[bytes] = self._popen.stdin
        self._pending: dict[int, Future[Answer]] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._next_id = 1
        self._gone: str | None = None
        self._reader = threading.Thread(target=self._read, args=(self._popen.stdout,), name="hadoop-helper-answers",
                                        daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def alive(self) -> bool:
        return self._gone is None and self._popen.poll() is None

    def handshake(self, settings: Mapping[str, str], timeout: float) -> Answer:
        """Send the settings (the first line, id 0) and wait for the login's answer."""
        return self._exchange(0, {"settings": dict(settings)}, timeout)

    def call(self, request: Mapping[str, Any], timeout: float | None) -> Answer:
        with self._lock:
            request_id = self._next_id
            self._next_id += 1
        return self._exchange(request_id, {"id": request_id, **request}, timeout)

    def close(self, wait: float = 10.0) -> None:
        """End of input: the JVM answers what it was asked, then exits; killed if it has not within ``wait``."""
        with self._write_lock:
            with contextlib.suppress(OSError):
                self._stdin.close()
        try:
            self._popen.wait(wait)
        except subprocess.TimeoutExpired:
            self._popen.kill()
            self._popen.wait()
        self._reader.join(wait)

    def _exchange(self, request_id: int, request: Mapping[str, Any], timeout: float | None) -> Answer:
        future: Future[Answer] = Future()
        with self._lock:
            if self._gone is not None:
                raise ProcessGone(self._gone, sent=False)
            self._pending[request_id] = future
        line = json.dumps(request, separators=(",", ":")).encode() + b"\n"
        try:
            with self._write_lock:
                self._stdin.write(line)
                self._stdin.flush()
        except (OSError, ValueError) as error:  # a closed pipe, or stdin closed by close()
            with self._lock:
                self._pending.pop(request_id, None)
            raise ProcessGone(f"the helper process cannot be written to ({error})", sent=False) from None
        try:
            return future.result(timeout)
        except FutureTimeout:
            with self._lock:
                self._pending.pop(request_id, None)
            raise TimeoutError(f"no answer from the Hadoop helper within {timeout:g}s") from None

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            try:
                answer = json.loads(line)
            except ValueError:
                continue  # not an answer (nothing else should be written here)
            with self._lock:
                future = self._pending.pop(int(answer.get("id", -1)), None)
            if future is not None:
                future.set_result(answer)
        code = self._popen.wait()
        with self._lock:
            self._gone = f"the helper process ended (exit code {code})"
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(ProcessGone(self._gone, sent=True))
        stdout.close()
