"""Spark's own Hive support (PySpark's built-in Hive 2.3 client, no connector of ours) on any metastore URI.

A JVM holds one Hive client configuration and the test session's SparkSession holds the embedded metastore's,
so another metastore (the service's thrift endpoint, say) is reached from a long-lived PySpark process of its
own (``_spark_hive_worker.py``), one JSON line per statement each way. Its stderr (Spark's logging) goes to
``scratch/worker.stderr``, whose tail is quoted when the process fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

__all__ = ["SparkHiveClient", "SparkHiveError"]

_WORKER = Path(__file__).with_name("_spark_hive_worker.py")
TIMEOUT = 300.0  # seconds for the start-up and for each statement


class SparkHiveError(RuntimeError):
    """A statement Spark refused (Spark's message; ``condition``: its error class), or a worker that failed."""

    def __init__(self, message: str, condition: str | None = None) -> None:
        super().__init__(message)
        self.condition = condition


class SparkHiveClient:
    """One PySpark process with Hive support on ``metastore_uri``; ``sql`` runs a statement there and returns
    its rows as tuples of JSON-able values. ``startup_seconds`` is the wall time until it answered."""

    def __init__(self, metastore_uri: str, warehouse: Path, scratch: Path, extra_conf: Mapping[str, str] | None = None,
                 *, startup_timeout: float = TIMEOUT, statement_timeout: float = TIMEOUT) -> None:
        self.statement_timeout = statement_timeout
        scratch.mkdir(parents=True, exist_ok=True)
        self._stderr_path, self._answers = scratch / "worker.stderr", queue.Queue[str | None]()
        config = {"uri": metastore_uri, "warehouse": warehouse.as_uri(), "scratch": str(scratch), "conf": dict(extra_conf or {})}
        began = time.monotonic()
        with self._stderr_path.open("ab") as stderr:
            self._process: subprocess.Popen[str] | None = subprocess.Popen(
                [sys.executable, str(_WORKER), json.dumps(config)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=stderr, text=True, encoding="utf-8", cwd=scratch, start_new_session=True,
                env={**os.environ, "PYSPARK_PYTHON": sys.executable},
            )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._stdin: IO[str] = self._process.stdin
        self.pid = self._process.pid  # the worker's, and its process group's (its JVM is in it)
        self._reader = threading.Thread(target=self._read, args=(self._process.stdout,), daemon=True)
        self._reader.start()
        ready = self._answer(startup_timeout, "start")
        if "error" in ready:
            self.close(kill=True)
            raise SparkHiveError(f"Spark did not start on {metastore_uri}: {ready['error']}\n{self._stderr_tail()}")
        self.startup_seconds = time.monotonic() - began

    def sql(self, statement: str) -> list[tuple[Any, ...]]:
        """The rows ``statement`` returns; :class:`SparkHiveError` with Spark's message when it fails."""
        if self._process is None:
            raise SparkHiveError("the Spark Hive client is closed")
        with contextlib.suppress(OSError):  # a worker that is gone is reported by _answer, with its stderr
            self._stdin.write(json.dumps({"sql": statement}) + "\n")
            self._stdin.flush()
        answer = self._answer(self.statement_timeout, statement)
        if "error" in answer:
            raise SparkHiveError(answer["error"], answer.get("condition"))
        return [tuple(row) for row in answer["rows"]]

    @property
    def closed(self) -> bool:
        """Whether the worker is gone: closed, killed after a timeout, or exited."""
        return self._process is None

    def close(self, kill: bool = False) -> None:
        """Stops Spark (EOF on the worker's stdin; the process group killed if ``kill`` or after a minute)."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(OSError):
            self._stdin.close()
        try:
            process.wait(timeout=0 if kill else 60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # still our unreaped child: the id is its own
            process.wait()
        self._reader.join(timeout=30)  # it closes stdout at the EOF the exit gives it

    def __enter__(self) -> SparkHiveClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self, stdout: IO[str]) -> None:
        with stdout:
            for line in stdout:
                self._answers.put(line)
        self._answers.put(None)

    def _answer(self, timeout: float, what: str) -> dict[str, Any]:
        """The worker's next answer; a worker that died or exceeded ``timeout`` is killed (it is out of step)."""
        try:
            line = self._answers.get(timeout=timeout)
        except queue.Empty:
            self.close(kill=True)
            raise SparkHiveError(f"no answer from Spark within {timeout:g} s to {what!r}:\n{self._stderr_tail()}") from None
        if line is None:
            self.close(kill=True)
            raise SparkHiveError(f"the Spark worker exited during {what!r}:\n{self._stderr_tail()}")
        return dict(json.loads(line))

    def _stderr_tail(self) -> str:
        return "\n".join(self._stderr_path.read_text(encoding="utf-8", errors="replace").splitlines()[-40:])
