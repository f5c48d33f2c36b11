"""hms-catalog: an external catalog over Hive Metastores, for Python and PySpark.

Typical use::

    from hms_catalog import open_session

    session = open_session()                      # definitions under $HMS_CATALOG_HOME or ~/.hms-catalog
    session.run_one("CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='thrift://h:9083')")
    print(session.run_one("DESCRIBE hive.sales.orders").as_dicts())
    table = session.manager.catalog("hive").table("sales", "orders")   # the lazy object model
"""

from __future__ import annotations

import os

from hms_catalog.errors import (
    AlreadyExistsError,
    ConfigurationError,
    EmbeddedMetastoreError,
    HmsCatalogError,
    MetastoreError,
    MetastoreUnavailableError,
    NotFoundError,
    PlanningError,
    PoolClosedError,
    PoolExhaustedError,
    SqlSyntaxError,
    UnsupportedTableError,
)
from hms_catalog.execution import Result, Session
from hms_catalog.manager import CatalogManager
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.model import ExternalCatalog, ExternalDatabase, ExternalTable
from hms_catalog.store import CatalogStore, default_home

__all__ = [
    "AlreadyExistsError",
    "CatalogManager",
    "CatalogStore",
    "ConfigurationError",
    "EmbeddedMetastore",
    "EmbeddedMetastoreError",
    "ExternalCatalog",
    "ExternalDatabase",
    "ExternalTable",
    "HmsCatalogError",
    "MetastoreError",
    "MetastoreUnavailableError",
    "NotFoundError",
    "PlanningError",
    "PoolClosedError",
    "PoolExhaustedError",
    "Result",
    "Session",
    "SqlSyntaxError",
    "UnsupportedTableError",
    "default_home",
    "open_session",
]

__version__ = "0.1.0"


def open_session(home: str | os.PathLike[str] | None = None) -> Session:
    """A session over the catalogs stored under ``home`` (default as the CLI's ``--home``)."""
    return Session(CatalogManager(CatalogStore(home if home is not None else default_home())))
