"""Running statements: a session, its handlers and their results."""

from __future__ import annotations

from hms_catalog.execution import (  # noqa: F401 - register handlers
    browse_commands,
    catalog_commands,
    ddl_commands,
    filesystem_commands,
    metadata_commands,
)
from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session

__all__ = ["Result", "Session"]
