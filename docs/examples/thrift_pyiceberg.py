"""pyiceberg's HiveCatalog on the catalog service's Hive Metastore endpoint: one URI, the service's warm catalogs.

Start the service first, on a home with the catalog prod of getting_started.sql as the primary:
    hms-catalog serve --thrift-port 9083 --thrift-primary prod
"""

from pyiceberg.catalog.hive import HiveCatalog

catalog = HiveCatalog("prod", uri="thrift://localhost:9083")

print(catalog.list_namespaces())  # prod's databases under their own names, e.g. [('default',), ('sales',)]
print(catalog.load_namespace_properties("sales")["location"])  # answered from the service's cache
# pyiceberg lists Iceberg tables only: sales.orders and sales.customers are Parquet, so [] here.
print(catalog.list_tables("sales"))
