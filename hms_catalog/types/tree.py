"""The canonical type tree every table format is translated into.

Hive type strings, Iceberg schemas, Hudi Avro schemas and Arrow schemas all become these few frozen,
hashable values, so the renderers (Spark, Arrow, Hive strings) are written once against one tree
instead of once per source format. Nodes validate only what no source can legitimately produce
(a decimal of precision 0, a negative length); limits peculiar to one source (Hive's ``char(255)``)
are checked by that source's parser, where the error can point at the offending text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from hms_catalog.errors import SchemaError

T = TypeVar("T")

MAX_DECIMAL_PRECISION = 38
"""Spark, Hive and Iceberg all stop at 38 digits (a 128-bit unscaled value)."""


@dataclass(frozen=True)
class DataType:
    """Root of the tree; instances compare and hash by value."""


@dataclass(frozen=True)
class PrimitiveType(DataType):
    """A type without children; renderers map these through lookup tables."""


@dataclass(frozen=True)
class BooleanType(PrimitiveType):
    pass


@dataclass(frozen=True)
class TinyIntType(PrimitiveType):
    pass


@dataclass(frozen=True)
class SmallIntType(PrimitiveType):
    pass


@dataclass(frozen=True)
class IntType(PrimitiveType):
    pass


@dataclass(frozen=True)
class BigIntType(PrimitiveType):
    pass


@dataclass(frozen=True)
class FloatType(PrimitiveType):
    pass


@dataclass(frozen=True)
class DoubleType(PrimitiveType):
    pass


@dataclass(frozen=True)
class DecimalType(PrimitiveType):
    """Fixed-point number; precision 1..38 and scale 0..precision, as Spark requires."""

    precision: int
    scale: int

    def __post_init__(self) -> None:
        if not 1 <= self.precision <= MAX_DECIMAL_PRECISION:
            raise SchemaError(
                f"decimal precision must be between 1 and {MAX_DECIMAL_PRECISION} but was {self.precision}"
            )
        if not 0 <= self.scale <= self.precision:
            raise SchemaError(
                f"decimal scale must be between 0 and the precision ({self.precision}) but was {self.scale}"
            )


@dataclass(frozen=True)
class CharType(PrimitiveType):
    """Hive ``char(n)``: kept apart from string because Spark shows and pads it as such."""

    length: int

    def __post_init__(self) -> None:
        if self.length < 1:
            raise SchemaError(f"char length must be positive but was {self.length}")


@dataclass(frozen=True)
class VarcharType(PrimitiveType):
    """Hive ``varchar(n)``: kept apart from string because Spark shows and checks its length."""

    length: int

    def __post_init__(self) -> None:
        if self.length < 1:
            raise SchemaError(f"varchar length must be positive but was {self.length}")


@dataclass(frozen=True)
class StringType(PrimitiveType):
    pass


@dataclass(frozen=True)
class BinaryType(PrimitiveType):
    pass


@dataclass(frozen=True)
class DateType(PrimitiveType):
    pass


@dataclass(frozen=True)
class TimestampType(PrimitiveType):
    """An instant (Hive ``timestamp``, Iceberg ``timestamptz``): Spark's local-time-zone timestamp."""


@dataclass(frozen=True)
class TimestampNtzType(PrimitiveType):
    """A wall-clock time without zone (Iceberg ``timestamp``): Spark's ``timestamp_ntz``."""


@dataclass(frozen=True)
class TimeType(PrimitiveType):
    """Time of day in microseconds (Iceberg ``time``)."""


@dataclass(frozen=True)
class UuidType(PrimitiveType):
    """Iceberg ``uuid``; kept distinct so the source is visible, rendered as a string."""


@dataclass(frozen=True)
class FixedType(PrimitiveType):
    """Iceberg ``fixed[n]`` and Avro ``fixed``; kept distinct so the size survives, rendered as binary."""

    length: int

    def __post_init__(self) -> None:
        if self.length < 0:
            raise SchemaError(f"fixed length must not be negative but was {self.length}")


@dataclass(frozen=True)
class IntervalYearMonthType(PrimitiveType):
    pass


@dataclass(frozen=True)
class IntervalDayTimeType(PrimitiveType):
    pass


@dataclass(frozen=True)
class VoidType(PrimitiveType):
    """The type of a column that can only hold NULL (Hive ``void``, Iceberg ``unknown``)."""


@dataclass(frozen=True)
class ArrayType(DataType):
    element: DataType
    element_nullable: bool = True


@dataclass(frozen=True)
class MapType(DataType):
    """Keys are never null in any of the formats, so only the value carries nullability."""

    key: DataType
    value: DataType
    value_nullable: bool = True


@dataclass(frozen=True)
class StructField:
    """A named member of a struct (or a table column).

    ``field_id`` is Iceberg's column id; other sources leave it ``None``. ``comment`` is the Hive
    field comment, Iceberg ``doc`` or Avro ``doc``.
    """

    name: str
    type: DataType
    nullable: bool = True
    comment: str | None = None
    field_id: int | None = None


@dataclass(frozen=True)
class StructType(DataType):
    fields: tuple[StructField, ...] = ()

    def __post_init__(self) -> None:
        # Accept any iterable so callers can pass lists; store a tuple so the node stays hashable.
        if not isinstance(self.fields, tuple):
            object.__setattr__(self, "fields", tuple(self.fields))

    def __iter__(self) -> Iterator[StructField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def field(self, name: str) -> StructField:
        """Look a field up the way Hive and Spark resolve names: case-insensitively.

        An exact-case match wins when the struct holds names differing only in case; otherwise such
        a name is ambiguous and is refused rather than silently picking one.
        """
        exact = [f for f in self.fields if f.name == name]
        if len(exact) == 1:
            return exact[0]
        folded = name.casefold()
        matches = [f for f in self.fields if f.name.casefold() == folded]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise SchemaError(f"no field named '{name}' (fields: {', '.join(self.names)})", column=name)
        raise SchemaError(f"field name '{name}' is ambiguous: {len(matches)} fields match", column=name)


@dataclass(frozen=True)
class UnionType(DataType):
    """Hive ``uniontype<...>``: one value of one of the alternatives, tagged by position."""

    alternatives: tuple[DataType, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.alternatives, tuple):
            object.__setattr__(self, "alternatives", tuple(self.alternatives))
        if not self.alternatives:
            raise SchemaError("a union needs at least one alternative")


class TypeVisitor(ABC, Generic[T]):
    """A post-order visitor: each method receives the node and its children's results.

    Renderers subclass this so that the walk over the tree is written once, here, and each renderer
    only says what one node becomes.
    """

    @abstractmethod
    def struct(self, struct: StructType, field_results: list[T]) -> T: ...

    @abstractmethod
    def field(self, field: StructField, type_result: T) -> T: ...

    @abstractmethod
    def array(self, array: ArrayType, element_result: T) -> T: ...

    @abstractmethod
    def map(self, map_type: MapType, key_result: T, value_result: T) -> T: ...

    @abstractmethod
    def union(self, union: UnionType, alternative_results: list[T]) -> T: ...

    @abstractmethod
    def primitive(self, primitive: PrimitiveType) -> T: ...


def visit(data_type: DataType, visitor: TypeVisitor[T]) -> T:
    """Walk ``data_type`` depth-first, children before parents, and return the visitor's result."""
    if isinstance(data_type, StructType):
        results = [visitor.field(f, visit(f.type, visitor)) for f in data_type.fields]
        return visitor.struct(data_type, results)
    if isinstance(data_type, ArrayType):
        return visitor.array(data_type, visit(data_type.element, visitor))
    if isinstance(data_type, MapType):
        return visitor.map(data_type, visit(data_type.key, visitor), visit(data_type.value, visitor))
    if isinstance(data_type, UnionType):
        return visitor.union(data_type, [visit(a, visitor) for a in data_type.alternatives])
    if isinstance(data_type, PrimitiveType):
        return visitor.primitive(data_type)
    raise TypeError(f"not a hms_catalog type: {data_type!r}")
