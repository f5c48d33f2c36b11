"""One canonical type tree for Hive, Iceberg and Hudi tables, rendered as Spark and Arrow types.

Sources are translated into the tree once (:mod:`.hive`, :mod:`.iceberg`, :mod:`.avro`,
:mod:`.arrow`); renderers are visitors over it (:mod:`.spark`, :mod:`.arrow`, :mod:`.hive`).
"""

from __future__ import annotations

from hms_catalog.types.arrow import (
    from_arrow_field,
    from_arrow_schema,
    from_arrow_type,
    to_arrow_field,
    to_arrow_schema,
    to_arrow_type,
)
from hms_catalog.types.avro import from_avro_schema
from hms_catalog.types.hive import parse_hive_type, to_hive_string, type_name
from hms_catalog.types.iceberg import from_iceberg_schema, from_iceberg_type
from hms_catalog.types.spark import from_spark_type, to_spark_schema, to_spark_simple_string, to_spark_type
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

__all__ = [
    # tree
    "DataType",
    "PrimitiveType",
    "BooleanType",
    "TinyIntType",
    "SmallIntType",
    "IntType",
    "BigIntType",
    "FloatType",
    "DoubleType",
    "DecimalType",
    "CharType",
    "VarcharType",
    "StringType",
    "BinaryType",
    "DateType",
    "TimestampType",
    "TimestampNtzType",
    "TimeType",
    "UuidType",
    "FixedType",
    "IntervalYearMonthType",
    "IntervalDayTimeType",
    "VoidType",
    "ArrayType",
    "MapType",
    "StructField",
    "StructType",
    "UnionType",
    "TypeVisitor",
    "visit",
    # hive
    "parse_hive_type",
    "to_hive_string",
    "type_name",
    # spark
    "to_spark_type",
    "to_spark_simple_string",
    "to_spark_schema",
    "from_spark_type",
    # arrow
    "to_arrow_type",
    "to_arrow_field",
    "to_arrow_schema",
    "from_arrow_type",
    "from_arrow_field",
    "from_arrow_schema",
    # iceberg, avro
    "from_iceberg_schema",
    "from_iceberg_type",
    "from_avro_schema",
]
