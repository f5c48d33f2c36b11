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
from collections.abc import Sequence
from pathlib import Path
from typing import overload

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
    ServiceError,
    SqlSyntaxError,
    UnsupportedTableError,
    VersionMismatchError,
)
from hms_catalog.execution import Result, Session
from hms_catalog.manager import CatalogManager
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.model import ExternalCatalog, ExternalDatabase, ExternalTable
from hms_catalog.registry import live_managers, shared_manager
from hms_catalog.remote import CatalogServiceClient, RemoteSession, resolve_token
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
    "RemoteSession",
    "Result",
    "Session",
    "ServiceError",
    "SqlSyntaxError",
    "UnsupportedTableError",
    "VersionMismatchError",
    "default_home",
    "live_managers",
    "open_session",
    "shared_manager",
]

__version__ = "0.1.0"


@overload
def open_session(home: str | os.PathLike[str] | None = None) -> Session: ...


@overload
def open_session(home: str | os.PathLike[str] | None = None, *, server: str | Sequence[str],
                 token: str | None = None) -> RemoteSession: ...


def open_session(
    home: str | os.PathLike[str] | None = None, *, server: str | Sequence[str] | None = None, token: str | None = None
) -> Session | RemoteSession:
    """A session over the catalogs stored under ``home`` (default as the CLI's ``--home``).

    Sessions of one process over one home share its live catalogs (see :mod:`hms_catalog.registry`),
    so a REFRESH in one is seen by every other session, ``attach_catalogs`` and the ``hms`` data source.

    With ``server`` (a catalog service's ``http[s]://host:port``), statements run there, on the catalogs
    every client of that service shares; ``token`` defaults to ``$HMS_CATALOG_TOKEN``, then the home's
    ``server.token``. Replicas of the service over one store are given as a list of URLs or one string of
    comma-separated ones: the session fails over between them. Both kinds of session have ``run_one``,
    ``run`` and ``execute``.
    """
    if server is not None:
        home_path = Path(home).expanduser() if home is not None else default_home()
        return RemoteSession(CatalogServiceClient(server, resolve_token(token, home_path)))
    return Session(shared_manager(home))
