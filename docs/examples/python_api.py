"""Statements from Python, and the lazy object model under them (after getting_started.sql)."""

from hms_catalog import open_session

session = open_session()  # the catalogs under $HMS_CATALOG_HOME or ~/.hms-catalog
described = session.run_one("DESCRIBE prod.sales.orders")
print(described.columns)  # ('Field', 'Type', 'Nullable', 'PartitionKey', 'Comment')
print(described.as_dicts()[0])  # {'Field': 'order_id', 'Type': 'bigint', ...}
tables = session.run_one("SWITCH prod; SHOW TABLES FROM sales")  # the last statement's answer
print(tables.column("Table"))  # ['customers', 'orders']

catalog = session.manager.catalog("prod")
before = catalog.metrics()
table = catalog.table("sales", "customers")  # nothing fetched yet
print(table.loaded)  # False
print([column.name for column in table.schema.columns])  # loads the table: one get_table_req
print(catalog.metrics().calls_since(before))  # {'get_table_req': 1}
