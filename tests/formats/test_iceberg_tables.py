"""Iceberg tables written by pyiceberg's HiveCatalog: detection, current schema with evolution, refresh."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from hms_catalog.execution import Session


@pytest.fixture
def events(iceberg_catalog: Any, unique_name: str) -> Iterator[Any]:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import DayTransform
    from pyiceberg.types import DecimalType, ListType, LongType, NestedField, StringType, StructType, TimestampType, TimestamptzType

    iceberg_catalog.create_namespace(unique_name)
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType(), doc="who"),
        NestedField(3, "happened", TimestamptzType()),
        NestedField(4, "local_time", TimestampType()),
        NestedField(5, "amount", DecimalType(12, 3)),
        NestedField(6, "tags", ListType(7, StringType())),
        NestedField(8, "point", StructType(NestedField(9, "x", LongType()), NestedField(10, "y", LongType()))),
    )
    spec = PartitionSpec(PartitionField(source_id=3, field_id=1000, transform=DayTransform(), name="happened_day"))
    table = iceberg_catalog.create_table(f"{unique_name}.events", schema=schema, partition_spec=spec)
    data = pa.Table.from_pylist(
        [{"id": 1, "name": "a", "happened": datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
          "local_time": datetime.datetime(2024, 1, 1, 8), "amount": Decimal("1.500"), "tags": ["x"], "point": {"x": 1, "y": 2}}],
        schema=table.schema().as_arrow(),
    )
    table.append(data)
    yield table
    iceberg_catalog.drop_table(f"{unique_name}.events")
    iceberg_catalog.drop_namespace(unique_name)



def test_iceberg_is_detected_and_described_from_its_metadata(events: Any, session: Session, unique_name: str) -> None:
    catalog = session.manager.catalog("hive")
    before = catalog.metrics()
    rows = session.run_one(f"DESCRIBE hive.{unique_name}.events").rows
    assert catalog.metrics().calls_since(before) == {"get_table_req": 1}
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("id", "bigint", False),
        ("name", "string", True),
        ("happened", "timestamp", True),
        ("local_time", "timestamp_ntz", True),
        ("amount", "decimal(12,3)", True),
        ("tags", "array<string>", True),
        ("point", "struct<x:bigint,y:bigint>", True),
    ]
    assert rows[1][4] == "who"
    handle = catalog.table(unique_name, "events")
    assert handle.detection.format.value == "ICEBERG"
    assert handle.schema.details["partition-spec"] == "happened_day=day(happened)"
    assert [c.field_id for c in handle.schema.columns] == [f.field_id for f in events.schema().fields]


def test_schema_evolution_follows_the_current_schema_after_refresh(events: Any, session: Session, unique_name: str) -> None:
    from pyiceberg.types import StringType

    first = session.run_one(f"DESCRIBE hive.{unique_name}.events").column("Field")
    with events.update_schema() as update:
        update.rename_column("name", "full_name")
        update.delete_column("local_time")
        update.add_column("extra", StringType())
    assert session.run_one(f"DESCRIBE hive.{unique_name}.events").column("Field") == first  # cached within the TTL
    session.run_one(f"REFRESH TABLE hive.{unique_name}.events")
    fields = session.run_one(f"DESCRIBE hive.{unique_name}.events").column("Field")
    assert fields == ["id", "full_name", "happened", "amount", "tags", "point", "extra"]
    handle = session.manager.catalog("hive").table(unique_name, "events")
    assert handle.schema.details["schema-id"] == "1"
    assert handle.schema.column("full_name").field_id == 2
