"""Running statements: a session, its handlers and their results."""

from __future__ import annotations

from hms_catalog.execution import browse_commands, catalog_commands, metadata_commands  # noqa: F401 - register handlers
from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session

__all__ = ["Result", "Session"]
