"""A session with the catalog ``hive`` over the test metastore, as most tests need one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hms_catalog import open_session
from hms_catalog.execution import Session

__all__ = ["open_catalog", "read_hms"]


def open_catalog(home: Path, uri: str, **properties: str) -> Session:
    """A session under ``home`` whose catalog ``hive`` points at ``uri``, with extra ``properties``."""
    extra = "".join(f", '{key}'='{value}'" for key, value in properties.items())
    session = open_session(home)
    session.run_one(f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{uri}'{extra})")
    return session


def read_hms(spark: Any, home: Path, table: str, **options: str) -> Any:
    """``table`` read through the ``hms`` source over the catalogs stored under ``home``, with ``options``."""
    reader = spark.read.format("hms").option("home", str(home))
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(table)
