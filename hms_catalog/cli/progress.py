"""A one-line progress bar on the terminal for work that takes long (listing thousands of locations)."""

from __future__ import annotations

import time
from typing import TextIO

__all__ = ["TerminalProgress"]


class TerminalProgress:
    """Draws ``what [####....] done/total`` on ``stream`` once the work has run ``delay`` seconds;
    clears the line when done. Silent for work that finishes quickly."""

    def __init__(self, stream: TextIO, *, delay: float = 1.0, width: int = 30) -> None:
        self.stream = stream
        self.delay = delay
        self.width = width
        self._started: dict[str, float] = {}
        self._drawn = False

    def __call__(self, what: str, done: int, total: int) -> None:
        started = self._started.setdefault(what, time.monotonic())
        finished = done >= total
        if time.monotonic() - started >= self.delay and total > 0:
            filled = int(self.width * done / total)
            self.stream.write(f"\r{what} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total}")
            self.stream.flush()
            self._drawn = True
        if finished:
            self._started.pop(what, None)
            if self._drawn:
                self.stream.write("\r" + " " * (len(what) + self.width + 30) + "\r")
                self.stream.flush()
                self._drawn = False
