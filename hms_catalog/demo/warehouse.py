"""The demo's small warehouse: Parquet files written by pyarrow, registered through the metastore's
thrift API the way a writer registers them (database, external table, partitions)."""

from __future__ import annotations

import datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hmsclient.genthrift.hive_metastore import ttypes

from hms_catalog.client import HmsClientPool

__all__ = ["build_warehouse", "DATABASE"]

DATABASE = "sales"
_PARQUET = (
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
)


def _sd(columns: list[tuple[str, str]], location: Path) -> ttypes.StorageDescriptor:
    return ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema(name, kind, "") for name, kind in columns],
        location=location.as_uri(),
        inputFormat=_PARQUET[0],
        outputFormat=_PARQUET[1],
        serdeInfo=ttypes.SerDeInfo(serializationLib=_PARQUET[2], parameters={"serialization.format": "1"}),
        numBuckets=-1,
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def _table(name: str, columns: list[tuple[str, str]], location: Path, keys: list[tuple[str, str]], comment: str) -> ttypes.Table:
    return ttypes.Table(
        tableName=name,
        dbName=DATABASE,
        owner="demo",
        sd=_sd(columns, location),
        partitionKeys=[ttypes.FieldSchema(k, t, "") for k, t in keys],
        parameters={"EXTERNAL": "TRUE", "comment": comment},
        tableType="EXTERNAL_TABLE",
    )


def build_warehouse(pool: HmsClientPool, root: Path) -> list[str]:
    """Write and register the demo tables unless they exist; returns the names of the tables made."""
    if DATABASE in pool.call("get_all_databases"):
        return []
    db_dir = root / f"{DATABASE}.db"
    db_dir.mkdir(parents=True, exist_ok=True)
    pool.call("create_database", ttypes.Database(name=DATABASE, description="demo sales", locationUri=db_dir.as_uri(), parameters={}))

    customers_dir = db_dir / "customers"
    customers_dir.mkdir(exist_ok=True)
    customers = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["Ada", "Grace", "Edsger"], "country": ["UK", "US", "NL"]})
    pq.write_table(customers, customers_dir / "part-00000.parquet")
    pool.call("create_table", _table("customers", [("id", "bigint"), ("name", "string"), ("country", "string")], customers_dir, [], "who buys"))

    orders_columns = [("order_id", "bigint"), ("customer_id", "bigint"), ("amount", "decimal(10,2)"),
                      ("items", "array<struct<sku:string,qty:int>>")]
    orders_dir = db_dir / "orders"
    orders = _table("orders", orders_columns, orders_dir, [("dt", "date")], "what was bought, by day")
    pool.call("create_table", orders)
    item = pa.struct([("sku", pa.string()), ("qty", pa.int32())])
    partitions = []
    for day, rows in ((datetime.date(2026, 11, 1), [(1, 1, "19.99"), (2, 2, "5.00")]), (datetime.date(2026, 11, 2), [(3, 1, "42.10")])):
        part_dir = orders_dir / f"dt={day.isoformat()}"
        part_dir.mkdir(parents=True, exist_ok=True)
        data = pa.table({
            "order_id": pa.array([r[0] for r in rows], pa.int64()),
            "customer_id": pa.array([r[1] for r in rows], pa.int64()),
            "amount": pa.array([Decimal(r[2]) for r in rows], pa.decimal128(10, 2)),
            "items": pa.array([[{"sku": f"sku-{r[0]}", "qty": 1}] for r in rows], pa.list_(item)),
        })
        pq.write_table(data, part_dir / "part-00000.parquet")
        partitions.append(ttypes.Partition(values=[day.isoformat()], dbName=DATABASE, tableName="orders",
                                           sd=_sd(orders_columns, part_dir), parameters={}))
    pool.call("add_partitions", partitions)
    return ["customers", "orders"]
