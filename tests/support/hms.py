"""Arranging metastore content for tests through the thrift API, as real writers register tables."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes

__all__ = ["Admin", "PARQUET", "TEXT", "storage", "table_struct"]

PARQUET = (
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
)
TEXT = (
    "org.apache.hadoop.mapred.TextInputFormat",
    "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
    "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
)


def storage(columns: Sequence[tuple[str, str]], location: str, formats: tuple[str, str, str] = PARQUET) -> ttypes.StorageDescriptor:
    return ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema(name, kind, "") for name, kind in columns],
        location=location,
        inputFormat=formats[0],
        outputFormat=formats[1],
        serdeInfo=ttypes.SerDeInfo(serializationLib=formats[2], parameters={"serialization.format": "1"}),
        compressed=False,
        numBuckets=-1,
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def table_struct(
    database: str,
    name: str,
    columns: Sequence[tuple[str, str]],
    location: str,
    *,
    partition_keys: Sequence[tuple[str, str]] = (),
    formats: tuple[str, str, str] = PARQUET,
    parameters: dict[str, str] | None = None,
    comments: dict[str, str] | None = None,
) -> ttypes.Table:
    """The thrift Table a writer registers for an external table at ``location``."""
    sd = storage(columns, location, formats)
    for column in sd.cols:
        column.comment = (comments or {}).get(column.name, "")
    return ttypes.Table(
        tableName=name,
        dbName=database,
        owner="test",
        sd=sd,
        partitionKeys=[ttypes.FieldSchema(k, t, "") for k, t in partition_keys],
        parameters={"EXTERNAL": "TRUE", **(parameters or {})},
        tableType="EXTERNAL_TABLE",
    )


class Admin:
    """Creates and drops databases and tables in the test metastore."""

    def __init__(self, pool: HmsClientPool, warehouse: Path) -> None:
        self.pool = pool
        self.warehouse = warehouse

    def create_database(self, name: str) -> Path:
        location = self.warehouse / f"{name}.db"
        location.mkdir(parents=True, exist_ok=True)
        self.pool.call(
            "create_database", ttypes.Database(name=name, description="", locationUri=location.as_uri(), parameters={})
        )
        return location

    def drop_database(self, name: str) -> None:
        self.pool.call("drop_database", name, True, True)

    def create_table(
        self,
        database: str,
        name: str,
        columns: Sequence[tuple[str, str]],
        *,
        partition_keys: Sequence[tuple[str, str]] = (),
        formats: tuple[str, str, str] = PARQUET,
        parameters: dict[str, str] | None = None,
        comments: dict[str, str] | None = None,
    ) -> ttypes.Table:
        location = self.warehouse / f"{database}.db" / name
        location.mkdir(parents=True, exist_ok=True)
        table = table_struct(
            database, name, columns, location.as_uri(),
            partition_keys=partition_keys, formats=formats, parameters=parameters, comments=comments,
        )
        self.pool.call("create_table", table)
        return table

    def drop_table(self, database: str, name: str) -> None:
        self.pool.call("drop_table", database, name, True)

    def add_partitions(self, table: ttypes.Table, rows: Sequence[Sequence[str]]) -> list[ttypes.Partition]:
        """Register partitions of ``table`` (as :meth:`create_table` returned it) with these values, in one call, each
        with the table's storage at ``key=value`` folders under the table's location (no folder is made)."""
        keys = [key.name for key in table.partitionKeys or []]
        partitions = [
            ttypes.Partition(values=list(values), dbName=table.dbName, tableName=table.tableName, parameters={},
                             sd=ttypes.StorageDescriptor(**{**table.sd.__dict__, "location": table.sd.location + "".join(
                                 f"/{key}={value}" for key, value in zip(keys, values, strict=True))}))
            for values in rows
        ]
        self.pool.call("add_partitions", partitions)
        return partitions

    def add_partition(self, database: str, table: str, values: Sequence[str], location: Path) -> ttypes.Partition:
        """Register a partition of ``table`` at ``location`` (made if absent), with the table's storage.

        The location is a Hadoop path, never URL-encoded (``as_uri`` would turn ``p=a`` into ``p%3Da``)."""
        location.mkdir(parents=True, exist_ok=True)
        sd = self.pool.call("get_table", database, table).sd
        sd.location = f"file://{location}"
        partition = ttypes.Partition(values=list(values), dbName=database, tableName=table, sd=sd, parameters={})
        self.pool.call("add_partitions", [partition])
        return partition
