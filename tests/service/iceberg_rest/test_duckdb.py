"""DuckDB's Iceberg extension, a client nobody here wrote, against the service's Iceberg REST endpoint.

The extensions come from their PyPI packages (``duckdb-extension-iceberg``, ``-httpfs``, ``-avro``), loaded from
the files the packages install, with DuckDB's autoinstall and autoload off and an empty extension directory: a
test that passes here did not fetch anything at run time. Tables are written by pyiceberg through the endpoint;
what DuckDB reads is compared with Spark's read of the same tables through the connector, and what DuckDB writes
is read back by pyiceberg (through the endpoint and directly on the metastore) and by Spark.
"""

from __future__ import annotations

import datetime
import importlib
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from spark_connector import catalog_conf
from tests.service.iceberg_rest.conftest import CATALOG, READ_TOKEN, WRITE_TOKEN, rest_catalog
from tests.support.service import Server

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

EXTENSIONS = ("httpfs", "avro", "iceberg")  # iceberg needs the other two, and nothing is autoloaded
SPARK_NAME = "duckice"  # the service's catalog ``ice`` as Spark sees it through the connector
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string()),
                   pa.field("amount", pa.decimal128(10, 2)), pa.field("day", pa.date32())])
REGIONS = ("eu", "us", "ap")


def extension_file(name: str) -> Path:
    """The extension file the package ``duckdb-extension-<name>`` installs for the running DuckDB: the packages
    have no API, only ``<package>/extensions/v<duckdb version>/<name>.duckdb_extension``."""
    package = importlib.import_module(f"duckdb_extension_{name}")
    folder = Path(next(iter(package.__path__))) / "extensions"
    found = folder / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    if not found.is_file():
        shipped = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
        raise AssertionError(f"duckdb-extension-{name} ships no extension for duckdb {duckdb.__version__} "
                             f"(it ships {shipped}): install the same release of both")
    return found


def connection(scratch: Path) -> Any:
    """A DuckDB connection that can install and autoload nothing, with the three extensions loaded by path."""
    scratch.mkdir(parents=True, exist_ok=True)
    connected = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false",
                                       "extension_directory": str(scratch)})
    for name in EXTENSIONS:
        connected.execute(f"LOAD '{extension_file(name)}'")
    return connected


def attached(server: Server, secret: str, scratch: Path) -> Any:
    """A connection with the service's catalog ``ice`` attached as ``cat``; ``secret``: the iceberg secret's options."""
    connected = connection(scratch)
    connected.execute(f"CREATE SECRET endpoint (TYPE iceberg, {secret})")
    connected.execute(f"ATTACH '{CATALOG}' AS cat (TYPE iceberg, SECRET endpoint, ENDPOINT '{server.url}/iceberg')")
    return connected


def _rows(first: int, last: int) -> pa.Table:
    ids = list(range(first, last))
    return pa.table({"id": ids, "region": [REGIONS[i % 3] for i in ids],
                     "amount": [None if i % 4 == 3 else Decimal(i * 125 - 300) / 100 for i in ids],
                     "day": [datetime.date(2024, 1, 1) + datetime.timedelta(days=7 * i) for i in ids]}, schema=ARROW)


def _create(server: Server, namespace: str, name: str, *, partitioned: bool) -> Any:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DateType, DecimalType, LongType, NestedField, StringType

    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType()),
                    NestedField(3, "amount", DecimalType(10, 2)), NestedField(4, "day", DateType()))
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region")) if partitioned else PartitionSpec()
    return rest_catalog(server).create_table((namespace, name), schema=schema, partition_spec=spec)


def _tuples(data: pa.Table) -> list[tuple[Any, ...]]:
    return list(zip(*(data.column(name).to_pylist() for name in data.column_names), strict=True))


def _pyiceberg(table: Any, **scan: Any) -> list[tuple[Any, ...]]:
    return _tuples(table.scan(**scan).to_arrow().sort_by("id"))


def _spark(spark: Any, query: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in spark.sql(query).collect()]


@pytest.fixture(scope="module")
def spark_ice(spark: Any, iceberg_service: Server) -> Iterator[str]:
    """The service's catalog ``ice`` registered in the session's Spark through the connector, for this module."""
    settings = catalog_conf(SPARK_NAME, iceberg_service.url, iceberg_service.token, remote_name=CATALOG)
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield SPARK_NAME
    finally:
        for key in settings:
            spark.conf.unset(key)


def test_the_extensions_load_from_their_packages(tmp_path: Path) -> None:
    loaded = connection(tmp_path / "extensions")
    rows = loaded.execute("SELECT extension_name, installed FROM duckdb_extensions() WHERE loaded").fetchall()
    assert {name for name, _ in rows} >= set(EXTENSIONS)
    assert not any(installed for name, installed in rows if name in EXTENSIONS)  # loaded by path, never installed
    assert not any((tmp_path / "extensions").iterdir())
    settings = dict(loaded.execute("SELECT name, value FROM duckdb_settings() WHERE name LIKE 'auto%_known_extensions'").fetchall())
    assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}


@pytest.mark.slow
def test_duckdb_lists_and_reads_the_rows_spark_reads(iceberg_service: Server, namespace: str, spark: Any, spark_ice: str,
                                                     tmp_path: Path) -> None:
    flat = _create(iceberg_service, namespace, "flat", partitioned=False)
    flat.append(_rows(0, 6))
    flat.append(_rows(6, 10))
    flat.delete("id = 3")
    _create(iceberg_service, namespace, "sales", partitioned=True).append(_rows(0, 12))
    spark.sql(f"CREATE TABLE spark_catalog.{namespace}.hive_t (id INT) STORED AS PARQUET")  # not Iceberg: not listed
    try:
        duck = attached(iceberg_service, f"TOKEN '{iceberg_service.token}'", tmp_path)
        listed = {row[2] for row in duck.execute("SHOW ALL TABLES").fetchall() if row[:2] == ("cat", namespace)}
        assert listed == {"flat", "sales"}
        rest = rest_catalog(iceberg_service)
        for table in ("flat", "sales"):
            ours = duck.execute(f"SELECT id, region, amount, day FROM cat.{namespace}.{table} ORDER BY id").fetchall()
            assert ours == _spark(spark, f"SELECT id, region, amount, day FROM {spark_ice}.{namespace}.{table} ORDER BY id")
            assert ours == _pyiceberg(rest.load_table((namespace, table)))
        assert [row[0] for row in duck.execute(f"SELECT id FROM cat.{namespace}.flat ORDER BY id").fetchall()] == \
            [0, 1, 2, 4, 5, 6, 7, 8, 9]
        # a filter on the partition column: the same rows as Spark's, from the one partition's file only
        query = f"SELECT id, region, amount, day FROM cat.{namespace}.sales WHERE region = 'eu' ORDER BY id"
        eu = duck.execute(query).fetchall()
        assert [row[0] for row in eu] == [0, 3, 6, 9]
        assert eu == _spark(spark, f"SELECT id, region, amount, day FROM {spark_ice}.{namespace}.sales WHERE region = 'eu' ORDER BY id")
        plan = duck.execute(f"EXPLAIN ANALYZE {query}").fetchall()[0][1]
        assert re.search(r"Total Files Read: 1\b", plan), plan
    finally:
        spark.sql(f"DROP TABLE IF EXISTS spark_catalog.{namespace}.hive_t")


def test_client_credentials_and_a_read_only_token(iceberg_service: Server, namespace: str, tmp_path: Path) -> None:
    rest = rest_catalog(iceberg_service)
    _create(iceberg_service, namespace, "flat", partitioned=False).append(_rows(0, 3))
    oauth = f"OAUTH2_SERVER_URI '{iceberg_service.url}/iceberg/v1/oauth/tokens'"
    # DuckDB exchanges the named token's name and secret for a bearer token (at CREATE SECRET), then writes with it
    etl = attached(iceberg_service, f"CLIENT_ID 'etl', CLIENT_SECRET '{WRITE_TOKEN}', {oauth}", tmp_path / "etl")
    assert etl.execute(f"SELECT count(*) FROM cat.{namespace}.flat").fetchall() == [(3,)]
    etl.execute(f"INSERT INTO cat.{namespace}.flat VALUES (100, 'eu', 1.50, DATE '2024-06-01')")
    assert [row[0] for row in _pyiceberg(rest.load_table((namespace, "flat")))] == [0, 1, 2, 100]
    with pytest.raises(duckdb.Error, match=r"Unauthorized_401.*invalid_client") as refused:
        attached(iceberg_service, f"CLIENT_ID 'etl', CLIENT_SECRET 'not-the-secret-of-etl-0000', {oauth}", tmp_path / "bad")
    assert WRITE_TOKEN not in str(refused.value)
    # a read-only token reads, and its commit is refused with the spec's 403 naming what the token may do
    ro = attached(iceberg_service, f"TOKEN '{READ_TOKEN}'", tmp_path / "ro")
    assert ro.execute(f"SELECT count(*) FROM cat.{namespace}.flat").fetchall() == [(4,)]
    before = rest.load_table((namespace, "flat")).metadata_location
    with pytest.raises(duckdb.TransactionException, match=r"Forbidden_403") as forbidden:
        ro.execute(f"INSERT INTO cat.{namespace}.flat VALUES (101, 'us', 2.00, DATE '2024-06-02')")
    assert "ForbiddenException" in str(forbidden.value) and "token 'ro' may read" in str(forbidden.value)
    assert rest.load_table((namespace, "flat")).metadata_location == before


@pytest.mark.slow
def test_duckdb_writes_are_read_back_by_pyiceberg_and_spark(iceberg_service: Server, namespace: str, spark: Any,
                                                           spark_ice: str, iceberg_catalog: Any, tmp_path: Path) -> None:
    rest = rest_catalog(iceberg_service)
    _create(iceberg_service, namespace, "sales", partitioned=True).append(_rows(0, 6))
    duck = attached(iceberg_service, f"TOKEN '{iceberg_service.token}'", tmp_path)
    duck.execute(f"INSERT INTO cat.{namespace}.sales VALUES (100, 'eu', 1.25, DATE '2024-02-01'), "
                 f"(101, 'sa', NULL, DATE '2024-02-02')")  # an existing partition and a new one
    duck.execute(f"DELETE FROM cat.{namespace}.sales WHERE id = 1")
    duck.execute(f"CREATE TABLE cat.{namespace}.made (id BIGINT, name VARCHAR)")
    duck.execute(f"INSERT INTO cat.{namespace}.made SELECT range, 'n' || range FROM range(5)")

    expected = [row for row in _tuples(_rows(0, 6)) if row[0] != 1] + [
        (100, "eu", Decimal("1.25"), datetime.date(2024, 2, 1)), (101, "sa", None, datetime.date(2024, 2, 2))]
    sales = rest.load_table((namespace, "sales"))
    assert _pyiceberg(sales) == expected
    assert _spark(spark, f"SELECT id, region, amount, day FROM {spark_ice}.{namespace}.sales ORDER BY id") == expected
    # DuckDB's file for the new partition carries its partition value: pyiceberg's pruning by it finds the row
    assert [row[0] for row in _pyiceberg(sales, row_filter="region == 'sa'")] == [101]
    assert _spark(spark, f"SELECT id FROM {spark_ice}.{namespace}.sales WHERE region = 'sa'") == [(101,)]
    # the created table is a real Iceberg table in the metastore, as pyiceberg's own HiveCatalog sees it
    made = [(i, f"n{i}") for i in range(5)]
    direct = iceberg_catalog.load_table((namespace, "made"))
    assert direct.metadata_location == rest.load_table((namespace, "made")).metadata_location
    assert _pyiceberg(direct) == made
    assert _spark(spark, f"SELECT id, name FROM {spark_ice}.{namespace}.made ORDER BY id") == made


@pytest.mark.slow
def test_create_table_as_select(iceberg_service: Server, namespace: str, spark: Any, spark_ice: str, tmp_path: Path) -> None:
    duck = attached(iceberg_service, f"TOKEN '{iceberg_service.token}'", tmp_path)
    duck.execute(f"CREATE TABLE cat.{namespace}.ctas AS SELECT range AS id, 'x' || range AS name FROM range(4)")
    rows = [(i, f"x{i}") for i in range(4)]
    assert _pyiceberg(rest_catalog(iceberg_service).load_table((namespace, "ctas"))) == rows
    assert _spark(spark, f"SELECT id, name FROM {spark_ice}.{namespace}.ctas ORDER BY id") == rows
