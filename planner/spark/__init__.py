"""PySpark integration: the ``hms`` data source, SELECT through catalogs, and locality-aware reads.

Nothing is imported here: the data source imports pyspark, and the CLI loads :mod:`planner.spark.statements`
(SELECT) at every start, where a statement that never reaches Spark should not pay for pyspark. The names below
are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planner.spark.datasource import HmsDataSource, register
    from planner.spark.sql import CatalogSql, attach_catalogs, spark_session

__all__ = ["CatalogSql", "HmsDataSource", "attach_catalogs", "register", "spark_session"]

_HOMES = {"HmsDataSource": "planner.spark.datasource", "register": "planner.spark.datasource",
          "CatalogSql": "planner.spark.sql", "attach_catalogs": "planner.spark.sql", "spark_session": "planner.spark.sql"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
