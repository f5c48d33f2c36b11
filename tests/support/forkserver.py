"""``hms-catalog`` runs forked from a process that has already imported everything, for tests that start
many of them (kill tests restart a service again and again, or kill hundreds of CLI runs).

A fresh interpreter spends seconds of CPU importing the CLI and the service before it does anything; a
fork of :mod:`tests.support._zygote` starts in milliseconds. The child is still a process of its own, with
its own pid, files, environment and working folder, killed by ``kill -9`` like any other: what a kill test
proves about the process it kills is the same. :class:`ForkedProcess` answers as much of ``Popen`` as the
tests use (``pid``, ``poll``, ``wait``, ``kill``, ``send_signal``, ``returncode``, ``stderr``).

One fork server per test session, started on first use and stopped when the session ends (it also exits
by itself when the session's process dies: it watches its stdin).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

__all__ = ["ForkedProcess", "fork_cli", "run_cli"]

_ROOT = Path(__file__).resolve().parents[2]
_START_TIMEOUT = 120.0


class ForkedProcess:
    """A forked ``hms-catalog`` run: its exit status arrives on the connection that asked for it."""

    def __init__(self, connection: socket.socket, pid: int, stderr: IO[str] | None, stdout: IO[str] | None) -> None:
        self._connection = connection
        self.pid = pid
        self.stderr = stderr
        self.stdout = stdout
        self.returncode: int | None = None
        self._buffer = b""
        self._lock = threading.Lock()

    def poll(self) -> int | None:
        return self._status(0.0)

    def wait(self, timeout: float | None = None) -> int:
        found = self._status(timeout)
        if found is None:
            raise subprocess.TimeoutExpired(f"hms-catalog (forked, pid {self.pid})", timeout or 0.0)
        return found

    def send_signal(self, number: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def _status(self, timeout: float | None) -> int | None:
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            self._connection.settimeout(timeout)
            try:
                while b"\n" not in self._buffer:
                    chunk = self._connection.recv(64)
                    if not chunk:
                        raise RuntimeError(f"the fork server went away before process {self.pid} ended")
                    self._buffer += chunk
            except (TimeoutError, BlockingIOError):
                return None
            line, _, self._buffer = self._buffer.partition(b"\n")
            kind, _, value = line.decode().partition(" ")
            assert kind == "exit", line
            self.returncode = int(value)
            self._connection.close()
            return self.returncode


class _ForkServer:
    def __init__(self) -> None:
        folder = Path(tempfile.mkdtemp(prefix="hms-catalog-zygote-"))
        self.path = folder / "socket"
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_ROOT), os.environ.get("PYTHONPATH", "")])}
        self._process = subprocess.Popen([sys.executable, "-m", "tests.support._zygote", str(self.path)], cwd=_ROOT,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment)
        assert self._process.stdout is not None
        ready = self._process.stdout.readline()
        assert ready == b"ready\n", f"the fork server did not start: {ready!r}"
        atexit.register(self.close)

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, stdin: int, stdout: int,
              stderr: int) -> tuple[socket.socket, int]:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(str(self.path))
        request = json.dumps({"argv": list(argv), "env": dict(env), "cwd": str(cwd)}).encode()
        socket.send_fds(connection, [request], [stdin, stdout, stderr])
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = connection.recv(64)
            assert chunk, "the fork server closed the connection without forking"
            answer += chunk
        kind, _, pid = answer.decode().strip().partition(" ")
        assert kind == "pid", answer
        return connection, int(pid)

    def close(self) -> None:
        if self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()  # it exits on its own, killing what it still runs
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


_server: _ForkServer | None = None
_server_lock = threading.Lock()


def _fork_server() -> _ForkServer:
    global _server
    with _server_lock:
        if _server is None:
            _server = _ForkServer()
        return _server


def fork_cli(argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None,
             capture_stdout: bool = False, capture_stderr: bool = True, stdin: int | None = None,
             log: Path | None = None) -> ForkedProcess:
    """``python -m hms_catalog.cli ARGV`` as a forked process: stdin from ``stdin`` (a file descriptor, which
    stays the caller's) or /dev/null; stdout and stderr readable as text where captured (close them after
    use), else appended to ``log`` if given, else sent to /dev/null."""
    server = _fork_server()

    def sink() -> int:
        return os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if log else os.open(os.devnull, os.O_WRONLY)

    err_read, err_write = os.pipe() if capture_stderr and log is None else (None, sink())
    out_read, out_write = os.pipe() if capture_stdout and log is None else (None, sink())
    source = os.open(os.devnull, os.O_RDONLY) if stdin is None else os.dup(stdin)
    try:
        connection, pid = server.spawn(argv, env=dict(env if env is not None else os.environ), cwd=cwd or Path.cwd(),
                                       stdin=source, stdout=out_write, stderr=err_write)
    finally:
        for fd in (source, out_write, err_write):
            os.close(fd)
    stdout = os.fdopen(out_read, "r", encoding="utf-8", errors="replace") if out_read is not None else None
    stderr = os.fdopen(err_read, "r", encoding="utf-8", errors="replace") if err_read is not None else None
    return ForkedProcess(connection, pid, stderr, stdout)


def run_cli(argv: Sequence[str], *, input: str | None = None, env: Mapping[str, str] | None = None,
            timeout: float | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([python, -m, hms_catalog.cli, *argv], input=..., capture_output=True, text=True)``,
    forked: the same answer (exit status, stdout, stderr) without an interpreter's start-up."""
    feed: tuple[int, int] | None = os.pipe() if input is not None else None
    process = fork_cli(argv, env=env, cwd=cwd, capture_stdout=True, stdin=feed[0] if feed else None)
    outputs: dict[str, str] = {}

    def drain(name: str, stream: IO[str]) -> None:
        with stream:
            outputs[name] = stream.read()

    assert process.stdout is not None and process.stderr is not None
    readers = [threading.Thread(target=drain, args=("stdout", process.stdout), daemon=True),
               threading.Thread(target=drain, args=("stderr", process.stderr), daemon=True)]
    for reader in readers:
        reader.start()
    if feed is not None:
        os.close(feed[0])
        with os.fdopen(feed[1], "w", encoding="utf-8") as writer, contextlib.suppress(BrokenPipeError):
            writer.write(input or "")
    try:
        code = process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    for reader in readers:
        reader.join(timeout=30)
    return subprocess.CompletedProcess(["hms-catalog", *argv], code, outputs.get("stdout", ""), outputs.get("stderr", ""))
