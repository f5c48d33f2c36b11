from __future__ import annotations

import pytest

from hms_catalog.errors import SchemaError
from hms_catalog.types import (
    ArrayType,
    CharType,
    DataType,
    DecimalType,
    FixedType,
    IntType,
    MapType,
    PrimitiveType,
    StringType,
    StructField,
    StructType,
    TypeVisitor,
    UnionType,
    VarcharType,
    visit,
)


def test_nodes_are_hashable_values() -> None:
    a = StructType((StructField("x", ArrayType(IntType())), StructField("y", MapType(StringType(), IntType()))))
    b = StructType((StructField("x", ArrayType(IntType())), StructField("y", MapType(StringType(), IntType()))))
    assert a == b and hash(a) == hash(b)
    assert len({a, b, IntType(), IntType()}) == 2
    an_int: DataType = IntType()
    assert an_int != StringType()
    assert DecimalType(10, 2) != DecimalType(10, 3)


def test_struct_accepts_a_list_and_stores_a_tuple() -> None:
    s = StructType([StructField("a", IntType())])  # type: ignore[arg-type]
    assert isinstance(s.fields, tuple) and hash(s)
    assert list(s) == [StructField("a", IntType())] and len(s) == 1 and s.names == ("a",)


def test_field_lookup_is_case_insensitive() -> None:
    s = StructType((StructField("Name", StringType()), StructField("id", IntType())))
    assert s.field("name").name == "Name"
    assert s.field("ID").name == "id"


def test_exact_case_wins_and_ambiguity_is_refused() -> None:
    s = StructType((StructField("ab", IntType()), StructField("AB", StringType())))
    assert s.field("AB").type == StringType()
    assert s.field("ab").type == IntType()
    with pytest.raises(SchemaError, match="ambiguous"):
        s.field("Ab")


def test_missing_field_names_the_field() -> None:
    with pytest.raises(SchemaError) as info:
        StructType((StructField("a", IntType()),)).field("b")
    assert info.value.column == "b"
    assert "no field named 'b'" in str(info.value)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: DecimalType(0, 0), "precision must be between 1 and 38 but was 0"),
        (lambda: DecimalType(39, 0), "precision must be between 1 and 38 but was 39"),
        (lambda: DecimalType(10, 11), "scale must be between 0 and the precision (10) but was 11"),
        (lambda: DecimalType(10, -1), "but was -1"),
        (lambda: CharType(0), "char length must be positive"),
        (lambda: VarcharType(-1), "varchar length must be positive"),
        (lambda: FixedType(-1), "fixed length must not be negative"),
        (lambda: UnionType(()), "at least one alternative"),
    ],
)
def test_invalid_nodes_are_refused(build: object, message: str) -> None:
    with pytest.raises(SchemaError) as info:
        build()  # type: ignore[operator]
    assert message in str(info.value)


class _Depth(TypeVisitor[int]):
    def struct(self, struct: StructType, field_results: list[int]) -> int:
        return 1 + max(field_results, default=0)

    def field(self, field: StructField, type_result: int) -> int:
        return type_result

    def array(self, array: ArrayType, element_result: int) -> int:
        return 1 + element_result

    def map(self, map_type: MapType, key_result: int, value_result: int) -> int:
        return 1 + max(key_result, value_result)

    def union(self, union: UnionType, alternative_results: list[int]) -> int:
        return 1 + max(alternative_results)

    def primitive(self, primitive: PrimitiveType) -> int:
        return 0


@pytest.mark.parametrize(
    "data_type, depth",
    [
        (IntType(), 0),
        (ArrayType(IntType()), 1),
        (MapType(StringType(), ArrayType(IntType())), 2),
        (StructType(()), 1),
        (StructType((StructField("a", UnionType((IntType(), ArrayType(ArrayType(IntType()))))),)), 4),
    ],
)
def test_visit_walks_children_first(data_type: DataType, depth: int) -> None:
    assert visit(data_type, _Depth()) == depth


def test_visit_rejects_foreign_objects() -> None:
    with pytest.raises(TypeError):
        visit("int", _Depth())  # type: ignore[arg-type]
