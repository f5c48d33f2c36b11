"""A catalog service from Python: the same statements through a remote session, and the typed REST client.

Start one first (hms-catalog serve) on a home with the catalog prod of getting_started.sql.
"""

import os

from hms_catalog import CatalogServiceClient, default_home, open_session, resolve_token
from planner import SplitPlan

server = os.environ.get("HMS_CATALOG_SERVER", "http://127.0.0.1:8181")
token = resolve_token(None, default_home())  # $HMS_CATALOG_TOKEN, else the home's server.token

session = open_session(server=server, token=token)  # run_one, run and execute, as a local session
print(session.run_one("DESCRIBE prod.sales.orders").as_dicts())

client = CatalogServiceClient(server, token)
try:
    print(client.health())  # {'status': 'ok', ...}
    print(client.tables("prod", "sales"))  # ['customers', 'orders']
    plan = SplitPlan.loads(client.plan("prod", "sales", "orders", where="dt >= DATE '2026-11-02'"))
    print(plan.summary)  # planned by the service, on its warm caches
    print(client.changes("prod", since=0)["changes"])  # what the service loaded and changed, numbered
finally:
    client.close()
