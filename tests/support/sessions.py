"""A session with the catalog ``hive`` over the test metastore, as most tests need one."""

from __future__ import annotations

from pathlib import Path

from hms_catalog import open_session
from hms_catalog.execution import Session

__all__ = ["open_catalog"]


def open_catalog(home: Path, uri: str, **properties: str) -> Session:
    """A session under ``home`` whose catalog ``hive`` points at ``uri``, with extra ``properties``."""
    extra = "".join(f", '{key}'='{value}'" for key, value in properties.items())
    session = open_session(home)
    session.run_one(f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{uri}'{extra})")
    return session
