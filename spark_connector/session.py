"""SparkSession configuration for the connector: the jar, the plugin and the catalog service.

The jar must be on ``spark.jars`` when the session starts (a running JVM only takes ``ADD JAR``, and
only in the thread that ran it), so these helpers configure a builder before ``getOrCreate``. For a
session that is already running, ``planner.spark.attach_catalogs`` still serves (Python data source).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hms_catalog.remote.client import resolve_token
from hms_catalog.store import default_home
from spark_connector.build import connector_jar

__all__ = ["CATALOG_CLASS", "EXTENSIONS_CLASS", "EXTENSIONS_KEY", "PLUGIN_CLASS", "catalog_conf", "configure",
           "native_session", "session_builder", "with_extensions"]

CATALOG_CLASS = "hmscatalog.spark.HmsSparkCatalog"
PLUGIN_CLASS = "hmscatalog.spark.HmsCatalogPlugin"
# The analyzer rules that give statements on the catalog's tables Spark's own meaning where DSv2 alone gives
# another (INSERT OVERWRITE with a full static spec in DYNAMIC mode); see docs/spark-connector.md.
EXTENSIONS_CLASS = "hmscatalog.spark.HmsSessionExtensions"
EXTENSIONS_KEY = "spark.sql.extensions"


def with_extensions(existing: str | None) -> str:
    """``spark.sql.extensions`` with the connector's extensions appended to ``existing`` (kept, in order)."""
    names = [name.strip() for name in (existing or "").split(",") if name.strip()]
    return ",".join(names if EXTENSIONS_CLASS in names else [*names, EXTENSIONS_CLASS])


def _settings(server: str, token: str | None, home: str | os.PathLike[str] | None) -> dict[str, str]:
    home_path = Path(home).expanduser() if home is not None else default_home()
    settings = {"spark.hmscatalog.uri": server.rstrip("/")}
    resolved = resolve_token(token, home_path)
    if resolved:
        settings["spark.hmscatalog.token"] = resolved  # Spark redacts keys naming a token in its UI and logs
    return settings


def configure(builder: Any, server: str, token: str | None = None, *, home: str | os.PathLike[str] | None = None,
              plugin: bool = True, extra_jars: tuple[str, ...] = ()) -> Any:
    """``builder`` with the connector's jar on ``spark.jars``, its session extensions on ``spark.sql.extensions``
    and the service at ``server``.

    With ``plugin`` (the default) every catalog of the service becomes a Spark catalog at start; without
    it, add catalogs one by one with :func:`catalog_conf`. ``token`` defaults as for ``open_session``
    (``$HMS_CATALOG_TOKEN``, then the home's ``server.token``). ``spark.jars`` is set, not appended to:
    pass other jars in ``extra_jars``. ``spark.sql.extensions`` is appended to: extensions already set on
    ``builder`` stay (the plugin also appends them to what ``spark-defaults.conf`` or ``--conf`` set).
    """
    builder = builder.config("spark.jars", ",".join([str(connector_jar()), *extra_jars]))
    options = getattr(builder, "_options", None)  # pyspark's builder keeps its settings there; a builder may not
    existing = options.get(EXTENSIONS_KEY) if isinstance(options, dict) else None
    builder = builder.config(EXTENSIONS_KEY, with_extensions(existing))
    for key, value in _settings(server, token, home).items():
        builder = builder.config(key, value)
    if plugin:
        builder = builder.config("spark.plugins", PLUGIN_CLASS)
    return builder


def session_builder(server: str, token: str | None = None, *, home: str | os.PathLike[str] | None = None,
                    master: str | None = None, plugin: bool = True) -> Any:
    """A ``SparkSession.builder`` configured for the service at ``server`` (see :func:`configure`)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if master is not None:
        builder = builder.master(master)
    return configure(builder, server, token, home=home, plugin=plugin)


def native_session(server: str, token: str | None = None, *, home: str | os.PathLike[str] | None = None,
                   master: str | None = None, conf: dict[str, str] | None = None) -> Any:
    """A SparkSession with every catalog of the service at ``server``, read natively, and the ``hms`` Python
    source registered: plans the JVM readers cannot read yet (Hudi log files to merge) go to it by themselves.
    """
    from planner.spark import register

    builder = session_builder(server, token, home=home, master=master)
    for key, value in (conf or {}).items():
        builder = builder.config(key, with_extensions(value) if key == EXTENSIONS_KEY else value)
    spark = builder.getOrCreate()
    register(spark)
    return spark


def catalog_conf(name: str, server: str, token: str | None = None, *, remote_name: str | None = None,
                 home: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The Spark settings that make the service's catalog ``remote_name`` (default ``name``) Spark's ``name``.

    They may be set on a builder or, once the jar is loaded, at run time with ``spark.conf.set``.
    """
    prefix = f"spark.sql.catalog.{name}"
    settings = _settings(server, token, home)
    conf = {prefix: CATALOG_CLASS, f"{prefix}.uri": settings["spark.hmscatalog.uri"]}
    if "spark.hmscatalog.token" in settings:
        conf[f"{prefix}.token"] = settings["spark.hmscatalog.token"]
    if remote_name is not None and remote_name != name:
        conf[f"{prefix}.catalog"] = remote_name
    return conf
