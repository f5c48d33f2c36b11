"""The type tree rendered as Spark types, and Spark types read back into the tree.

Only ``pyspark.sql.types`` objects are built; no SparkSession or JVM is needed. The choices where a
source type has no Spark type of its own follow what Spark's connectors do:

* ``uuid`` -> ``string`` and ``fixed[n]`` -> ``binary``, as Iceberg's ``TypeToSparkType`` does;
* ``time`` -> ``TimeType(6)`` (Spark 4.1+; Iceberg time is microseconds, Spark's default precision);
* ``char(n)``/``varchar(n)`` -> Spark ``CharType``/``VarcharType``, which is what Spark's catalog keeps
  for Hive tables and what ``DESCRIBE`` prints;
* ``void`` -> ``NullType`` (simple string ``void``);
* ``uniontype`` is refused: Spark cannot read Hive union columns.

Comments become the ``"comment"`` metadata entry, as Spark stores them. Field ids are not carried:
Spark's types have no place for them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING

from hms_catalog._lazy import LazyModule
from hms_catalog.errors import UnsupportedTypeError
from hms_catalog.types.hive import type_name
from hms_catalog.types.tree import (
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
    PrimitiveType,
    SmallIntType,
    StringType,
    StructField,
    StructType,
    TimestampNtzType,
    TimestampType,
    TimeType,
    TinyIntType,
    TypeVisitor,
    UnionType,
    UuidType,
    VarcharType,
    VoidType,
    visit,
)

if TYPE_CHECKING:
    from pyspark.sql import types as st
else:
    st = LazyModule("pyspark.sql.types")  # pyspark only once a Spark type is made or read

__all__ = ["to_spark_type", "to_spark_simple_string", "to_spark_schema", "from_spark_type"]

TIME_PRECISION = 6
"""Iceberg's time is in microseconds, which is Spark's TIME(6)."""

COMMENT_KEY = "comment"
"""The StructField metadata key Spark keeps column comments under."""

# Parameterless primitives: their simpleString, and (made on first use, as they need pyspark) their Spark type.
_SIMPLE_STRINGS: dict[type[PrimitiveType], str] = {
    BooleanType: "boolean",
    TinyIntType: "tinyint",
    SmallIntType: "smallint",
    IntType: "int",
    BigIntType: "bigint",
    FloatType: "float",
    DoubleType: "double",
    StringType: "string",
    UuidType: "string",
    BinaryType: "binary",
    DateType: "date",
    TimestampType: "timestamp",
    TimestampNtzType: "timestamp_ntz",
    TimeType: f"time({TIME_PRECISION})",
    IntervalYearMonthType: "interval year to month",
    IntervalDayTimeType: "interval day to second",
    VoidType: "void",
}


@functools.cache
def _spark_primitives() -> dict[type[PrimitiveType], st.DataType]:
    return {
        BooleanType: st.BooleanType(),
        TinyIntType: st.ByteType(),
        SmallIntType: st.ShortType(),
        IntType: st.IntegerType(),
        BigIntType: st.LongType(),
        FloatType: st.FloatType(),
        DoubleType: st.DoubleType(),
        StringType: st.StringType(),
        UuidType: st.StringType(),
        BinaryType: st.BinaryType(),
        DateType: st.DateType(),
        TimestampType: st.TimestampType(),
        TimestampNtzType: st.TimestampNTZType(),
        TimeType: st.TimeType(TIME_PRECISION),
        IntervalYearMonthType: st.YearMonthIntervalType(st.YearMonthIntervalType.YEAR, st.YearMonthIntervalType.MONTH),
        IntervalDayTimeType: st.DayTimeIntervalType(st.DayTimeIntervalType.DAY, st.DayTimeIntervalType.SECOND),
        VoidType: st.NullType(),
    }


def _unsupported_union(union: UnionType) -> UnsupportedTypeError:
    return UnsupportedTypeError(f"Spark cannot represent the Hive union type {type_name(union)}")


class _SparkTypeRenderer(TypeVisitor["st.DataType"]):
    def struct(self, struct: StructType, field_results: list[st.DataType]) -> st.DataType:
        return st.StructType([_spark_field(f, t) for f, t in zip(struct.fields, field_results, strict=True)])

    def field(self, field: StructField, type_result: st.DataType) -> st.DataType:
        return type_result

    def array(self, array: ArrayType, element_result: st.DataType) -> st.DataType:
        return st.ArrayType(element_result, containsNull=array.element_nullable)

    def map(self, map_type: MapType, key_result: st.DataType, value_result: st.DataType) -> st.DataType:
        return st.MapType(key_result, value_result, valueContainsNull=map_type.value_nullable)

    def union(self, union: UnionType, alternative_results: list[st.DataType]) -> st.DataType:
        raise _unsupported_union(union)

    def primitive(self, primitive: PrimitiveType) -> st.DataType:
        known = _spark_primitives().get(type(primitive))
        if known is not None:
            return known
        if isinstance(primitive, DecimalType):
            return st.DecimalType(primitive.precision, primitive.scale)
        if isinstance(primitive, CharType):
            return st.CharType(primitive.length)
        if isinstance(primitive, VarcharType):
            return st.VarcharType(primitive.length)
        if isinstance(primitive, FixedType):
            return st.BinaryType()
        raise UnsupportedTypeError(f"no Spark type for {type_name(primitive)}")


class _SimpleStringRenderer(TypeVisitor[str]):
    """Spark's ``simpleString``: field names are printed bare, exactly as pyspark does."""

    def struct(self, struct: StructType, field_results: list[str]) -> str:
        return f"struct<{','.join(field_results)}>"

    def field(self, field: StructField, type_result: str) -> str:
        return f"{field.name}:{type_result}"

    def array(self, array: ArrayType, element_result: str) -> str:
        return f"array<{element_result}>"

    def map(self, map_type: MapType, key_result: str, value_result: str) -> str:
        return f"map<{key_result},{value_result}>"

    def union(self, union: UnionType, alternative_results: list[str]) -> str:
        raise _unsupported_union(union)

    def primitive(self, primitive: PrimitiveType) -> str:
        known = _SIMPLE_STRINGS.get(type(primitive))
        if known is not None:
            return known
        if isinstance(primitive, DecimalType):
            return f"decimal({primitive.precision},{primitive.scale})"
        if isinstance(primitive, CharType):
            return f"char({primitive.length})"
        if isinstance(primitive, VarcharType):
            return f"varchar({primitive.length})"
        if isinstance(primitive, FixedType):
            return "binary"
        raise UnsupportedTypeError(f"no Spark type for {type_name(primitive)}")


def _spark_field(field: StructField, spark_type: st.DataType) -> st.StructField:
    metadata = {COMMENT_KEY: field.comment} if field.comment is not None else None
    return st.StructField(field.name, spark_type, nullable=field.nullable, metadata=metadata)


def to_spark_type(data_type: DataType) -> st.DataType:
    """The pyspark type Spark uses for ``data_type``; unions raise UnsupportedTypeError."""
    return visit(data_type, _SparkTypeRenderer())


def to_spark_simple_string(data_type: DataType) -> str:
    """What Spark's ``DataType.simpleString()`` prints for ``to_spark_type(data_type)``.

    This is pyspark's form, which lists every struct field; the JVM's ``DESCRIBE`` additionally
    elides fields past ``spark.sql.debug.maxToStringFields`` (25 by default).
    """
    return visit(data_type, _SimpleStringRenderer())


def to_spark_schema(fields: Iterable[StructField]) -> st.StructType:
    """A table's columns as a Spark schema (nullability and comments kept)."""
    return st.StructType([_spark_field(f, to_spark_type(f.type)) for f in fields])


# -- Spark -> tree -----------------------------------------------------------------------------------

@functools.cache
def _from_spark_primitives() -> dict[type[st.DataType], PrimitiveType]:
    return {
        st.BooleanType: BooleanType(),
        st.ByteType: TinyIntType(),
        st.ShortType: SmallIntType(),
        st.IntegerType: IntType(),
        st.LongType: BigIntType(),
        st.FloatType: FloatType(),
        st.DoubleType: DoubleType(),
        st.BinaryType: BinaryType(),
        st.DateType: DateType(),
        st.TimestampType: TimestampType(),
        st.TimestampNTZType: TimestampNtzType(),
        st.NullType: VoidType(),
    }


def from_spark_type(spark_type: st.DataType) -> DataType:
    """Read a pyspark type into the tree, to compare with the schema Spark reports for a table.

    Spark types the tree has no node for (calendar intervals, variants, collated strings, interval
    types other than YEAR TO MONTH / DAY TO SECOND, TIME of another precision) raise
    UnsupportedTypeError.
    """
    known = _from_spark_primitives().get(type(spark_type))
    if known is not None:
        return known
    if isinstance(spark_type, st.StringType) and spark_type.isUTF8BinaryCollation():
        return StringType()
    if isinstance(spark_type, st.DecimalType):
        return DecimalType(spark_type.precision, spark_type.scale)
    if isinstance(spark_type, st.CharType):
        return CharType(spark_type.length)
    if isinstance(spark_type, st.VarcharType):
        return VarcharType(spark_type.length)
    if isinstance(spark_type, st.TimeType) and spark_type.precision == TIME_PRECISION:
        return TimeType()
    if isinstance(spark_type, st.YearMonthIntervalType) and (spark_type.startField, spark_type.endField) == (
        st.YearMonthIntervalType.YEAR,
        st.YearMonthIntervalType.MONTH,
    ):
        return IntervalYearMonthType()
    if isinstance(spark_type, st.DayTimeIntervalType) and (spark_type.startField, spark_type.endField) == (
        st.DayTimeIntervalType.DAY,
        st.DayTimeIntervalType.SECOND,
    ):
        return IntervalDayTimeType()
    if isinstance(spark_type, st.ArrayType):
        return ArrayType(from_spark_type(spark_type.elementType), spark_type.containsNull)
    if isinstance(spark_type, st.MapType):
        return MapType(
            from_spark_type(spark_type.keyType), from_spark_type(spark_type.valueType), spark_type.valueContainsNull
        )
    if isinstance(spark_type, st.StructType):
        return StructType(tuple(_from_spark_field(f) for f in spark_type.fields))
    raise UnsupportedTypeError(f"no hms_catalog type for the Spark type {spark_type.simpleString()}")


def _from_spark_field(field: st.StructField) -> StructField:
    comment = field.metadata.get(COMMENT_KEY)
    return StructField(
        field.name,
        from_spark_type(field.dataType),
        nullable=field.nullable,
        comment=comment if isinstance(comment, str) else None,
    )
