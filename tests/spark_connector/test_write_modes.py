"""Each write mode means what Spark says it means, on partition values Hive escapes in folder names, and
what a write commits is read by Spark's own Hive reader: no committed location is hidden or removed later.

Spark's meaning of an overwrite by filter (``OverwriteByExpression``): delete the rows the filter matches,
then append every new row (rows outside the filter are appended to their partitions, not replacing them).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.spark_connector.conftest import CATALOG
from tests.support.hms import Admin

DB = f"modes{os.getpid()}"
# Partition values Hive escapes in folder names, and plain ones
ESCAPED = ["k=v", "a/b", "50%", "#tag", "with space", "ünï€", "x:y"]
PLAIN = ["x", "y"]


@pytest.fixture(scope="module")
def db(spark: Any, connected: str) -> Iterator[str]:
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")
    spark.sql(f"CREATE DATABASE spark_catalog.{DB}")
    spark.conf.set("hive.exec.dynamic.partition.mode", "nonstrict")
    yield DB
    spark.conf.unset("hive.exec.dynamic.partition.mode")
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")


def _rows(spark: Any, table: str) -> list[tuple[Any, ...]]:
    if table.startswith("spark_catalog."):
        spark.catalog.refreshTable(table)
    return sorted((tuple(row) for row in spark.table(table).collect()), key=repr)


def _locations(admin: Admin, table: str) -> tuple[Path, list[Path]]:
    """The table's location and every current location (the partitions', or the table's own)."""
    struct = admin.pool.call("get_table", DB, table)
    root = Path(urlsplit(struct.sd.location).path)
    if not struct.partitionKeys:
        return root, [root]
    return root, [Path(urlsplit(p.sd.location).path) for p in admin.pool.call("get_partitions", DB, table, -1)]


def _assert_visible(admin: Admin, table: str, root: Path) -> None:
    """Every committed location exists and none lies in a hidden folder of the table's (other engines skip them)."""
    _, current = _locations(admin, table)
    for location in current:
        assert location.is_dir(), f"{location} of {table} does not exist"
        relative = location.relative_to(root) if location.is_relative_to(root) else Path(location.name)
        assert not any(part.startswith((".", "_")) for part in relative.parts), f"{location} of {table} is hidden"


def _seed(spark: Any, name: str, storage: str) -> list[tuple[int, str]]:
    if storage.startswith("USING"):
        spark.sql(f"CREATE TABLE spark_catalog.{DB}.{name} (id INT, dt STRING) {storage} PARTITIONED BY (dt)")
    else:
        spark.sql(f"CREATE TABLE spark_catalog.{DB}.{name} (id INT) PARTITIONED BY (dt STRING) {storage}")
    rows = [(n * 100 + i, value) for n in range(3) for i, value in enumerate(ESCAPED + PLAIN)]
    spark.createDataFrame(rows, "id INT, dt STRING").write.insertInto(f"spark_catalog.{DB}.{name}")
    return rows


_STORAGES = {"ds": "USING parquet", "hive": "STORED AS PARQUET"}


@pytest.mark.parametrize("storage", sorted(_STORAGES))
def test_overwrite_by_filter_replaces_only_what_the_filter_matches(spark: Any, db: str, admin: Admin, storage: str) -> None:
    from pyspark.sql import functions

    name = f"by_filter_{storage}"
    expected = set(_seed(spark, name, _STORAGES[storage]))
    for step, target in enumerate(["x", *ESCAPED]):
        other = ESCAPED[(ESCAPED.index(target) + 1) % len(ESCAPED)] if target in ESCAPED else "k=v"
        new = [(1000 + step * 10, target), (1001 + step * 10, other), (1002 + step * 10, "y")]
        spark.createDataFrame(new, "id INT, dt STRING").writeTo(f"{CATALOG}.{DB}.{name}").overwrite(functions.col("dt") == target)
        expected = {row for row in expected if row[1] != target} | set(new)
        assert _rows(spark, f"spark_catalog.{DB}.{name}") == sorted(expected, key=repr), f"after overwrite(dt == {target!r})"
    assert _rows(spark, f"{CATALOG}.{DB}.{name}") == sorted(expected, key=repr)
    root, _ = _locations(admin, name)
    _assert_visible(admin, name, root)


@pytest.mark.parametrize("storage", sorted(_STORAGES))
def test_every_write_mode_on_escaped_values_equals_sparks_own(spark: Any, db: str, admin: Admin, storage: str) -> None:
    own, ours = f"own_modes_{storage}", f"our_modes_{storage}"
    for table in (own, ours):
        _seed(spark, table, _STORAGES[storage])
    statements = [
        "INSERT INTO {t} SELECT * FROM VALUES (500, 'k=v'), (501, 'new/one'), (502, 'ünï€') AS s(id, dt)",
        "INSERT INTO {t} PARTITION (dt='50%') SELECT 503",
        "INSERT OVERWRITE {t} PARTITION (dt='#tag') SELECT 504",
        "INSERT OVERWRITE {t} PARTITION (dt='with space') SELECT 505 WHERE false",
    ]
    for statement in statements:
        spark.sql(statement.format(t=f"spark_catalog.{DB}.{own}"))
        spark.sql(statement.format(t=f"{CATALOG}.{DB}.{ours}"))
        assert _rows(spark, f"spark_catalog.{DB}.{ours}") == _rows(spark, f"spark_catalog.{DB}.{own}"), statement
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "DYNAMIC")
    try:
        dynamic = "INSERT OVERWRITE {t} SELECT * FROM VALUES (600, 'k=v'), (601, 'a/b'), (602, 'fresh') AS s(id, dt)"
        spark.sql(dynamic.format(t=f"spark_catalog.{DB}.{own}"))
        spark.sql(dynamic.format(t=f"{CATALOG}.{DB}.{ours}"))
        assert _rows(spark, f"spark_catalog.{DB}.{ours}") == _rows(spark, f"spark_catalog.{DB}.{own}")
        frame = spark.createDataFrame([(700, "x:y"), (701, "50%")], "id INT, dt STRING")
        frame.write.insertInto(f"spark_catalog.{DB}.{own}", overwrite=True)
        frame.write.insertInto(f"{CATALOG}.{DB}.{ours}", overwrite=True)
        assert _rows(spark, f"spark_catalog.{DB}.{ours}") == _rows(spark, f"spark_catalog.{DB}.{own}")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    frame = spark.createDataFrame([(800, "#tag")], "id INT, dt STRING")
    frame.write.insertInto(f"spark_catalog.{DB}.{own}")
    frame.write.insertInto(f"{CATALOG}.{DB}.{ours}")
    assert _rows(spark, f"spark_catalog.{DB}.{ours}") == _rows(spark, f"spark_catalog.{DB}.{own}")
    assert _rows(spark, f"{CATALOG}.{DB}.{ours}") == _rows(spark, f"spark_catalog.{DB}.{own}")
    root, _ = _locations(admin, ours)
    _assert_visible(admin, ours, root)


@pytest.mark.parametrize("storage", ["text", "parquet", "orc"])
def test_an_overwritten_unpartitioned_table_is_read_by_sparks_own_hive_reader(spark: Any, db: str, admin: Admin, storage: str) -> None:
    stored = {"text": "ROW FORMAT DELIMITED FIELDS TERMINATED BY '|' ESCAPED BY '\\\\' NULL DEFINED AS 'NA' STORED AS TEXTFILE",
              "parquet": "STORED AS PARQUET", "orc": "STORED AS ORC"}[storage]
    name = f"plain_{storage}"
    spark.sql(f"CREATE TABLE {CATALOG}.{DB}.{name} (id INT, label STRING) {stored}")
    root, _ = _locations(admin, name)
    spark.sql(f"INSERT INTO {CATALOG}.{DB}.{name} VALUES (1, 'a|b'), (2, NULL)")
    spark.sql(f"INSERT INTO {CATALOG}.{DB}.{name} VALUES (3, 'c')")
    spark.sql(f"INSERT OVERWRITE {CATALOG}.{DB}.{name} VALUES (4, 'd|e'), (5, NULL)")
    assert _rows(spark, f"spark_catalog.{DB}.{name}") == [(4, "d|e"), (5, None)]
    spark.sql(f"INSERT INTO {CATALOG}.{DB}.{name} VALUES (6, 'f')")
    spark.sql(f"INSERT OVERWRITE {CATALOG}.{DB}.{name} VALUES (7, 'g')")
    spark.sql(f"INSERT INTO {CATALOG}.{DB}.{name} VALUES (8, 'h')")
    assert _rows(spark, f"spark_catalog.{DB}.{name}") == [(7, "g"), (8, "h")]
    assert _rows(spark, f"{CATALOG}.{DB}.{name}") == [(7, "g"), (8, "h")]
    _assert_visible(admin, name, root)
    assert _locations(admin, name)[0] == root  # the table keeps the location it was created with, as Spark's own
