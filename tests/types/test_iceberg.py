from __future__ import annotations

import pytest
from pyiceberg import types as it
from pyiceberg.schema import Schema
from pyspark.sql import types as st

from hms_catalog.errors import UnsupportedTypeError
from hms_catalog.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNtzType,
    TimestampType,
    TimeType,
    UuidType,
    VoidType,
    from_iceberg_schema,
    from_iceberg_type,
    to_arrow_schema,
    to_spark_schema,
)

PRIMITIVES: list[tuple[it.IcebergType, DataType]] = [
    (it.BooleanType(), BooleanType()),
    (it.IntegerType(), IntType()),
    (it.LongType(), BigIntType()),
    (it.FloatType(), FloatType()),
    (it.DoubleType(), DoubleType()),
    (it.DecimalType(9, 2), DecimalType(9, 2)),
    (it.DecimalType(38, 10), DecimalType(38, 10)),
    (it.DateType(), DateType()),
    (it.TimeType(), TimeType()),
    (it.TimestampType(), TimestampNtzType()),
    (it.TimestamptzType(), TimestampType()),
    (it.TimestampNanoType(), TimestampNtzType()),
    (it.TimestamptzNanoType(), TimestampType()),
    (it.StringType(), StringType()),
    (it.UUIDType(), UuidType()),
    (it.FixedType(16), FixedType(16)),
    (it.BinaryType(), BinaryType()),
    (it.UnknownType(), VoidType()),
]


@pytest.mark.parametrize("iceberg_type, expected", PRIMITIVES, ids=[str(p[0]) for p in PRIMITIVES])
def test_primitive(iceberg_type: it.IcebergType, expected: DataType) -> None:
    assert from_iceberg_type(iceberg_type) == expected


def test_nested_types_keep_nullability() -> None:
    assert from_iceberg_type(it.ListType(3, it.StringType(), element_required=False)) == ArrayType(StringType(), True)
    assert from_iceberg_type(it.ListType(3, it.StringType(), element_required=True)) == ArrayType(StringType(), False)
    assert from_iceberg_type(it.MapType(4, it.StringType(), 5, it.LongType(), value_required=False)) == MapType(
        StringType(), BigIntType(), True
    )
    assert from_iceberg_type(it.MapType(4, it.StringType(), 5, it.LongType(), value_required=True)) == MapType(
        StringType(), BigIntType(), False
    )


def _schema() -> Schema:
    return Schema(
        it.NestedField(1, "id", it.LongType(), required=True, doc="row id"),
        it.NestedField(2, "data", it.StringType(), required=False),
        it.NestedField(
            3,
            "location",
            it.StructType(
                it.NestedField(10, "lat", it.DoubleType(), required=True),
                it.NestedField(11, "long", it.DoubleType(), required=False, doc="degrees"),
            ),
            required=False,
        ),
        it.NestedField(4, "tags", it.ListType(12, it.StringType(), element_required=False), required=False),
        it.NestedField(
            5,
            "props",
            it.MapType(
                13,
                it.StringType(),
                14,
                it.StructType(it.NestedField(15, "v", it.DecimalType(10, 2), required=True)),
                value_required=True,
            ),
            required=True,
        ),
        it.NestedField(6, "event_ts", it.TimestamptzType(), required=False),
        it.NestedField(7, "local_ts", it.TimestampType(), required=False),
        it.NestedField(8, "uid", it.UUIDType(), required=False),
        it.NestedField(9, "hash", it.FixedType(32), required=False),
        schema_id=1,
    )


def test_schema_keeps_ids_required_and_docs() -> None:
    assert from_iceberg_schema(_schema()) == StructType(
        (
            StructField("id", BigIntType(), nullable=False, comment="row id", field_id=1),
            StructField("data", StringType(), field_id=2),
            StructField(
                "location",
                StructType(
                    (
                        StructField("lat", DoubleType(), nullable=False, field_id=10),
                        StructField("long", DoubleType(), comment="degrees", field_id=11),
                    )
                ),
                field_id=3,
            ),
            StructField("tags", ArrayType(StringType(), True), field_id=4),
            StructField(
                "props",
                MapType(StringType(), StructType((StructField("v", DecimalType(10, 2), False, field_id=15),)), False),
                nullable=False,
                field_id=5,
            ),
            StructField("event_ts", TimestampType(), field_id=6),
            StructField("local_ts", TimestampNtzType(), field_id=7),
            StructField("uid", UuidType(), field_id=8),
            StructField("hash", FixedType(32), field_id=9),
        )
    )


def test_schema_renders_as_icebergs_spark_runtime_shows_it() -> None:
    spark = to_spark_schema(from_iceberg_schema(_schema()))
    assert spark.simpleString() == (
        "struct<id:bigint,data:string,location:struct<lat:double,long:double>,tags:array<string>,"
        "props:map<string,struct<v:decimal(10,2)>>,event_ts:timestamp,local_ts:timestamp_ntz,uid:string,hash:binary>"
    )
    assert spark["id"].nullable is False and spark["id"].metadata == {"comment": "row id"}
    props = spark["props"].dataType
    assert isinstance(props, st.MapType) and props.valueContainsNull is False


def test_schema_renders_as_arrow() -> None:
    arrow = to_arrow_schema(from_iceberg_schema(_schema()))
    assert arrow.field("id").nullable is False
    assert arrow.field("id").metadata == {b"comment": b"row id"}
    assert str(arrow.field("local_ts").type) == "timestamp[us]"
    assert str(arrow.field("event_ts").type) == "timestamp[us, tz=UTC]"


@pytest.mark.parametrize("iceberg_type", [it.GeometryType(), it.GeographyType()])
def test_types_without_a_spark_counterpart(iceberg_type: it.IcebergType) -> None:
    with pytest.raises(UnsupportedTypeError, match="has no Spark counterpart"):
        from_iceberg_type(iceberg_type)


def test_unsupported_nested_column_is_named_by_its_path() -> None:
    schema = Schema(
        it.NestedField(
            1, "outer", it.StructType(it.NestedField(2, "shape", it.GeometryType(), required=False)), required=False
        )
    )
    with pytest.raises(UnsupportedTypeError) as info:
        from_iceberg_schema(schema)
    assert info.value.column == "outer.shape"
