"""A PySpark job for spark-submit that writes through a catalog the plugin registered: an INSERT OVERWRITE of
two partitions and a CTAS. Prints one JSON line of what it read back."""

import json
import sys

from pyspark.sql import SparkSession

table = sys.argv[1]
spark = SparkSession.builder.getOrCreate()
spark.sql(f"INSERT OVERWRITE {table} PARTITION (dt) SELECT id, CAST(id % 2 AS STRING) FROM range(10)")
spark.sql(f"CREATE TABLE {table}_copy STORED AS ORC AS SELECT * FROM {table} WHERE dt = '1'")
print("RESULT " + json.dumps({"count": spark.table(table).count(), "copy": spark.table(f"{table}_copy").count()}))
spark.stop()
