"""Writes through the connector: INSERT, INSERT OVERWRITE, CTAS and DataFrameWriterV2 on tables of the
metastore, committed by the service, compared with what Spark's own Hive support writes and reads."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.spark_connector.conftest import CATALOG
from tests.support.hms import Admin

DB = f"wr{os.getpid()}"


@pytest.fixture(scope="module")
def db(spark: Any, connected: str) -> Iterator[str]:
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")
    spark.sql(f"CREATE DATABASE spark_catalog.{DB}")
    yield DB
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")


def _rows(spark: Any, table: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(row) for row in spark.table(table).collect()), key=repr)


def _partitions(spark: Any, table: str) -> list[str]:
    return sorted(row[0] for row in spark.sql(f"SHOW PARTITIONS {table}").collect())


def _location(admin: Admin, table: str) -> Path:
    struct = admin.pool.call("get_table", DB, table)
    return Path(urlsplit(struct.sd.location).path)


def test_insert_into_a_hive_parquet_table_is_read_by_sparks_own_hive_reader(spark: Any, db: str, admin: Admin) -> None:
    spark.sql(f"CREATE TABLE spark_catalog.{db}.sales (id INT, amount DECIMAL(10,2), dt STRING) PARTITIONED BY (dt) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {CATALOG}.{db}.sales VALUES (1, 1.50, '2024-01-01'), (2, 2.25, '2024-01-02'), (3, NULL, '2024-01-02')")
    spark.sql(f"INSERT INTO {CATALOG}.{db}.sales PARTITION (dt='50%') VALUES (4, 4.00)")
    own = _rows(spark, f"spark_catalog.{db}.sales")
    assert own == _rows(spark, f"{CATALOG}.{db}.sales")
    assert len(own) == 4
    assert _partitions(spark, f"spark_catalog.{db}.sales") == ["dt=2024-01-01", "dt=2024-01-02", "dt=50%25"]
    assert (_location(admin, "sales") / "dt=50%25").is_dir()


# The overwrite matrix: every INSERT OVERWRITE shape, on a Hive table and a data source table, in both
# partitionOverwriteModes, with rows and with none, against Spark's own table of the same kind.
_KINDS = {"hive": "STORED AS PARQUET", "datasource": "USING parquet"}
_SHAPES = {
    "no_spec": "PARTITION (a, b) SELECT id, a, b FROM VALUES (10, 1, 'x'), (11, 3, 'z') AS s(id, a, b)",
    "full_spec": "PARTITION (a=1, b='x') SELECT id FROM VALUES (14) AS s(id)",
    "partial_spec": "PARTITION (a=1, b) SELECT id, b FROM VALUES (12, 'y'), (13, 'w') AS s(id, b)",
}


def _twin(spark: Any, name: str, storage: str) -> None:
    columns = "(id INT, a INT, b STRING)" if "USING" in storage else "(id INT)"
    partitioning = "PARTITIONED BY (a, b)" if "USING" in storage else "PARTITIONED BY (a INT, b STRING)"
    spark.sql(f"CREATE TABLE spark_catalog.{DB}.{name} {columns} {storage} {partitioning}")
    spark.sql(f"INSERT INTO spark_catalog.{DB}.{name} PARTITION (a, b) VALUES (1, 1, 'x'), (2, 1, 'y'), (3, 2, 'x')")


# Left out: DYNAMIC mode, a full static spec and no rows. Spark hands a catalog's table that case as a dynamic
# overwrite without the spec, so the partition keeps its rows where Spark empties its own (README, "Known
# differences").
_MATRIX = [case for case in itertools.product(sorted(_KINDS), ["STATIC", "DYNAMIC"], sorted(_SHAPES), ["rows", "no_rows"])
           if case[1:] != ("DYNAMIC", "full_spec", "no_rows")]


@pytest.mark.parametrize(("kind", "mode", "shape", "rows"), _MATRIX)
def test_insert_overwrite_means_what_it_means_for_sparks_own_table(spark: Any, db: str, admin: Admin, kind: str, mode: str,
                                                                  shape: str, rows: str) -> None:
    own, ours = f"own_{kind}_{mode}_{shape}_{rows}".lower(), f"our_{kind}_{mode}_{shape}_{rows}".lower()
    for name in (own, ours):
        _twin(spark, name, _KINDS[kind])
    statement = _SHAPES[shape] + (" WHERE false" if rows == "no_rows" else "")
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", mode)
    try:
        spark.sql(f"INSERT OVERWRITE spark_catalog.{DB}.{own} {statement}")
        spark.sql(f"INSERT OVERWRITE {CATALOG}.{DB}.{ours} {statement}")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert _partitions(spark, f"spark_catalog.{DB}.{ours}") == _partitions(spark, f"spark_catalog.{DB}.{own}")
    assert _rows(spark, f"spark_catalog.{DB}.{ours}") == _rows(spark, f"spark_catalog.{DB}.{own}")
    assert _rows(spark, f"{CATALOG}.{DB}.{ours}") == _rows(spark, f"spark_catalog.{DB}.{own}")
    _assert_clean(admin, ours)


def _assert_clean(admin: Admin, table: str) -> None:
    """No staging or temporary folder outside a current location, no data file outside every current location,
    and numFiles/totalSize equal to the visible files under each location."""
    struct = admin.pool.call("get_table", DB, table)
    root = Path(urlsplit(struct.sd.location).path)
    while root.name.startswith(".hms-staging-"):
        root = root.parent
    locations = [struct] if not struct.partitionKeys else admin.pool.call("get_partitions", DB, table, -1)
    current = [Path(urlsplit(p.sd.location).path) for p in locations]
    for path in root.rglob("*"):
        inside = any(path == loc or loc in path.parents for loc in current)
        if path.is_dir() and path.name.startswith((".hms-staging", ".spark-staging", "_temporary")):
            assert inside or any(path in loc.parents for loc in current), f"{path} left behind"
        if path.is_file() and not any(part.startswith((".", "_")) for part in path.relative_to(root).parts):
            assert inside, f"{path} is outside every current location of {table}"
    for owner, location in zip(locations, current):
        visible = [p for p in location.rglob("*") if p.is_file() and not any(
            part.startswith((".", "_")) for part in p.relative_to(location).parts)]
        assert owner.parameters.get("numFiles") == str(len(visible)), (owner.values if struct.partitionKeys else table)
        assert owner.parameters.get("totalSize") == str(sum(p.stat().st_size for p in visible))
