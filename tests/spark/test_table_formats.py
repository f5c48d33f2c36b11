"""Reading Iceberg and Hudi tables through the hms source equals their own libraries' reads."""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hms_catalog import open_session
from tests.formats.test_hudi_tables import FIXTURES
from tests.planner.test_iceberg_hudi_planning import trips  # noqa: F401 - the Hudi table fixture
from tests.spark.test_datasource import canonical
from tests.support.hudi_tables import hive_sync_table


@pytest.fixture
def home(tmp_path: Path, metastore_uri: str) -> Iterator[Path]:
    path = tmp_path / "home"
    session = open_session(path)
    session.run_one(f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}')")
    session.manager.close()
    yield path


def _naive_utc(value: Any) -> Any:
    """Spark hands timestamps back as naive datetimes in its session zone (UTC in these tests)."""
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value


def arrow_rows(table: pa.Table) -> Counter[Any]:
    return Counter(canonical(tuple(_naive_utc(v) for v in row.values())) for row in table.to_pylist())


def frame_rows(frame: Any) -> Counter[Any]:
    return Counter(canonical(tuple(row)) for row in frame.collect())


@pytest.fixture
def evolved(iceberg_catalog: Any, unique_name: str) -> Iterator[Any]:
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestamptzType

    iceberg_catalog.create_namespace(unique_name)
    table = iceberg_catalog.create_table(f"{unique_name}.evolved", schema=Schema(
        NestedField(1, "id", LongType()), NestedField(2, "name", StringType()), NestedField(3, "at", TimestamptzType())))
    at = datetime.datetime(2024, 6, 1, 8, tzinfo=datetime.UTC)
    table.append(pa.Table.from_pylist([{"id": 1, "name": "a", "at": at}, {"id": 2, "name": None, "at": None}],
                                      schema=table.schema().as_arrow()))
    with table.update_schema() as update:
        update.rename_column("name", "label")
        update.add_column("score", DoubleType())
    table.append(pa.Table.from_pylist([{"id": 3, "label": "c", "at": at, "score": 0.5}], schema=table.schema().as_arrow()))
    yield table
    iceberg_catalog.drop_table(f"{unique_name}.evolved")
    iceberg_catalog.drop_namespace(unique_name)


def test_iceberg_reads_follow_renames_by_field_id(spark: Any, evolved: Any, home: Path, unique_name: str) -> None:
    ours = spark.read.format("hms").option("home", str(home)).load(f"hive.{unique_name}.evolved")
    assert ours.columns == ["id", "label", "at", "score"]
    assert frame_rows(ours) == arrow_rows(evolved.scan().to_arrow())


def test_hudi_copy_on_write_reads_equal_hudi_rs(spark: Any, trips: str, home: Path) -> None:  # noqa: F811
    import hudi

    session = open_session(home)
    location = session.manager.catalog("hive").table(trips, "trips").thrift.sd.location
    session.manager.close()
    theirs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(location).build().read())
    ours = spark.read.format("hms").option("home", str(home)).load(f"hive.{trips}.trips")
    theirs = theirs.select(ours.columns)
    assert frame_rows(ours) == arrow_rows(theirs)


MOR_FIXTURES = sorted(FIXTURES.glob("*mor*.zip")) if FIXTURES.is_dir() else []


@pytest.mark.parametrize("archive", MOR_FIXTURES, ids=lambda p: p.stem)
def test_merge_on_read_read_optimized_equals_hudi_rs(spark: Any, archive: Path, admin: Any, unique_name: str, home: Path,
                                                      tmp_path: Path) -> None:
    import zipfile

    import hudi

    with zipfile.ZipFile(archive) as bundle:
        bundle.extractall(tmp_path)
    root = next(p.parent.parent for p in tmp_path.rglob(".hoodie/hoodie.properties")
                if "__MACOSX" not in p.parts and ".hoodie" not in p.parent.parent.parts)
    builder = hudi.HudiTableBuilder.from_base_uri(str(root))
    theirs_table = builder.with_hudi_option(str(hudi.HudiReadConfig.USE_READ_OPTIMIZED_MODE.value), "true").build()
    partition_names = [f.name for f in theirs_table.get_partition_schema()]
    admin.create_database(unique_name)
    admin.pool.call("create_table", hive_sync_table(unique_name, "t_ro", root, [],
                                                    partition_keys=[(n, "string") for n in partition_names]))
    ours = spark.read.format("hms").option("home", str(home)).load(f"hive.{unique_name}.t_ro")
    data_columns = [c for c in ours.columns if c not in partition_names]
    theirs = pa.Table.from_batches(theirs_table.read(), schema=theirs_table.get_schema_with_meta_fields()).select(data_columns)
    # Spark turns both sides into rows the same way (structs in field order, maps as dicts).
    assert frame_rows(ours.select(*data_columns)) == frame_rows(spark.createDataFrame(theirs))
