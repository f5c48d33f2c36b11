"""A split plan from Python (after getting_started.sql): what SHOW SPLITS and EXPLAIN SPLITS show."""

from hms_catalog import open_session
from planner import SplitPlan, plan_table

session = open_session()
catalog = session.manager.catalog("prod")
# dt prunes partitions in the metastore; amount, a data column, is left to the reader.
plan = plan_table(catalog, catalog.table("sales", "orders"), "dt >= DATE '2026-11-02' AND amount > 10")
print(plan.summary)  # files, bytes, splits, partitions scanned/pruned, hosts, metastore calls, timings
text = plan.dumps()  # JSON, for another process or a Spark job to read
print(SplitPlan.loads(text) == plan)  # True; plans pickle too
