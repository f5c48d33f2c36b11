"""A PySpark job for spark-submit: it configures nothing itself; the plugin (from spark-submit's --conf)
registers the service's catalogs. With HMS_WRITE_TABLE set, it also writes through one: an INSERT OVERWRITE
of two partitions and a CTAS. Prints one JSON line of what it saw."""

import json
import os
import sys

from pyspark.sql import SparkSession

database = sys.argv[1]
spark = SparkSession.builder.getOrCreate()
tables = sorted(row.tableName for row in spark.sql(f"SHOW TABLES IN conn.{database}").collect())
count = spark.sql(f"SELECT count(*) FROM conn.{database}.pq WHERE dt = '2024-01-01'").collect()[0][0]
registered = spark.conf.get("spark.sql.catalog.conn")
refused = None
if len(sys.argv) > 2:  # a table only the Python source reads: this job never registered it
    try:
        spark.sql(f"SELECT * FROM conn.{sys.argv[2]}").collect()
    except Exception as error:  # noqa: BLE001 - the message is what the test checks
        refused = str(error)
written = None
table = os.environ.get("HMS_WRITE_TABLE")
if table:
    spark.sql(f"INSERT OVERWRITE {table} PARTITION (dt) SELECT id, CAST(id % 2 AS STRING) FROM range(10)")
    spark.sql(f"CREATE TABLE {table}_copy STORED AS ORC AS SELECT * FROM {table} WHERE dt = '1'")
    written = {"count": spark.table(table).count(), "copy": spark.table(f"{table}_copy").count()}
print("RESULT " + json.dumps({"tables": tables, "count": count, "registered": registered, "refused": refused, "written": written}))
spark.stop()
