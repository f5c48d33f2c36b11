"""PySpark integration: the ``hms`` data source, SELECT through catalogs, and locality-aware reads."""

from __future__ import annotations

from planner.spark.datasource import HmsDataSource, register

__all__ = ["HmsDataSource", "register"]
