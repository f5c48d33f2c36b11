from __future__ import annotations

import pytest
from hypothesis import given
from pyspark.sql import types as st

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
    from_spark_type,
    parse_hive_type,
    to_spark_schema,
    to_spark_simple_string,
    to_spark_type,
)
from tests.types.strategies import SETTINGS, spark_renderable, spark_types

INT, STR = IntType(), StringType()


def struct(*fields: StructField) -> StructType:
    return StructType(fields)


CASES: list[tuple[DataType, st.DataType, str]] = [
    (BooleanType(), st.BooleanType(), "boolean"),
    (TinyIntType(), st.ByteType(), "tinyint"),
    (SmallIntType(), st.ShortType(), "smallint"),
    (INT, st.IntegerType(), "int"),
    (BigIntType(), st.LongType(), "bigint"),
    (FloatType(), st.FloatType(), "float"),
    (DoubleType(), st.DoubleType(), "double"),
    (DecimalType(10, 2), st.DecimalType(10, 2), "decimal(10,2)"),
    (DecimalType(38, 38), st.DecimalType(38, 38), "decimal(38,38)"),
    (CharType(10), st.CharType(10), "char(10)"),
    (VarcharType(5), st.VarcharType(5), "varchar(5)"),
    (STR, st.StringType(), "string"),
    (BinaryType(), st.BinaryType(), "binary"),
    (DateType(), st.DateType(), "date"),
    (TimestampType(), st.TimestampType(), "timestamp"),
    (TimestampNtzType(), st.TimestampNTZType(), "timestamp_ntz"),
    (TimeType(), st.TimeType(6), "time(6)"),
    (UuidType(), st.StringType(), "string"),
    (FixedType(16), st.BinaryType(), "binary"),
    (IntervalYearMonthType(), st.YearMonthIntervalType(0, 1), "interval year to month"),
    (IntervalDayTimeType(), st.DayTimeIntervalType(0, 3), "interval day to second"),
    (VoidType(), st.NullType(), "void"),
    (ArrayType(INT), st.ArrayType(st.IntegerType(), True), "array<int>"),
    (ArrayType(INT, False), st.ArrayType(st.IntegerType(), False), "array<int>"),
    (MapType(STR, INT), st.MapType(st.StringType(), st.IntegerType(), True), "map<string,int>"),
    (MapType(STR, INT, False), st.MapType(st.StringType(), st.IntegerType(), False), "map<string,int>"),
    (
        ArrayType(struct(StructField("a", INT), StructField("b", STR))),
        st.ArrayType(st.StructType([st.StructField("a", st.IntegerType()), st.StructField("b", st.StringType())])),
        "array<struct<a:int,b:string>>",
    ),
    (struct(), st.StructType([]), "struct<>"),
    (
        struct(StructField("a b", INT, nullable=False, comment="c")),
        st.StructType([st.StructField("a b", st.IntegerType(), False, {"comment": "c"})]),
        "struct<a b:int>",
    ),
    (
        struct(StructField("x:y", MapType(UuidType(), FixedType(2)))),
        st.StructType([st.StructField("x:y", st.MapType(st.StringType(), st.BinaryType()))]),
        "struct<x:y:map<string,binary>>",
    ),
]


@pytest.mark.parametrize("data_type, spark_type, simple", CASES, ids=[c[2] + str(i) for i, c in enumerate(CASES)])
def test_spark_type_and_simple_string(data_type: DataType, spark_type: st.DataType, simple: str) -> None:
    rendered = to_spark_type(data_type)
    assert rendered == spark_type
    assert repr(rendered) == repr(spark_type)
    assert to_spark_simple_string(data_type) == simple == rendered.simpleString()


@pytest.mark.parametrize(
    "hive, simple",
    [
        ("bigint", "bigint"),
        ("INTEGER", "int"),
        ("double precision", "double"),
        ("decimal", "decimal(10,0)"),
        ("struct<a:int COMMENT 'x',`b c`:array<string>>", "struct<a:int,b c:array<string>>"),
        ("map<string,array<struct<x:timestamp>>>", "map<string,array<struct<x:timestamp>>>"),
        ("interval_year_month", "interval year to month"),
        ("interval_day_time", "interval day to second"),
        ("void", "void"),
        ("char(3)", "char(3)"),
    ],
)
def test_hive_strings_as_spark_prints_them(hive: str, simple: str) -> None:
    data_type = parse_hive_type(hive)
    assert to_spark_simple_string(data_type) == simple == to_spark_type(data_type).simpleString()


@SETTINGS
@given(spark_renderable)
def test_simple_string_matches_pyspark(data_type: DataType) -> None:
    assert to_spark_simple_string(data_type) == to_spark_type(data_type).simpleString()


@SETTINGS
@given(spark_types)
def test_round_trip_through_pyspark(data_type: DataType) -> None:
    assert from_spark_type(to_spark_type(data_type)) == data_type


@SETTINGS
@given(spark_types)
def test_pyspark_json_round_trip(data_type: DataType) -> None:
    """pyspark can serialise what we build (its JSON form is what Spark stores in table properties)."""
    spark_type = to_spark_type(data_type)
    assert from_spark_type(st._parse_datatype_json_string(spark_type.json())) == data_type


def test_schema_keeps_nullability_and_comments() -> None:
    columns = (
        StructField("id", BigIntType(), nullable=False, comment="primary key", field_id=1),
        StructField("tags", ArrayType(STR, False)),
    )
    schema = to_spark_schema(columns)
    assert schema == st.StructType(
        [
            st.StructField("id", st.LongType(), False, {"comment": "primary key"}),
            st.StructField("tags", st.ArrayType(st.StringType(), False), True),
        ]
    )
    assert schema.simpleString() == "struct<id:bigint,tags:array<string>>"
    assert to_spark_schema(StructType(columns)) == schema
    assert from_spark_type(schema) == StructType(
        (
            StructField("id", BigIntType(), nullable=False, comment="primary key"),
            StructField("tags", ArrayType(STR, False)),
        )
    )


@pytest.mark.parametrize(
    "data_type",
    [
        UnionType((INT, STR)),
        ArrayType(UnionType((INT, STR))),
        struct(StructField("u", MapType(STR, UnionType((INT, STR))))),
    ],
)
def test_unions_are_refused_naming_the_type(data_type: DataType) -> None:
    for render in (to_spark_type, to_spark_simple_string):
        with pytest.raises(UnsupportedTypeError) as info:
            render(data_type)
        assert "uniontype<int,string>" in str(info.value)
        assert "Spark cannot represent" in str(info.value)


def test_union_column_in_a_schema_is_refused() -> None:
    with pytest.raises(UnsupportedTypeError, match="uniontype<int,string>"):
        to_spark_schema([StructField("u", parse_hive_type("uniontype<int,string>"))])


@pytest.mark.parametrize(
    "spark_type",
    [
        st.CalendarIntervalType(),
        st.VariantType(),
        st.StringType("UNICODE_CI"),
        st.DayTimeIntervalType(st.DayTimeIntervalType.DAY, st.DayTimeIntervalType.HOUR),
        st.YearMonthIntervalType(st.YearMonthIntervalType.YEAR),
        st.TimeType(3),
        st.ArrayType(st.CalendarIntervalType()),
    ],
)
def test_spark_types_without_a_tree_node(spark_type: st.DataType) -> None:
    with pytest.raises(UnsupportedTypeError, match="no hms_catalog type for the Spark type"):
        from_spark_type(spark_type)


def test_from_spark_reads_comments_only_when_they_are_strings() -> None:
    spark_type = st.StructType([st.StructField("a", st.IntegerType(), True, {"comment": 5, "other": "x"})])
    assert from_spark_type(spark_type) == struct(StructField("a", INT))
