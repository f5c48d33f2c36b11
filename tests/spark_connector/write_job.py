"""A Spark driver that overwrites a table through the connector again and again, printing each generation
it committed; the kill tests end it with SIGKILL at random moments.

    python write_job.py <jar> <metastore uri> <service url> <token> <catalog> <database> <table>
"""

from __future__ import annotations

import sys


def main(jar: str, metastore_uri: str, url: str, token: str, catalog: str, database: str, table: str) -> None:
    from pyspark.sql import SparkSession

    from hms_catalog.demo.loopback import on_loopback
    from spark_connector import catalog_conf

    builder = (on_loopback(SparkSession.builder.master("local[2]").appName("write-job")).config("spark.jars", jar)
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.hadoop.hive.metastore.uris", metastore_uri))
    for key, value in catalog_conf(catalog, url, token).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    generation = 0
    while True:
        generation += 1
        spark.sql(f"INSERT OVERWRITE {catalog}.{database}.{table} "
                  f"SELECT id, {generation} AS gen, CAST(id % 4 AS STRING) AS p FROM range(200000)")
        print(f"committed {generation}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:8])
