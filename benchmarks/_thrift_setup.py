"""What bench_thrift measures over: two embedded metastores, their tables, and the endpoint in this process.

``Rig`` starts the primary metastore (catalog ``hive``: ``--tables`` plain tables and one table with
1,824 date-keyed partitions, like TPC-DS store_sales by ss_sold_date_sk) and a second one (catalog
``other``, one database), then a CatalogManager on a temporary home with both catalogs and the endpoint
over it (made as ``serve`` makes it: a SharedState on the home's store, events followed as a service follows them).
Everything is made through the generated client straight on the metastore, as any engine would.
``close`` stops the endpoint and both JVMs whatever happened before.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from _thrift_load import connect

from hms_catalog.client.hive_thrift import MetastoreThriftClient, ttypes
from hms_catalog.formats.storage import STORAGE_FORMATS
from hms_catalog.manager import CatalogManager, EventFollowing
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.state import SharedState, open_definitions
from service.audit import AuditLog
from service.thrift import ThriftEndpoint, ThriftSettings

__all__ = ["DATABASE", "FIRST_DATE_KEY", "OTHER_DATABASE", "PARTITIONED", "Rig", "port_of"]

DATABASE = "bench_thrift"
OTHER_DATABASE = "remote_db"
PARTITIONED = "store_sales"
FIRST_DATE_KEY = 2450816  # TPC-DS's first d_date_sk (1998-01-02)
_PARQUET = STORAGE_FORMATS["PARQUET"]
_BATCH = 200  # partitions per add_partitions call


def port_of(uri: str) -> int:
    return int(uri.rsplit(":", 1)[1])


def _sd(columns: list[ttypes.FieldSchema], location: str) -> ttypes.StorageDescriptor:
    return ttypes.StorageDescriptor(
        cols=columns, location=location, inputFormat=_PARQUET.input_format, outputFormat=_PARQUET.output_format,
        serdeInfo=ttypes.SerDeInfo(serializationLib=_PARQUET.serde, parameters={}), numBuckets=-1, bucketCols=[],
        sortCols=[], parameters={},
    )


def _table(database: str, name: str, columns: list[ttypes.FieldSchema], location: Path,
           keys: list[ttypes.FieldSchema] | None = None) -> ttypes.Table:
    return ttypes.Table(tableName=name, dbName=database, owner="bench", sd=_sd(columns, location.as_uri()),
                        partitionKeys=keys or [], parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE")


def make_tables(client: MetastoreThriftClient, warehouse: Path, database: str, count: int) -> list[str]:
    location = warehouse / f"{database}.db"
    client.create_database(ttypes.Database(name=database, description="", locationUri=location.as_uri(), parameters={}))
    columns = [ttypes.FieldSchema(f"c{i}", kind, "") for i, kind in
               enumerate(["bigint", "string", "decimal(12,2)", "array<struct<a:int,b:string>>", "map<string,double>"])]
    names = [f"t{index:03d}" for index in range(count)]
    for name in names:
        client.create_table(_table(database, name, columns, location / name))
    return names


def make_partitioned(client: MetastoreThriftClient, warehouse: Path, partitions: int) -> None:
    """``store_sales`` partitioned by ``ss_sold_date_sk`` (int), ``partitions`` consecutive date keys."""
    location = warehouse / f"{DATABASE}.db" / PARTITIONED
    columns = [ttypes.FieldSchema(name, kind, "") for name, kind in
               [("ss_item_sk", "bigint"), ("ss_customer_sk", "bigint"), ("ss_quantity", "int"),
                ("ss_net_paid", "decimal(7,2)")]]
    keys = [ttypes.FieldSchema("ss_sold_date_sk", "int", "")]
    client.create_table(_table(DATABASE, PARTITIONED, columns, location, keys))
    made = []
    for index in range(partitions):
        key = FIRST_DATE_KEY + index
        made.append(ttypes.Partition(values=[str(key)], dbName=DATABASE, tableName=PARTITIONED, parameters={},
                                     sd=_sd(columns, (location / f"ss_sold_date_sk={key}").as_uri())))
    for start in range(0, len(made), _BATCH):
        client.add_partitions(made[start:start + _BATCH])


class Rig:
    def __init__(self, scratch: Path, tables: int, partitions: int) -> None:
        self.scratch = scratch
        self.primary = EmbeddedMetastore(scratch / "hive-metastore", audit=True)
        self.second = EmbeddedMetastore(scratch / "other-metastore")
        self.endpoint: ThriftEndpoint | None = None
        self.manager: CatalogManager | None = None
        try:
            self._start(scratch, tables, partitions)
        except BaseException:
            self.close()
            raise

    def _start(self, scratch: Path, tables: int, partitions: int) -> None:
        self.primary.start()
        self.second.start()
        with connect(port_of(self.primary.uri)) as client:
            self.tables = make_tables(client, self.primary.warehouse, DATABASE, tables)
            make_partitioned(client, self.primary.warehouse, partitions)
        with connect(port_of(self.second.uri)) as client:
            make_tables(client, self.second.warehouse, OTHER_DATABASE, 3)
        home = scratch / "home"
        home.mkdir()
        definitions = open_definitions(home, None)  # the manager as ``serve`` makes it (service/serving.py, service/state.py)
        self.manager = CatalogManager(definitions, shared=SharedState(definitions))
        self.manager.events = EventFollowing.SERVE
        self.manager.create("hive", {"type": "hms", "hive.metastore.uris": self.primary.uri})
        # the client's defaults (3 retries a second apart), as a user defines it: a stopped metastore then fails a call
        # only after seconds, which is what the endpoint must not make get_all_databases wait for
        self.manager.create("other", {"type": "hms", "hive.metastore.uris": self.second.uri})
        self.endpoint = ThriftEndpoint(self.manager, AuditLog(home / "audit.log"), ThriftSettings(port=0)).start()
        self.endpoint_port = int(self.endpoint.address[1])
        self.metastore_port = port_of(self.primary.uri)

    def hive_calls(self) -> dict[str, int]:
        """The metastore calls catalog ``hive`` has made so far, by method."""
        assert self.manager is not None
        return dict(self.manager.catalog("hive").metrics().calls)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.endpoint is not None:
                self.endpoint.stop()
        with contextlib.suppress(Exception):
            if self.manager is not None:
                self.manager.close()
        for metastore in (self.second, self.primary):
            with contextlib.suppress(Exception):
                metastore.stop()


def calls_between(before: dict[str, int], after: dict[str, int]) -> dict[str, Any]:
    delta = {method: after.get(method, 0) - before.get(method, 0) for method in sorted(set(after) | set(before))}
    delta = {method: count for method, count in delta.items() if count}
    return {"total": sum(delta.values()), "by_method": delta}
