"""The type tree rendered as Arrow types, and Arrow schemas (as Hudi hands them over) read back.

Each type renders to exactly the Arrow type pyspark's ``to_arrow_type`` gives for its Spark
counterpart (with the session time zone fixed to UTC), so batches built here can be handed to Spark
without a cast: timestamps are microseconds, lists name their element ``element``, map keys are not
null, ``time`` is ``time64[ns]`` and ``interval day to second`` is ``duration[us]``. Char, varchar and
uuid are plain strings (Spark reads char/varchar as strings), fixed is variable-length binary.

A void field is always nullable in Arrow (Arrow refuses a non-nullable null-typed field), and a map
with void keys is refused (its keys could only be null, which Arrow map keys never are). Two types are
refused outright: ``interval year to month`` (pyarrow has no constructor for Arrow's
months interval, and pyspark refuses it too) and unions (no Spark counterpart).

Reading Arrow is wider, as pyspark's ``from_arrow_type`` is: units of timestamps, times and
durations are ignored, large and view variants are accepted and dictionaries are read as their
values.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from hms_catalog._lazy import LazyModule
from hms_catalog.errors import UnsupportedTypeError
from hms_catalog.types.hive import type_name
from hms_catalog.types.tree import (
    MAX_DECIMAL_PRECISION,
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
    import pyarrow as pa
    import pyarrow.types as pat
else:  # pyarrow only once an Arrow type is made or read
    pa = LazyModule("pyarrow")
    pat = LazyModule("pyarrow.types")

__all__ = [
    "to_arrow_type",
    "to_arrow_field",
    "to_arrow_schema",
    "from_arrow_type",
    "from_arrow_field",
    "from_arrow_schema",
]

COMMENT_KEY = b"comment"
"""Field metadata key under which a column comment travels in Arrow."""

TIMESTAMP_TZ = "UTC"
"""Zone of Spark's TimestampType values in Arrow: instants, stored as UTC microseconds."""

_ARROW_INTERVAL_MONTHS_ID = 21  # Arrow Type::INTERVAL_MONTHS; pyarrow has no is_*() helper for it

@functools.cache
def _arrow_primitives() -> dict[type[PrimitiveType], pa.DataType]:
    return {
        BooleanType: pa.bool_(),
        TinyIntType: pa.int8(),
        SmallIntType: pa.int16(),
        IntType: pa.int32(),
        BigIntType: pa.int64(),
        FloatType: pa.float32(),
        DoubleType: pa.float64(),
        StringType: pa.string(),
        CharType: pa.string(),
        VarcharType: pa.string(),
        UuidType: pa.string(),
        BinaryType: pa.binary(),
        FixedType: pa.binary(),
        DateType: pa.date32(),
        TimestampType: pa.timestamp("us", tz=TIMESTAMP_TZ),
        TimestampNtzType: pa.timestamp("us"),
        TimeType: pa.time64("ns"),
        IntervalDayTimeType: pa.duration("us"),
        VoidType: pa.null(),
    }


class _ArrowRenderer(TypeVisitor["pa.DataType"]):
    def struct(self, struct: StructType, field_results: list[pa.DataType]) -> pa.DataType:
        return pa.struct([_arrow_field(f, t) for f, t in zip(struct.fields, field_results, strict=True)])

    def field(self, field: StructField, type_result: pa.DataType) -> pa.DataType:
        return type_result

    def array(self, array: ArrayType, element_result: pa.DataType) -> pa.DataType:
        nullable = _nullable(array.element, array.element_nullable)
        return pa.list_(pa.field("element", element_result, nullable=nullable))

    def map(self, map_type: MapType, key_result: pa.DataType, value_result: pa.DataType) -> pa.DataType:
        if isinstance(map_type.key, VoidType):
            raise UnsupportedTypeError("no Arrow type for a map with void keys: Arrow map keys are never null")
        return pa.map_(
            pa.field("key", key_result, nullable=False),
            pa.field("value", value_result, nullable=_nullable(map_type.value, map_type.value_nullable)),
        )

    def union(self, union: UnionType, alternative_results: list[pa.DataType]) -> pa.DataType:
        raise UnsupportedTypeError(f"no Arrow type for the union {type_name(union)}: Spark cannot read unions")

    def primitive(self, primitive: PrimitiveType) -> pa.DataType:
        known = _arrow_primitives().get(type(primitive))
        if known is not None:
            return known
        if isinstance(primitive, DecimalType):
            return pa.decimal128(primitive.precision, primitive.scale)
        raise UnsupportedTypeError(f"no Arrow type for {type_name(primitive)}")


def _nullable(data_type: DataType, nullable: bool) -> bool:
    """Arrow refuses a non-nullable field of null type; a void value is always null anyway."""
    return nullable or isinstance(data_type, VoidType)


def _arrow_field(field: StructField, arrow_type: pa.DataType) -> pa.Field:
    metadata = {COMMENT_KEY: field.comment.encode("utf-8")} if field.comment is not None else None
    return pa.field(field.name, arrow_type, nullable=_nullable(field.type, field.nullable), metadata=metadata)


def to_arrow_type(data_type: DataType) -> pa.DataType:
    """The Arrow type pyspark uses for the Spark counterpart of ``data_type``."""
    return visit(data_type, _ArrowRenderer())


def to_arrow_field(field: StructField) -> pa.Field:
    """One column as an Arrow field: nullability kept, the comment as ``b"comment"`` metadata."""
    return _arrow_field(field, to_arrow_type(field.type))


def to_arrow_schema(fields: Iterable[StructField]) -> pa.Schema:
    return pa.schema([to_arrow_field(f) for f in fields])


# -- Arrow -> tree -----------------------------------------------------------------------------------

# Checked in order; the first predicate that holds gives the type.
@functools.cache
def _from_arrow_primitives() -> tuple[tuple[Callable[[pa.DataType], bool], PrimitiveType], ...]:
    return (
        (pat.is_boolean, BooleanType()),
        (pat.is_int8, TinyIntType()),
        (pat.is_int16, SmallIntType()),
        (pat.is_int32, IntType()),
        (pat.is_int64, BigIntType()),
        (pat.is_float32, FloatType()),
        (pat.is_float64, DoubleType()),
        (pat.is_string, StringType()),
        (pat.is_large_string, StringType()),
        (pat.is_string_view, StringType()),
        (pat.is_binary, BinaryType()),
        (pat.is_large_binary, BinaryType()),
        (pat.is_binary_view, BinaryType()),
        (pat.is_date32, DateType()),
        (pat.is_time, TimeType()),
        (pat.is_duration, IntervalDayTimeType()),
        (pat.is_null, VoidType()),
    )


def from_arrow_type(arrow_type: pa.DataType) -> DataType:
    """Read an Arrow type into the tree; types Spark cannot read raise UnsupportedTypeError."""
    for predicate, primitive in _from_arrow_primitives():
        if predicate(arrow_type):
            return primitive
    if pat.is_timestamp(arrow_type):
        return TimestampNtzType() if arrow_type.tz is None else TimestampType()
    if pat.is_decimal(arrow_type):
        if arrow_type.precision > MAX_DECIMAL_PRECISION or arrow_type.scale < 0:
            raise UnsupportedTypeError(f"Spark cannot represent the Arrow type {arrow_type}")
        return DecimalType(arrow_type.precision, arrow_type.scale)
    if pat.is_fixed_size_binary(arrow_type):
        return FixedType(arrow_type.byte_width)
    if arrow_type.id == _ARROW_INTERVAL_MONTHS_ID:
        return IntervalYearMonthType()
    if pat.is_list(arrow_type) or pat.is_large_list(arrow_type) or pat.is_fixed_size_list(arrow_type):
        return ArrayType(from_arrow_type(arrow_type.value_type), arrow_type.value_field.nullable)
    if pat.is_map(arrow_type):
        return MapType(
            from_arrow_type(arrow_type.key_type), from_arrow_type(arrow_type.item_type), arrow_type.item_field.nullable
        )
    if pat.is_struct(arrow_type):
        return StructType(tuple(from_arrow_field(arrow_type.field(i)) for i in range(arrow_type.num_fields)))
    if pat.is_dictionary(arrow_type):
        return from_arrow_type(arrow_type.value_type)
    if isinstance(arrow_type, pa.UuidType):
        return UuidType()
    raise UnsupportedTypeError(f"Spark cannot represent the Arrow type {arrow_type}")


def from_arrow_field(field: pa.Field) -> StructField:
    comment = (field.metadata or {}).get(COMMENT_KEY)
    return StructField(
        field.name,
        from_arrow_type(field.type),
        nullable=field.nullable,
        comment=comment.decode("utf-8") if comment is not None else None,
    )


def from_arrow_schema(schema: pa.Schema) -> StructType:
    """A Hudi (or any Arrow) schema as the tree, comments read from ``b"comment"`` metadata."""
    return StructType(tuple(from_arrow_field(f) for f in schema))
