"""The demo's small warehouse, written by real writers: Spark with Hive support (a partitioned Parquet
table, an ORC table, a text table), pyiceberg (an Iceberg table with a delete), and a copy-on-write
Hudi table in Hudi's own layout, registered as Hudi's hive sync registers it."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

from hms_catalog.client import HmsClientPool
from hms_catalog.demo.hudi_writer import HudiCommit, hive_sync_table, write_cow_table

__all__ = ["build_warehouse", "DATABASE"]

DATABASE = "sales"
TRIPS_SCHEMA: dict[str, object] = {"type": "record", "name": "trips_record", "namespace": "hoodie.trips", "fields": [
    {"name": "trip_id", "type": "long"},
    {"name": "customer_id", "type": ["null", "long"], "default": None},
    {"name": "fare", "type": ["null", "double"], "default": None},
    {"name": "city", "type": ["null", "string"], "default": None},
]}


def _spark_tables(spark: Any) -> None:
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    spark.sql(f"CREATE TABLE {DATABASE}.orders (order_id BIGINT, customer_id BIGINT, amount DECIMAL(10,2), "
              "items ARRAY<STRUCT<sku:STRING,qty:INT>>) PARTITIONED BY (dt STRING) STORED AS PARQUET")
    spark.sql(f"""INSERT INTO {DATABASE}.orders PARTITION (dt) VALUES
        (1, 1, 19.99, array(named_struct('sku', 'pen', 'qty', 2)), '2026-11-01'),
        (2, 2, 5.00, array(named_struct('sku', 'ink', 'qty', 1)), '2026-11-01'),
        (3, 1, 42.10, array(named_struct('sku', 'pad', 'qty', 3)), '2026-11-02'),
        (4, 3, 7.25, array(), '2026-11-02'),
        (5, 2, 13.00, array(named_struct('sku', 'pen', 'qty', 1)), '2026-11-03')""")
    spark.sql(f"CREATE TABLE {DATABASE}.customers (id BIGINT, name STRING, country STRING) STORED AS ORC")
    spark.sql(f"INSERT INTO {DATABASE}.customers VALUES (1, 'Ada', 'UK'), (2, 'Grace', 'US'), (3, 'Edsger', 'NL')")
    spark.sql(f"CREATE TABLE {DATABASE}.visits (customer_id BIGINT, page STRING, at TIMESTAMP) "
              "ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE")
    spark.sql(f"INSERT INTO {DATABASE}.visits VALUES (1, '/home', TIMESTAMP'2026-11-01 09:00:00'), "
              "(3, '/pens', TIMESTAMP'2026-11-02 10:30:00')")


def _iceberg_table(uri: str, warehouse: Path) -> None:
    from pyiceberg.catalog.hive import HiveCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import DecimalType, LongType, NestedField, StringType

    catalog = HiveCatalog("demo", uri=uri, warehouse=warehouse.as_uri(), **{"hive.hive2-compatible": "true"})
    table = catalog.create_table(f"{DATABASE}.returns", schema=Schema(
        NestedField(1, "order_id", LongType()), NestedField(2, "reason", StringType()), NestedField(3, "refund", DecimalType(10, 2))))
    table.append(pa.Table.from_pylist(
        [{"order_id": 1, "reason": "broken", "refund": Decimal("19.99")},
         {"order_id": 4, "reason": "late", "refund": Decimal("7.25")},
         {"order_id": 5, "reason": "mistake", "refund": Decimal("13.00")}],
        schema=table.schema().as_arrow()))
    table.delete("order_id = 5")  # a delete: the order was kept after all


def _hudi_table(pool: HmsClientPool, warehouse: Path) -> None:
    rows = {
        "city=london": pa.table({"trip_id": pa.array([1, 2], pa.int64()), "customer_id": pa.array([1, 2], pa.int64()),
                                 "fare": [12.5, 30.0], "city": ["london", "london"]}),
        "city=amsterdam": pa.table({"trip_id": pa.array([3], pa.int64()), "customer_id": pa.array([3], pa.int64()),
                                    "fare": [8.75], "city": ["amsterdam"]}),
    }
    base = write_cow_table(warehouse / f"{DATABASE}.db" / "trips", "trips",
                           [HudiCommit("20261101120000000", TRIPS_SCHEMA, rows)], record_key="trip_id", partition_field="city")
    pool.call("create_table", hive_sync_table(DATABASE, "trips", base, [("trip_id", "bigint"), ("customer_id", "bigint"),
                                                                          ("fare", "double")], partition_keys=[("city", "string")]))


def build_warehouse(spark: Any, pool: HmsClientPool, uri: str, warehouse: Path, step: Callable[[str], None]) -> bool:
    """Write the demo tables unless they exist; False when they were there already."""
    if DATABASE in pool.call("get_all_databases"):
        return False
    step("Spark writes a partitioned Parquet table, an ORC table and a text table")
    _spark_tables(spark)
    step("pyiceberg writes an Iceberg table and deletes a row")
    _iceberg_table(uri, warehouse)
    step("a copy-on-write Hudi table is written and registered as Hudi's hive sync does")
    _hudi_table(pool, warehouse)
    return True
