"""Resident memory of a process, from /proc: now, and the peak since it was last reset.

Linux keeps a process's peak resident set (``VmHWM``) and resets it to the current one when ``5`` is written to
``/proc/PID/clear_refs`` (allowed for our own processes). Resetting before an operation makes the peak after it
the operation's own, also in a long-lived process such as the catalog service, whose earlier peaks would hide it.
Where the reset is refused the peak is the process's lifetime peak, and :func:`reset_peak` says so.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

__all__ = ["mib", "reset_peak", "rss", "run_measured"]


def _status(pid: int | str, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def rss(pid: int | str = "self", *, peak: bool = False) -> int:
    """Bytes resident now, or at the peak (``VmHWM``) since the last reset."""
    return _status(pid, "VmHWM" if peak else "VmRSS")


def reset_peak(pid: int | str = "self") -> bool:
    """Make the peak the current resident set; False when the kernel refused (the peak is then the lifetime's)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5", encoding="ascii")
    except OSError:
        return False
    return True


def mib(size: int | None) -> float | None:
    return None if size is None else round(size / 2**20, 1)


def run_measured(command: list[str], *, cwd: Path | None = None, timeout: float = 3600.0,
                 env: dict[str, str] | None = None) -> tuple[float, int, str, str, int]:
    """Run ``command``: (wall seconds, exit code, stdout, stderr, its peak resident bytes), the child reaped with
    ``wait4`` so its own rusage is read (``RUSAGE_CHILDREN`` would be the largest of every child so far)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    captured: dict[str, str] = {}
    readers = [threading.Thread(target=lambda name=name, stream=stream: captured.__setitem__(name, stream.read()), daemon=True)
               for name, stream in (("out", process.stdout), ("err", process.stderr))]
    for reader in readers:
        reader.start()
    timer = threading.Timer(timeout, process.kill)
    timer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        timer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    for reader in readers:
        reader.join()
    return seconds, process.returncode, captured.get("out", ""), captured.get("err", ""), usage.ru_maxrss * 1024
