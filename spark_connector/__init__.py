"""The native Spark connector: hms-catalog's catalogs as Spark catalogs, read by Spark's own readers.

A front end like the CLI and the service: Java classes (a DataSource V2 catalog and scan, and a Spark
plugin) built into a jar against the installed pyspark, plus the Python helpers that put the jar and the
catalog service's address into a SparkSession.

    from spark_connector import native_session
    spark = native_session("http://127.0.0.1:8181")
    spark.sql("SELECT * FROM prod.sales.orders WHERE dt = '2024-01-01'")
"""

from spark_connector.build import ConnectorBuildError, connector_jar
from spark_connector.session import (
    CATALOG_CLASS,
    EXTENSIONS_CLASS,
    PLUGIN_CLASS,
    catalog_conf,
    configure,
    native_session,
    session_builder,
)

__all__ = [
    "CATALOG_CLASS", "EXTENSIONS_CLASS", "PLUGIN_CLASS", "ConnectorBuildError", "catalog_conf", "configure", "connector_jar",
    "native_session", "session_builder",
]
