"""Readers on a real S3 API (moto's server, signatures checked): a split's file reached with the catalog's
endpoint and keys, the same after the resolver is pickled (as it travels to Spark's Python workers), a
wrong key refused as a StorageError naming the catalog and the file, and the ``hms`` Spark source and the
locality path reading an S3 table end to end."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hms_catalog.errors import StorageError
from hms_catalog.execution import Session
from hms_catalog.formats.schema import Column, TableSchema
from hms_catalog.storage import StorageConfig, StorageResolver
from hms_catalog.types import parse_hive_type
from planner import plan_table
from planner.plan import Split
from planner.readers import read_split
from tests.support.s3 import SALES, S3Server, Warehouse
from tests.support.sessions import read_hms

SCHEMA = TableSchema((Column("id", parse_hive_type("bigint"), "bigint"), Column("name", parse_hive_type("string"), "string"),
                      Column("region", parse_hive_type("string"), "string", partition=True)), source="test")
ROWS = [(index, f"name-{index}", "north") for index in range(1000)]


def _resolver(server: S3Server, name: str = "lake", **overrides: str) -> StorageResolver:
    """A catalog's storage as CREATE CATALOG would make it: the endpoint and keys in Doris's names."""
    return StorageResolver(StorageConfig.from_properties(server.catalog_properties(**overrides)), name=name)


@pytest.fixture(scope="module")
def parquet_split(s3_server: S3Server) -> Split:
    """A Parquet file of several row groups written through a resolver, as one split of its whole length."""
    bucket = s3_server.bucket("planner-reads")
    location = f"s3a://{bucket}/sales/region=north/part-0.parquet"
    filesystem, path = _resolver(s3_server).resolve(location)
    data = pa.table({"id": pa.array([row[0] for row in ROWS], pa.int64()), "name": [row[1] for row in ROWS]})
    pq.write_table(data, path, filesystem=filesystem, row_group_size=300)
    info = filesystem.get_file_info(path)
    mtime = int(info.mtime_ns // 1_000_000) if info.mtime_ns is not None else None
    return Split(location, 0, info.size, info.size, mtime, (), (("region", "north"),), "parquet")


def _rows(split: Split, storage: StorageResolver) -> list[tuple[Any, ...]]:
    target = SCHEMA.arrow_schema()
    batches = list(read_split(split, SCHEMA.columns, target, table_columns=SCHEMA.data_columns, storage=storage))
    return [tuple(row.values()) for row in pa.Table.from_batches(batches, schema=target).to_pylist()]


def test_a_parquet_split_is_read_from_the_catalogs_endpoint(s3_server: S3Server, parquet_split: Split) -> None:
    assert _rows(parquet_split, _resolver(s3_server)) == ROWS


def test_a_pickled_resolver_reads_the_same_split(s3_server: S3Server, parquet_split: Split) -> None:
    resolver = _resolver(s3_server)
    assert _rows(parquet_split, resolver) == ROWS  # its S3 filesystem is built and cached now
    travelled = pickle.loads(pickle.dumps(resolver))
    assert (travelled.name, travelled.config) == ("lake", resolver.config)
    assert _rows(parquet_split, travelled) == ROWS
    halves = [parquet_split._replace(length=parquet_split.file_length // 2),
              parquet_split._replace(start=parquet_split.file_length // 2,
                                     length=parquet_split.file_length - parquet_split.file_length // 2)]
    assert sorted(row for half in halves for row in _rows(half, travelled)) == ROWS  # each row group read once


def test_a_wrong_secret_is_a_storage_error_naming_catalog_and_file(s3_server: S3Server, parquet_split: Split) -> None:
    wrong = s3_server.secret_key + "x"
    with pytest.raises(StorageError, match=f"catalog 'lake': cannot read {parquet_split.path}") as raised:
        _rows(parquet_split, _resolver(s3_server, **{"s3.secret_key": wrong}))
    assert wrong not in str(raised.value) and s3_server.secret_key not in str(raised.value)


EXPECTED_SALES = sorted((row[0], row[1], row[2], region) for region, rows in SALES.items() for row in rows)


@pytest.mark.slow
def test_the_spark_source_reads_an_s3_table_with_the_catalogs_keys(spark: Any, s3_session: Session, home: Path,
                                                                   s3_warehouse: Warehouse) -> None:
    frame = read_hms(spark, home, f"hive.{s3_warehouse.database}.sales", maxPartitionBytes="1")
    assert sorted(tuple(row) for row in frame.collect()) == EXPECTED_SALES
    explained = frame._jdf.queryExecution().toString()
    assert s3_warehouse.server.secret_key not in explained and s3_warehouse.server.access_key not in explained


@pytest.mark.slow
def test_the_locality_path_reads_an_s3_table_with_the_catalogs_keys(spark: Any, s3_session: Session,
                                                                    s3_warehouse: Warehouse) -> None:
    from planner.spark.locality import locality_dataframe

    catalog = s3_session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(s3_warehouse.database, "sales"))
    assert s3_warehouse.server.secret_key not in plan.dumps()
    frame = locality_dataframe(spark, plan, storage=catalog.storage)
    assert sorted(tuple(row) for row in frame.collect()) == EXPECTED_SALES
