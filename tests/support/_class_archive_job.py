"""The Spark job whose driver's classes :mod:`tests.support.class_archive` archives: what the suite's drivers
do most (Hive support, DDL, Parquet and ORC writes and reads, joins, aggregates, a Python UDF), on a Derby
metastore of its own in a scratch folder. Run as ``python -m tests.support._class_archive_job STAGING ARCHIVE``
(holding the dump's lock, passed down open); the JVM writes STAGING as it exits, so the job waits for that exit,
then puts it in place when the JVM exited cleanly."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

from hms_catalog.demo.loopback import on_loopback
from planner.spark.sql import end_spark_jvm
from tests.support.class_archive import finish_dump


def main() -> int | None:
    """The driver JVM's exit code; None when it did not exit in time (it is killed)."""
    with tempfile.TemporaryDirectory(prefix="hms-catalog-class-archive-") as scratch:
        folder = Path(scratch)
        spark = (on_loopback(SparkSession.builder.master("local[2]")).appName("class-archive")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                 .config("spark.sql.shuffle.partitions", "2").config("spark.sql.warehouse.dir", (folder / "warehouse").as_uri())
                 .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={folder}")
                 .config("spark.local.dir", str(folder)).enableHiveSupport().getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        spark.sql("CREATE TABLE facts (id BIGINT, name STRING, amount DECIMAL(10,2)) PARTITIONED BY (p STRING) STORED AS PARQUET")
        spark.sql("INSERT INTO facts SELECT id, concat('n', id), CAST(id AS DECIMAL(10,2)) / 3, CAST(id % 3 AS STRING) FROM range(1000)")
        spark.sql("CREATE TABLE names (id BIGINT, label STRING) USING orc")
        spark.sql("INSERT INTO names SELECT id, upper(concat('l', id)) FROM range(100)")
        spark.sql("SELECT f.p, n.label, sum(f.amount), count(*) FROM facts f JOIN names n ON f.id = n.id "
                  "WHERE f.p = '1' GROUP BY f.p, n.label ORDER BY 1, 2").collect()
        spark.udf.register("twice", lambda value: value * 2, "bigint")
        spark.sql("SELECT twice(id) FROM facts WHERE p IN ('0', '2') LIMIT 5").collect()
        spark.sql("SHOW PARTITIONS facts").collect()
        spark.sql("DESCRIBE TABLE EXTENDED facts").collect()
        spark.range(10).write.mode("overwrite").json(str(folder / "json"))
        spark.read.json(str(folder / "json")).count()
        spark.stop()
        return end_spark_jvm(timeout=240)  # the driver writes the archive on the way out


if __name__ == "__main__":
    staging, archive = map(Path, sys.argv[1:3])
    exit_code: int | None = None
    try:
        exit_code = main()
    finally:
        finish_dump(staging, archive, exit_code)
