"""Iceberg schemas (as pyiceberg loads them) into the type tree.

The only module of the package that imports pyiceberg. The mapping is Iceberg's own Spark one
(``TypeToSparkType``): ``timestamp`` is zone-less (``TimestampNtzType``), ``timestamptz`` an instant
(``TimestampType``), ``unknown`` is void, ``uuid`` and ``fixed[n]`` keep their own nodes (rendered as
string and binary). Beyond it:

* ``time`` becomes ``TimeType`` (Iceberg's Spark runtime refuses it; Spark 4.1+ has a TIME type);
* ``timestamp_ns`` / ``timestamptz_ns`` (format v3) become the microsecond timestamp types: Spark has
  no nanosecond timestamp, and readers truncate the values to microseconds;
* ``geometry``, ``geography`` and ``variant`` raise UnsupportedTypeError.

Field ids, ``required`` (as ``nullable=False``) and ``doc`` (as the comment) are kept for struct
fields; list element and map key/value ids have no place in the tree and are dropped.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from hms_catalog._lazy import LazyModule
from hms_catalog.errors import UnsupportedTypeError
from hms_catalog.types.tree import (
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
    PrimitiveType,
    StringType,
    StructField,
    StructType,
    TimestampNtzType,
    TimestampType,
    TimeType,
    UuidType,
    VoidType,
)

if TYPE_CHECKING:
    from pyiceberg import types as it
    from pyiceberg.schema import Schema
else:
    it = LazyModule("pyiceberg.types")  # pyiceberg only once an Iceberg schema is read

__all__ = ["from_iceberg_schema", "from_iceberg_type"]

@functools.cache
def _primitives() -> dict[type[it.IcebergType], PrimitiveType]:
    return {
        it.BooleanType: BooleanType(),
        it.IntegerType: IntType(),
        it.LongType: BigIntType(),
        it.FloatType: FloatType(),
        it.DoubleType: DoubleType(),
        it.DateType: DateType(),
        it.TimeType: TimeType(),
        it.TimestampType: TimestampNtzType(),
        it.TimestamptzType: TimestampType(),
        it.TimestampNanoType: TimestampNtzType(),
        it.TimestamptzNanoType: TimestampType(),
        it.StringType: StringType(),
        it.UUIDType: UuidType(),
        it.BinaryType: BinaryType(),
        it.UnknownType: VoidType(),
    }


def from_iceberg_schema(schema: Schema) -> StructType:
    """A table's Iceberg schema as the tree, one field per column."""
    return StructType(tuple(_field(f) for f in schema.fields))


def from_iceberg_type(iceberg_type: it.IcebergType) -> DataType:
    known = _primitives().get(type(iceberg_type))
    if known is not None:
        return known
    if isinstance(iceberg_type, it.DecimalType):
        return DecimalType(iceberg_type.precision, iceberg_type.scale)
    if isinstance(iceberg_type, it.FixedType):
        return FixedType(len(iceberg_type))
    if isinstance(iceberg_type, it.StructType):
        return StructType(tuple(_field(f) for f in iceberg_type.fields))
    if isinstance(iceberg_type, it.ListType):
        return ArrayType(from_iceberg_type(iceberg_type.element_type), not iceberg_type.element_required)
    if isinstance(iceberg_type, it.MapType):
        return MapType(
            from_iceberg_type(iceberg_type.key_type),
            from_iceberg_type(iceberg_type.value_type),
            not iceberg_type.value_required,
        )
    raise UnsupportedTypeError(f"the Iceberg type {iceberg_type} has no Spark counterpart")


def _field(field: it.NestedField) -> StructField:
    try:
        field_type = from_iceberg_type(field.field_type)
    except UnsupportedTypeError as e:
        # Name the column by its full path so a nested unsupported type can be found.
        path = f"{field.name}.{e.column}" if e.column else field.name
        raise UnsupportedTypeError(e.reason, column=path) from e
    return StructField(
        field.name,
        field_type,
        nullable=not field.required,
        comment=field.doc,
        field_id=field.field_id,
    )
