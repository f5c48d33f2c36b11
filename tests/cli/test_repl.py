"""The interactive prompt, driven through a pseudo-terminal as a person would use it."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test


def _read_until(fd: int, marker: bytes, timeout: float = 60.0) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"never saw {marker!r}; got {seen!r}"
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


@contextlib.contextmanager
def prompt(home: Path, *, umask: int | None = None) -> Iterator[int]:
    """``hms-catalog`` at a prompt on a pseudo-terminal under ``home``; yields the terminal's side to type on.

    The block must end the session (``exit``); a process still running afterwards is killed.
    """
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "hms_catalog.cli"],
        stdin=secondary, stdout=secondary, stderr=secondary, close_fds=True,
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
        env={**os.environ, "HMS_CATALOG_HOME": str(home), "TERM": "dumb"},
    )
    os.close(secondary)
    try:
        _read_until(primary, b"hms-catalog> ")
        yield primary
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(primary)


def test_the_prompt_runs_multi_line_statements_and_keeps_history(home: Path, metastore_uri: str) -> None:
    with prompt(home) as primary:
        os.write(primary, f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}');\n".encode())
        assert b"OK: catalog 'hive' created" in _read_until(primary, b"created")
        os.write(primary, b"SHOW\n")
        _read_until(primary, b"-> ")  # the statement goes on until ';'
        os.write(primary, b"  DATABASES FROM hive;\n")
        assert b"| default" in _read_until(primary, b"in set")
        os.write(primary, b"SHOW TABLEZ;\n")
        assert b"error: line" in _read_until(primary, b"error: line")  # reported, the session goes on
        os.write(primary, b"SHOW CATALOGS;\n")
        assert b"| hive" in _read_until(primary, b"in set")
        os.write(primary, b"exit\n")
    history = (home / "history").read_text()
    assert "SHOW CATALOGS;" in history
