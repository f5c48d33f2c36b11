"""Processes that run beside the service, contributed by other packages (``serve --spark-connect``).

The service knows none of them by name: each is an entry point of group ``hms_catalog.serve_companions``
whose object adds its options to ``serve`` and, when asked for, starts a process that the service reports
in ``/v1/health``, hands its SELECTs to (``engine_options``) and stops on shutdown.
"""

from __future__ import annotations

import argparse
import logging
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Companion", "RunningCompanion", "companions"]

GROUP = "hms_catalog.serve_companions"
log = logging.getLogger(__name__)


class RunningCompanion(Protocol):
    def health(self) -> dict[str, Any]: ...

    def engine_options(self) -> dict[str, str]:
        """Options for the sessions' statement engines (a Spark ``remote``), empty while not ready."""
        ...

    def wait_ready(self, timeout: float) -> bool: ...

    def stop(self) -> None: ...


class Companion(Protocol):
    name: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def start(self, args: argparse.Namespace, *, service_url: str, token: str, host: str,
              home: Path) -> RunningCompanion | None: ...


def companions() -> list[Companion]:
    found: list[Companion] = []
    for entry in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        try:
            found.append(entry.load())
        except Exception as error:  # noqa: BLE001 - a broken extra must not stop the service from starting
            log.warning("serve companion %s could not be loaded: %s", entry.name, error)
    return found
