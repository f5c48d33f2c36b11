"""Hypothesis strategies for random type trees, one per subset a renderer can round-trip."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

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
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

NUMERIC_AND_TEMPORAL = [
    BooleanType(),
    TinyIntType(),
    SmallIntType(),
    IntType(),
    BigIntType(),
    FloatType(),
    DoubleType(),
    StringType(),
    BinaryType(),
    DateType(),
    TimestampType(),
    IntervalDayTimeType(),
    VoidType(),
]
HIVE_ONLY_SIMPLE = [IntervalYearMonthType()]
NON_HIVE_SIMPLE = [TimestampNtzType(), TimeType()]

decimals = st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: DecimalType(p, s)))
chars = st.integers(1, 255).map(CharType)
varchars = st.integers(1, 65535).map(VarcharType)
fixeds = st.integers(0, 64).map(FixedType)
names = st.text(max_size=10)
comments = st.none() | st.text(max_size=20)


def trees(
    leaves: st.SearchStrategy[DataType],
    *,
    unions: bool = False,
    nullability: bool = False,
    with_comments: bool = True,
) -> st.SearchStrategy[DataType]:
    """Random trees over ``leaves``; nullability is all-true unless asked for, as in Hive strings."""
    flags = st.booleans() if nullability else st.just(True)
    field_comments = comments if with_comments else st.none()

    def extend(children: st.SearchStrategy[DataType]) -> st.SearchStrategy[DataType]:
        fields = st.builds(StructField, names, children, nullable=flags, comment=field_comments)
        options = [
            st.builds(ArrayType, children, flags),
            st.builds(MapType, children, children, flags),
            st.lists(fields, max_size=4).map(lambda fs: StructType(tuple(fs))),
        ]
        if unions:
            options.append(st.lists(children, min_size=1, max_size=3).map(lambda alts: UnionType(tuple(alts))))
        return st.one_of(options)

    return st.recursive(leaves, extend, max_leaves=12)


hive_leaves = st.one_of(st.sampled_from(NUMERIC_AND_TEMPORAL + HIVE_ONLY_SIMPLE), decimals, chars, varchars)
hive_types = trees(hive_leaves, unions=True)
"""Everything a Hive type string can say."""

spark_leaves = st.one_of(
    st.sampled_from(NUMERIC_AND_TEMPORAL + HIVE_ONLY_SIMPLE + NON_HIVE_SIMPLE), decimals, chars, varchars
)
spark_types = trees(spark_leaves, nullability=True)
"""Trees that survive a trip through pyspark types unchanged."""

spark_renderable = trees(st.one_of(spark_leaves, st.just(UuidType()), fixeds), nullability=True)
"""Trees Spark can represent, some of them (uuid, fixed) only by a wider type."""

arrow_leaves = st.one_of(st.sampled_from(NUMERIC_AND_TEMPORAL + NON_HIVE_SIMPLE), decimals)


def has_required_void(data_type: DataType) -> bool:
    """A NOT NULL void somewhere (a map key is one): Arrow cannot say that."""
    if isinstance(data_type, ArrayType):
        return (isinstance(data_type.element, VoidType) and not data_type.element_nullable) or has_required_void(
            data_type.element
        )
    if isinstance(data_type, MapType):
        return (
            isinstance(data_type.key, VoidType)
            or (isinstance(data_type.value, VoidType) and not data_type.value_nullable)
            or has_required_void(data_type.key)
            or has_required_void(data_type.value)
        )
    if isinstance(data_type, StructType):
        return any(
            (isinstance(f.type, VoidType) and not f.nullable) or has_required_void(f.type) for f in data_type.fields
        )
    return False


arrow_types = trees(arrow_leaves, nullability=True).filter(lambda t: not has_required_void(t))
"""Trees that survive a trip through Arrow types unchanged."""


def arrow_renderable(with_comments: bool) -> st.SearchStrategy[DataType]:
    """Trees with an Arrow type, some of them (char, varchar, uuid, fixed) only by a wider type."""
    leaves = st.one_of(arrow_leaves, chars, varchars, st.just(UuidType()), fixeds)
    return trees(leaves, nullability=True, with_comments=with_comments).filter(lambda t: not has_required_void(t))
