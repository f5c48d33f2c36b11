from __future__ import annotations

import json
from typing import Any

import pytest

from hms_catalog.errors import SchemaError, UnsupportedTypeError
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
    IntervalDayTimeType,
    IntervalYearMonthType,
    IntType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNtzType,
    TimestampType,
    VoidType,
    from_avro_schema,
    to_spark_schema,
)

STR = StringType()
HOODIE_META = [
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
]


def record(*fields: dict[str, Any], name: str = "r", **extra: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def one(avro_type: Any, **extra: Any) -> StructField:
    """The single field a one-field record translates to."""
    return from_avro_schema(record({"name": "f", "type": avro_type, **extra})).fields[0]


HUDI_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "trips_record",
        "namespace": "hoodie.trips",
        "fields": [
            *({"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in HOODIE_META),
            {"name": "uuid", "type": "string"},
            {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
            {"name": "rider", "type": ["null", "string"], "default": None, "doc": "who rode"},
            {
                "name": "fare",
                "type": [
                    "null",
                    {
                        "type": "fixed",
                        "name": "fixed",
                        "namespace": "hoodie.trips.fare",
                        "size": 5,
                        "logicalType": "decimal",
                        "precision": 10,
                        "scale": 2,
                    },
                ],
            },
            {
                "name": "begin",
                "type": [
                    "null",
                    {
                        "type": "record",
                        "name": "begin",
                        "namespace": "hoodie.trips.trips_record",
                        "fields": [
                            {"name": "lat", "type": "double"},
                            {"name": "lon", "type": ["null", "double"]},
                        ],
                    },
                ],
                "default": None,
            },
            {"name": "city", "type": {"type": "enum", "name": "City", "symbols": ["SF", "NYC"]}},
            {"name": "stops", "type": {"type": "array", "items": ["null", "hoodie.trips.trips_record.begin"]}},
            {"name": "extras", "type": ["null", {"type": "map", "values": "long"}]},
            {"name": "day", "type": {"type": "int", "logicalType": "date"}},
            {"name": "_hoodie_is_deleted", "type": "boolean", "default": False},
        ],
    }
)


def test_hudi_commit_schema() -> None:
    begin = StructType((StructField("lat", DoubleType(), nullable=False), StructField("lon", DoubleType())))
    expected = StructType(
        (
            *(StructField(n, STR, comment="") for n in HOODIE_META),
            StructField("uuid", STR, nullable=False),
            StructField("ts", TimestampType(), nullable=False),
            StructField("rider", STR, comment="who rode"),
            StructField("fare", DecimalType(10, 2)),
            StructField("begin", begin),
            StructField("city", STR, nullable=False),
            StructField("stops", ArrayType(begin, True), nullable=False),
            StructField("extras", MapType(STR, BigIntType(), False)),
            StructField("day", DateType(), nullable=False),
            StructField("_hoodie_is_deleted", BooleanType(), nullable=False),
        )
    )
    assert from_avro_schema(HUDI_SCHEMA) == expected
    assert from_avro_schema(json.loads(HUDI_SCHEMA)) == expected
    assert (
        to_spark_schema(expected)
        .simpleString()
        .startswith("struct<_hoodie_commit_time:string,_hoodie_commit_seqno:string,_hoodie_record_key:string,")
    )


CASES: list[tuple[Any, DataType, bool]] = [
    ("null", VoidType(), True),
    ("boolean", BooleanType(), False),
    ("int", IntType(), False),
    ("long", BigIntType(), False),
    ("float", FloatType(), False),
    ("double", DoubleType(), False),
    ("bytes", BinaryType(), False),
    ("string", STR, False),
    ({"type": "string"}, STR, False),
    (["null", "int"], IntType(), True),
    (["int", "null"], IntType(), True),
    (["null"], VoidType(), True),
    (["string"], STR, False),
    ({"type": "int", "logicalType": "date"}, DateType(), False),
    ({"type": "long", "logicalType": "timestamp-millis"}, TimestampType(), False),
    ({"type": "long", "logicalType": "timestamp-micros"}, TimestampType(), False),
    ({"type": "long", "logicalType": "local-timestamp-millis"}, TimestampNtzType(), False),
    ({"type": "long", "logicalType": "local-timestamp-micros"}, TimestampNtzType(), False),
    # Spark reads these logical types as their base type
    ({"type": "int", "logicalType": "time-millis"}, IntType(), False),
    ({"type": "long", "logicalType": "time-micros"}, BigIntType(), False),
    ({"type": "string", "logicalType": "uuid"}, STR, False),
    ({"type": "long", "logicalType": "timestamp-nanos"}, BigIntType(), False),
    # a logical type on the wrong base type is ignored
    ({"type": "long", "logicalType": "date"}, BigIntType(), False),
    ({"type": "int", "logicalType": "timestamp-millis"}, IntType(), False),
    ({"type": "string", "logicalType": "decimal", "precision": 4}, STR, False),
    # decimals
    ({"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}, DecimalType(10, 2), False),
    ({"type": "bytes", "logicalType": "decimal", "precision": 38}, DecimalType(38, 0), False),
    (
        {"type": "fixed", "name": "d", "size": 16, "logicalType": "decimal", "precision": 38, "scale": 9},
        DecimalType(38, 9),
        False,
    ),
    ({"type": "fixed", "name": "d", "size": 1, "logicalType": "decimal", "precision": 2}, DecimalType(2, 0), False),
    # invalid decimals are ignored, as the Avro library does
    ({"type": "fixed", "name": "d", "size": 1, "logicalType": "decimal", "precision": 3}, FixedType(1), False),
    ({"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 6}, BinaryType(), False),
    ({"type": "bytes", "logicalType": "decimal", "precision": 0}, BinaryType(), False),
    ({"type": "bytes", "logicalType": "decimal"}, BinaryType(), False),
    ({"type": "bytes", "logicalType": "decimal", "precision": "10"}, BinaryType(), False),
    ({"type": "fixed", "name": "md5", "size": 16}, FixedType(16), False),
    ({"type": "enum", "name": "e", "symbols": ["A", "B"]}, STR, False),
    ({"type": "array", "items": "int"}, ArrayType(IntType(), False), False),
    ({"type": "array", "items": ["null", "int"]}, ArrayType(IntType(), True), False),
    ({"type": "map", "values": "string"}, MapType(STR, STR, False), False),
    (["null", {"type": "map", "values": ["null", "double"]}], MapType(STR, DoubleType(), True), True),
    # unions of several branches, as Spark reads them
    (["int", "long"], BigIntType(), False),
    (["null", "long", "int"], BigIntType(), True),
    (["float", "double"], DoubleType(), False),
    (
        ["int", "string"],
        StructType((StructField("member0", IntType()), StructField("member1", STR))),
        False,
    ),
    (
        ["null", "string", {"type": "array", "items": "int"}],
        StructType((StructField("member0", STR), StructField("member1", ArrayType(IntType(), False)))),
        True,
    ),
    ({"type": "int", "spark.sql.catalyst.type": "interval year to month"}, IntervalYearMonthType(), False),
    ({"type": "long", "spark.sql.catalyst.type": "interval day to second"}, IntervalDayTimeType(), False),
    (
        record({"name": "x", "type": "int", "doc": "inner doc"}, name="nested"),
        StructType((StructField("x", IntType(), False, "inner doc"),)),
        False,
    ),
]


@pytest.mark.parametrize("avro_type, expected, nullable", CASES, ids=[json.dumps(c[0])[:50] for c in CASES])
def test_field_type(avro_type: Any, expected: DataType, nullable: bool) -> None:
    field = one(avro_type)
    assert field.type == expected
    assert field.nullable is nullable


def test_named_types_are_reused_and_resolved_in_their_namespace() -> None:
    point = {"type": "record", "name": "Point", "fields": [{"name": "x", "type": "int"}]}
    schema = record(
        {"name": "a", "type": point},
        {"name": "b", "type": "Point"},
        {"name": "c", "type": "ns.Point"},
        {"name": "d", "type": {"type": "fixed", "name": "H", "namespace": "other", "size": 4}},
        {"name": "e", "type": ["null", "other.H"]},
        name="Top",
        namespace="ns",
    )
    p = StructType((StructField("x", IntType(), False),))
    assert from_avro_schema(schema) == StructType(
        (
            StructField("a", p, False),
            StructField("b", p, False),
            StructField("c", p, False),
            StructField("d", FixedType(4), False),
            StructField("e", FixedType(4), True),
        )
    )


MALFORMED: list[tuple[Any, str, str | None]] = [
    ('{"type": "record", "name": "r", "fields": [', "not valid JSON", None),
    ('"string"', "must be a record", None),
    ({"type": "array", "items": "int"}, "must be a record", None),
    ({"type": "record", "name": "r"}, "needs a list of 'fields'", None),
    ({"type": "record", "fields": []}, "Avro record has no 'name'", None),
    (record({"name": "a", "type": "strng"}), "unknown Avro type 'strng'", "a"),
    (record({"type": "int"}), "field without a 'name'", None),
    (record({"name": "a"}), "Avro field 'a' has no 'type'", "a"),
    (record({"name": "a", "type": "int"}, {"name": "a", "type": "long"}), "duplicate field 'a'", "a"),
    (record({"name": "a", "type": {"type": "array"}}), "Avro array has no 'items'", "a"),
    (record({"name": "a", "type": {"type": "map"}}), "Avro map has no 'values'", "a"),
    (record({"name": "a", "type": {"type": "enum", "name": "E"}}), "list of string 'symbols'", "a"),
    (record({"name": "a", "type": {"type": "fixed", "name": "F"}}), "non-negative integer 'size'", "a"),
    (record({"name": "a", "type": {"type": "fixed", "name": "F", "size": -1}}), "non-negative integer 'size'", "a"),
    (record({"name": "a", "type": ["null", ["int"]]}), "may not directly contain another union", "a"),
    (record({"name": "a", "type": ["int", "int"]}), "contains 'int' twice", "a"),
    (record({"name": "a", "type": []}), "at least one branch", "a"),
    (record({"name": "a", "type": {"logicalType": "date"}}), "needs a string 'type'", "a"),
    (record({"name": "a", "type": 5}), "expected an Avro schema but found 5", "a"),
    (
        record({"name": "s", "type": record({"name": "deep", "type": {"type": "map", "values": "nope"}}, name="n")}),
        "unknown Avro type 'nope'",
        "s.deep",
    ),
    (
        record(
            {"name": "a", "type": {"type": "fixed", "name": "F", "size": 2}},
            {"name": "b", "type": {"type": "fixed", "name": "F", "size": 2}},
        ),
        "'F' is defined twice",
        "b",
    ),
]


@pytest.mark.parametrize("schema, fragment, column", MALFORMED, ids=[json.dumps(m[0])[:50] for m in MALFORMED])
def test_malformed(schema: Any, fragment: str, column: str | None) -> None:
    with pytest.raises(SchemaError) as info:
        from_avro_schema(schema)
    assert fragment in str(info.value)
    assert info.value.column == column
    assert not isinstance(info.value, UnsupportedTypeError)


def test_invalid_json_reports_the_offset() -> None:
    with pytest.raises(SchemaError) as info:
        from_avro_schema('{"type": "record", oops}')
    assert info.value.position == 19
    assert isinstance(info.value.__cause__, json.JSONDecodeError)


def test_recursive_records_are_refused_as_spark_does() -> None:
    schema = record(
        {"name": "value", "type": "int"},
        {"name": "next", "type": ["null", "Node"]},
        name="Node",
    )
    with pytest.raises(UnsupportedTypeError, match="recursive reference to record 'Node'") as info:
        from_avro_schema(schema)
    assert info.value.column == "next"


@pytest.mark.parametrize(
    "avro_type, fragment",
    [
        ({"type": "bytes", "logicalType": "decimal", "precision": 39}, "decimal(39,0) exceeds Spark's maximum"),
        ({"type": "int", "spark.sql.catalyst.type": "interval year"}, "unsupported spark.sql.catalyst.type"),
    ],
)
def test_types_spark_cannot_read(avro_type: Any, fragment: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        from_avro_schema(record({"name": "f", "type": avro_type}))
    assert fragment in str(info.value)
    assert info.value.column == "f"
