"""pyiceberg's RestCatalog on the catalog service's Iceberg REST endpoint: the catalog prod as the warehouse.

Start the service first (hms-catalog serve) on a home with the catalog prod of getting_started.sql.
"""

import pyarrow as pa
from pyiceberg.catalog.rest import RestCatalog

from hms_catalog import default_home, resolve_token

token = resolve_token(None, default_home())  # $HMS_CATALOG_TOKEN, else the home's server.token
catalog = RestCatalog("prod", uri="http://127.0.0.1:8181/iceberg", warehouse="prod", token=token)

catalog.create_namespace("lake")  # a database of prod's metastore
events = catalog.create_table(("lake", "events"), schema=pa.schema([("id", pa.int64()), ("kind", pa.string())]))
events.append(pa.table({"id": [1, 2], "kind": ["click", "view"]}))  # one commit: a catalog event, source iceberg-rest
print(catalog.list_tables("lake"))  # [('lake', 'events')]: Iceberg tables only
print(catalog.load_table(("lake", "events")).scan().to_arrow().num_rows)  # 2
catalog.drop_table(("lake", "events"), purge_requested=True)  # its files are deleted too
catalog.drop_namespace("lake")
