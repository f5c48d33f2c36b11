"""Writes through the connector to Iceberg tables partitioned by each of Iceberg's transforms, and CREATE
TABLE .. USING iceberg AS SELECT: read back by pyiceberg (the rows written, and each data file's partition
tuple equal to pyiceberg's transform of its own rows) and by the connector."""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.spark_connector.conftest import CATALOG

DB = f"icew{os.getpid()}"
COLUMNS = "id BIGINT, s STRING, ts TIMESTAMP, d DATE, amount DECIMAL(10,2)"
UTC = datetime.UTC


def _row(i: int) -> tuple[Any, ...]:
    ts = datetime.datetime(2023, 11, 28, 22, 0) + datetime.timedelta(hours=7 * i, minutes=i)
    s = None if i % 7 == 3 else ["alpha", "beta", "ünï€", "al", "zz", "k=v/1"][i % 6] + str(i % 3)
    return (i, s, ts, (ts - datetime.timedelta(days=40 * i)).date(), Decimal(f"{i * 37 - 200}.{i % 100:02d}"))


ROWS = [_row(i) for i in range(40)]


@pytest.fixture(scope="module")
def db(spark: Any, connected: str) -> Iterator[str]:
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")
    spark.sql(f"CREATE DATABASE spark_catalog.{DB}")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    yield DB
    spark.conf.unset("spark.sql.session.timeZone")
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{DB} CASCADE")


def _catalog(metastore_uri: str) -> Any:
    from pyiceberg.catalog.hive import HiveCatalog

    return HiveCatalog("check", uri=metastore_uri, **{"hive.hive2-compatible": "true"})


def _create(metastore_uri: str, name: str, fields: list[tuple[str, str]]) -> Any:
    """A table made by pyiceberg (not by the catalog), partitioned by ``fields`` (column, transform)."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import parse_transform
    from pyiceberg.types import DateType, DecimalType, LongType, NestedField, StringType, TimestampType

    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "s", StringType()), NestedField(3, "ts", TimestampType()),
                    NestedField(4, "d", DateType()), NestedField(5, "amount", DecimalType(10, 2)))
    ids = {"id": 1, "s": 2, "ts": 3, "d": 4, "amount": 5}
    spec = PartitionSpec(*[PartitionField(ids[column], 1000 + i, parse_transform(transform), f"p{i}_{column}")
                           for i, (column, transform) in enumerate(fields)])
    return _catalog(metastore_uri).create_table((DB, name), schema=schema, partition_spec=spec)


def _frame(spark: Any, rows: list[tuple[Any, ...]]) -> Any:
    return spark.createDataFrame(rows, COLUMNS)


def _normal(row: dict[str, Any] | Any) -> tuple[Any, ...]:
    values = dict(row) if isinstance(row, dict) else row.asDict()
    ts = values["ts"]
    if ts is not None and ts.tzinfo is not None:
        ts = ts.astimezone(UTC).replace(tzinfo=None)
    return (values["id"], values["s"], ts, values["d"], values["amount"])


def _checked(metastore_uri: str, name: str) -> list[tuple[Any, ...]]:
    """The table's rows as pyiceberg reads them, after checking that each data file lies in the one
    partition its manifest entry names, as pyiceberg's transforms compute it from the file's rows."""
    import pyarrow.parquet as pq
    from pyiceberg.partitioning import partition_record_value

    table = _catalog(metastore_uri).load_table((DB, name))
    schema = table.schema()
    for task in table.scan().plan_files():
        spec = table.specs()[task.file.spec_id]
        rows = pq.read_table(urlsplit(task.file.file_path).path).to_pylist()
        assert task.file.record_count == len(rows) and rows
        for position, field in enumerate(spec.fields):
            source = schema.find_field(field.source_id)
            transform = field.transform.transform(source.field_type)
            computed = {transform(partition_record_value(field, r[source.name], schema)) for r in rows}
            assert computed == {task.file.partition[position]}, (task.file.file_path, field, computed)
    return sorted((_normal(r) for r in table.scan().to_arrow().to_pylist()), key=repr)


def _through_connector(spark: Any, name: str) -> list[tuple[Any, ...]]:
    return sorted((_normal(r) for r in spark.table(f"{CATALOG}.{DB}.{name}").collect()), key=repr)


def _expected(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(rows, key=repr)


_TRANSFORMS = {
    "identity": [("s", "identity")],
    "year": [("ts", "year")],
    "month": [("d", "month")],
    "day": [("ts", "day")],
    "hour": [("ts", "hour")],
    "bucket_long": [("id", "bucket[4]")],
    "bucket_string_date": [("s", "bucket[3]"), ("d", "bucket[5]")],
    "bucket_decimal_ts": [("amount", "bucket[6]"), ("ts", "bucket[2]")],
    "truncate": [("s", "truncate[2]"), ("id", "truncate[10]"), ("amount", "truncate[5000]")],
    "void": [("id", "void"), ("d", "year")],
}


@pytest.mark.parametrize("case", sorted(_TRANSFORMS))
def test_insert_and_append_to_a_table_partitioned_by_transforms(spark: Any, db: str, metastore_uri: str, case: str) -> None:
    name = f"t_{case}"
    _create(metastore_uri, name, _TRANSFORMS[case])
    _frame(spark, ROWS[:25]).createOrReplaceTempView("ice_source")
    spark.sql(f"INSERT INTO {CATALOG}.{db}.{name} SELECT * FROM ice_source")
    _frame(spark, ROWS[25:]).repartition(3).writeTo(f"{CATALOG}.{db}.{name}").append()
    assert _checked(metastore_uri, name) == _expected(ROWS)
    assert _through_connector(spark, name) == _expected(ROWS)
    assert len(_catalog(metastore_uri).load_table((db, name)).snapshots()) == 2


def test_overwrite_partitions_replaces_the_days_written(spark: Any, db: str, metastore_uri: str) -> None:
    _create(metastore_uri, "days", [("ts", "day"), ("id", "bucket[2]")])
    _frame(spark, ROWS).writeTo(f"{CATALOG}.{db}.days").append()
    new = [(1000 + i, "new", ROWS[i][2] + datetime.timedelta(minutes=1), ROWS[i][3], Decimal("1.00")) for i in (0, 10)]
    _frame(spark, new).writeTo(f"{CATALOG}.{db}.days").overwritePartitions()

    def partition(row: tuple[Any, ...]) -> tuple[Any, ...]:
        from pyiceberg.transforms import BucketTransform
        from pyiceberg.types import LongType

        return (row[2].date(), BucketTransform(2).transform(LongType())(row[0]))

    replaced = {partition(r) for r in new}
    kept = [r for r in ROWS if partition(r) not in replaced]
    assert len(kept) < len(ROWS)
    assert _checked(metastore_uri, "days") == _expected(kept + new)
    assert _through_connector(spark, "days") == _expected(kept + new)


def test_overwrite_by_filter_deletes_the_files_whose_rows_all_match(spark: Any, db: str, metastore_uri: str) -> None:
    from pyspark.sql.functions import col

    _create(metastore_uri, "by_filter", [("s", "identity"), ("ts", "month")])
    _frame(spark, ROWS).writeTo(f"{CATALOG}.{db}.by_filter").append()
    new = [(500, "beta1", datetime.datetime(2030, 1, 1), datetime.date(2030, 1, 1), Decimal("5.00"))]
    _frame(spark, new).writeTo(f"{CATALOG}.{db}.by_filter").overwrite(col("s") == "beta1")
    expected = [r for r in ROWS if r[1] != "beta1"] + new
    assert _checked(metastore_uri, "by_filter") == _expected(expected)
    assert _through_connector(spark, "by_filter") == _expected(expected)
    spark.sql(f"INSERT OVERWRITE {CATALOG}.{db}.by_filter SELECT * FROM VALUES (7, 'x', TIMESTAMP'2024-01-01 00:00:00', "
              "DATE'2024-01-01', 1.00) AS v(id, s, ts, d, amount)")
    assert [r[0] for r in _checked(metastore_uri, "by_filter")] == [7]


def test_overwrite_by_a_filter_that_splits_a_file_is_refused(spark: Any, db: str, metastore_uri: str) -> None:
    from pyspark.sql.functions import col

    _create(metastore_uri, "split", [("id", "bucket[2]")])
    _frame(spark, ROWS).writeTo(f"{CATALOG}.{db}.split").append()
    with pytest.raises(Exception, match="holds rows that match it and rows that may not"):
        _frame(spark, ROWS[:1]).writeTo(f"{CATALOG}.{db}.split").overwrite(col("id") == 3)
    assert _checked(metastore_uri, "split") == _expected(ROWS)


def test_create_table_as_select_into_iceberg(spark: Any, db: str, metastore_uri: str) -> None:
    from pyspark.sql.functions import col
    from pyspark.sql.functions.partitioning import bucket, days

    _frame(spark, ROWS).createOrReplaceTempView("ice_source")
    spark.sql(f"CREATE TABLE {CATALOG}.{db}.ctas USING iceberg PARTITIONED BY (days(ts), bucket(4, id)) AS SELECT * FROM ice_source")
    table = _catalog(metastore_uri).load_table((db, "ctas"))
    assert [str(f.transform) for f in table.spec().fields] == ["day", "bucket[4]"]
    assert _checked(metastore_uri, "ctas") == _expected(ROWS)
    assert _through_connector(spark, "ctas") == _expected(ROWS)
    _frame(spark, ROWS[:9]).writeTo(f"{CATALOG}.{db}.ctas2").using("iceberg") \
        .partitionedBy(days(col("ts")), bucket(3, col("s"))).create()
    assert _checked(metastore_uri, "ctas2") == _expected(ROWS[:9])
    spark.sql(f"CREATE OR REPLACE TABLE {CATALOG}.{db}.ctas USING iceberg PARTITIONED BY (truncate(3, s)) AS "
              "SELECT * FROM ice_source WHERE id < 5")
    table = _catalog(metastore_uri).load_table((db, "ctas"))
    assert [str(f.transform) for f in table.spec().fields] == ["truncate[3]"]
    assert _checked(metastore_uri, "ctas") == _expected(ROWS[:5])
    assert _through_connector(spark, "ctas") == _expected(ROWS[:5])


def test_the_connectors_transforms_equal_pyicebergs(spark: Any) -> None:
    import mmh3
    from pyiceberg.transforms import TruncateTransform
    from pyiceberg.types import StringType

    transforms = spark._jvm.hmscatalog.spark.IcebergTransforms
    for text in ["", "a", "ab", "abc", "abcd", "iceberg", "ünï€𝄞 x", "k=v/1" * 9]:
        data = text.encode()
        assert transforms.murmur3(bytearray(data)) == mmh3.hash(data, signed=True), text
        assert transforms.truncate(text, 3) == TruncateTransform(3).transform(StringType())(text), text
    for micros in [0, -1, 1, 86_399_999_999, -86_400_000_001, 1_700_000_000_123_456]:
        day = datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=micros)
        assert transforms.day(micros) == (day.date() - datetime.date(1970, 1, 1)).days
        assert transforms.month(micros) == (day.year - 1970) * 12 + day.month - 1


def test_a_task_writing_more_partitions_than_it_keeps_open(spark: Any, db: str, metastore_uri: str) -> None:
    """More partitions in one task than the writer keeps files open for (100): each file still one partition."""
    _create(metastore_uri, "many", [("id", "bucket[3]"), ("ts", "hour")])
    start = datetime.datetime(2024, 1, 1)
    rows = [(i, "x", start + datetime.timedelta(hours=(i * 37) % 260), start.date(), Decimal("1.00")) for i in range(520)]
    _frame(spark, rows).coalesce(1).writeTo(f"{CATALOG}.{db}.many").append()
    assert _checked(metastore_uri, "many") == _expected(rows)
