"""A scratch database for tables written by the test session's Spark."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["fresh_database"]


@contextlib.contextmanager
def fresh_database(spark: Any, name: str) -> Iterator[str]:
    """An empty database ``name`` (one a failed run left behind is dropped first), dropped with its tables
    when the block ends."""
    spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")
    spark.sql(f"CREATE DATABASE {name}")
    try:
        yield name
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")
