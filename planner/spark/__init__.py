"""PySpark integration: the ``hms`` data source, SELECT through catalogs, and locality-aware reads."""

from __future__ import annotations

from planner.spark.datasource import HmsDataSource, register
from planner.spark.sql import CatalogSql, attach_catalogs, spark_session

__all__ = ["CatalogSql", "HmsDataSource", "attach_catalogs", "register", "spark_session"]
