from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from pyspark.sql import types as st
from pyspark.sql.pandas.types import to_arrow_type as pyspark_to_arrow_type

from hms_catalog.errors import UnsupportedTypeError
from hms_catalog.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntervalDayTimeType,
    IntervalYearMonthType,
    IntType,
    MapType,
    SmallIntType,
    StringType,
    StructField,
    StructType,
    TimestampNtzType,
    TimestampType,
    TimeType,
    TinyIntType,
    UnionType,
    UuidType,
    VarcharType,
    VoidType,
    from_arrow_schema,
    from_arrow_type,
    parse_hive_type,
    to_arrow_field,
    to_arrow_schema,
    to_arrow_type,
    to_spark_type,
)
from tests.types.strategies import SETTINGS, arrow_renderable, arrow_types

INT, STR = IntType(), StringType()


def same(a: pa.DataType, b: pa.DataType) -> bool:
    """Arrow's == ignores child field names (list "item" vs "element"); str() shows them."""
    return bool(a == b) and str(a) == str(b)


def pyspark_arrow(data_type: DataType) -> pa.DataType:
    """What pyspark gives for the Spark counterpart; Spark reads char/varchar as plain strings."""
    return pyspark_to_arrow_type(_chars_as_strings(to_spark_type(data_type)), timezone="UTC")


def _chars_as_strings(t: st.DataType) -> st.DataType:
    if isinstance(t, (st.CharType, st.VarcharType)):
        return st.StringType()
    if isinstance(t, st.ArrayType):
        return st.ArrayType(_chars_as_strings(t.elementType), t.containsNull)
    if isinstance(t, st.MapType):
        return st.MapType(_chars_as_strings(t.keyType), _chars_as_strings(t.valueType), t.valueContainsNull)
    if isinstance(t, st.StructType):
        return st.StructType([st.StructField(f.name, _chars_as_strings(f.dataType), f.nullable) for f in t])
    return t


CASES: list[tuple[DataType, pa.DataType]] = [
    (BooleanType(), pa.bool_()),
    (TinyIntType(), pa.int8()),
    (SmallIntType(), pa.int16()),
    (INT, pa.int32()),
    (BigIntType(), pa.int64()),
    (FloatType(), pa.float32()),
    (DoubleType(), pa.float64()),
    (DecimalType(10, 2), pa.decimal128(10, 2)),
    (DecimalType(38, 0), pa.decimal128(38, 0)),
    (STR, pa.string()),
    (CharType(3), pa.string()),
    (VarcharType(30), pa.string()),
    (UuidType(), pa.string()),
    (BinaryType(), pa.binary()),
    (FixedType(16), pa.binary()),
    (DateType(), pa.date32()),
    (TimestampType(), pa.timestamp("us", tz="UTC")),
    (TimestampNtzType(), pa.timestamp("us")),
    (TimeType(), pa.time64("ns")),
    (IntervalDayTimeType(), pa.duration("us")),
    (VoidType(), pa.null()),
    (ArrayType(INT), pa.list_(pa.field("element", pa.int32()))),
    (ArrayType(INT, False), pa.list_(pa.field("element", pa.int32(), nullable=False))),
    (
        MapType(STR, INT, False),
        pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int32(), nullable=False)),
    ),
    (
        StructType((StructField("a", INT, nullable=False), StructField("b", ArrayType(STR)))),
        pa.struct(
            [pa.field("a", pa.int32(), nullable=False), pa.field("b", pa.list_(pa.field("element", pa.string())))]
        ),
    ),
]


@pytest.mark.parametrize("data_type, arrow_type", CASES, ids=[str(c[1]) for c in CASES])
def test_arrow_type(data_type: DataType, arrow_type: pa.DataType) -> None:
    assert same(to_arrow_type(data_type), arrow_type)


@pytest.mark.parametrize("data_type, arrow_type", CASES, ids=[str(c[1]) for c in CASES])
def test_matches_pyspark(data_type: DataType, arrow_type: pa.DataType) -> None:
    assert same(to_arrow_type(data_type), pyspark_arrow(data_type))


@pytest.mark.parametrize(
    "hive",
    [
        "array<struct<a:int,b:map<string,array<decimal(10,2)>>>>",
        "struct<ts:timestamp,d:date,c:char(4),v:varchar(9),b:binary>",
        "map<bigint,struct<x:struct<y:struct<z:double>>>>",
        "interval_day_time",
    ],
)
def test_nested_hive_types_match_pyspark(hive: str) -> None:
    data_type = parse_hive_type(hive)
    assert same(to_arrow_type(data_type), pyspark_arrow(data_type))


@SETTINGS
@given(arrow_renderable(with_comments=False))
def test_random_trees_match_pyspark(data_type: DataType) -> None:
    assert same(to_arrow_type(data_type), pyspark_arrow(data_type))


@SETTINGS
@given(arrow_types)
def test_round_trip(data_type: DataType) -> None:
    assert from_arrow_type(to_arrow_type(data_type)) == data_type


def test_void_is_always_nullable_in_arrow() -> None:
    data_type = StructType(
        (StructField("v", VoidType(), nullable=False), StructField("a", ArrayType(VoidType(), False)))
    )
    arrow_type = to_arrow_type(data_type)
    assert arrow_type.field("v").nullable
    assert arrow_type.field("a").type.value_field.nullable
    assert same(to_arrow_type(MapType(STR, VoidType(), False)).item_field.type, pa.null())


@pytest.mark.parametrize(
    "data_type, fragment",
    [
        (IntervalYearMonthType(), "no Arrow type for interval_year_month"),
        (UnionType((INT, STR)), "no Arrow type for the union uniontype<int,string>"),
        (ArrayType(UnionType((INT,))), "uniontype<int>"),
        (MapType(VoidType(), INT), "map with void keys"),
    ],
)
def test_types_without_arrow_counterpart(data_type: DataType, fragment: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        to_arrow_type(data_type)
    assert fragment in str(info.value)


def test_schema_keeps_nullability_and_comments() -> None:
    columns = [
        StructField("id", BigIntType(), nullable=False, comment="the key"),
        StructField("s", StructType((StructField("inner", INT, comment="nested é"),))),
        StructField("plain", STR),
    ]
    schema = to_arrow_schema(columns)
    assert schema.field("id").nullable is False
    assert schema.field("id").metadata == {b"comment": b"the key"}
    assert schema.field("plain").metadata is None
    assert schema.field("s").type.field("inner").metadata == {b"comment": "nested é".encode()}
    assert to_arrow_field(columns[0]).equals(schema.field("id"), check_metadata=True)
    assert from_arrow_schema(schema) == StructType(tuple(columns))


def test_hudi_style_arrow_schema() -> None:
    schema = pa.schema(
        [
            pa.field("_hoodie_commit_time", pa.large_string()),
            pa.field("id", pa.int64(), nullable=False),
            pa.field("ts", pa.timestamp("ms", tz="America/New_York")),
            pa.field("local", pa.timestamp("ns")),
            pa.field("t", pa.time32("ms")),
            pa.field("price", pa.decimal128(12, 3)),
            pa.field("digest", pa.binary(16)),
            pa.field("uid", pa.uuid()),
            pa.field("tags", pa.large_list(pa.string_view())),
            pa.field("fixed", pa.list_(pa.int8(), 3)),
            pa.field("category", pa.dictionary(pa.int32(), pa.string())),
            pa.field("attrs", pa.map_(pa.string(), pa.float32())),
            pa.field("blob", pa.large_binary()),
            pa.field("elapsed", pa.duration("ms")),
            pa.field("nothing", pa.null()),
        ]
    )
    assert from_arrow_schema(schema) == StructType(
        (
            StructField("_hoodie_commit_time", STR),
            StructField("id", BigIntType(), nullable=False),
            StructField("ts", TimestampType()),
            StructField("local", TimestampNtzType()),
            StructField("t", TimeType()),
            StructField("price", DecimalType(12, 3)),
            StructField("digest", FixedType(16)),
            StructField("uid", UuidType()),
            StructField("tags", ArrayType(STR)),
            StructField("fixed", ArrayType(TinyIntType())),
            StructField("category", STR),
            StructField("attrs", MapType(STR, FloatType())),
            StructField("blob", BinaryType()),
            StructField("elapsed", IntervalDayTimeType()),
            StructField("nothing", VoidType()),
        )
    )


@pytest.mark.parametrize(
    "arrow_type",
    [
        pa.uint8(),
        pa.uint32(),
        pa.uint64(),
        pa.float16(),
        pa.date64(),
        pa.decimal256(50, 2),
        pa.month_day_nano_interval(),
        pa.dense_union([pa.field("a", pa.int32())]),
        pa.list_(pa.uint16()),
    ],
)
def test_arrow_types_spark_cannot_read(arrow_type: pa.DataType) -> None:
    with pytest.raises(UnsupportedTypeError, match="Spark cannot represent the Arrow type"):
        from_arrow_type(arrow_type)
