"""Which column type changes keep every file readable: the widenings Hive and Iceberg allow, and no others.

A metastore stores whatever type it is given (the embedded one accepts ``string -> int``), and a reader
then fails on every file written before. So a change is checked here against the old type: integers to
wider integers, to wider decimals, to doubles; ``float -> double``; a decimal to one that keeps its
digits on both sides of the point; ``char``/``varchar`` to ``string`` or a longer one; and, for text
tables only (whose serde reads any value as text), any primitive to ``string``. Iceberg allows fewer:
``int -> bigint``, ``float -> double``, and a decimal to a larger precision with the same scale.
"""

from __future__ import annotations

from hms_catalog.errors import ConfigurationError
from hms_catalog.types import DataType, parse_hive_type, to_hive_string
from hms_catalog.types.tree import (
    BigIntType,
    CharType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    PrimitiveType,
    SmallIntType,
    StringType,
    TinyIntType,
    VarcharType,
)

__all__ = ["check_widening", "is_widening"]

_INTEGERS: tuple[type[DataType], ...] = (TinyIntType, SmallIntType, IntType, BigIntType)
_INTEGER_DIGITS: dict[type[DataType], int] = {TinyIntType: 3, SmallIntType: 5, IntType: 10, BigIntType: 19}


def is_widening(old: DataType, new: DataType, *, iceberg: bool = False, text: bool = False) -> bool:
    if old == new:
        return True
    if iceberg:
        if isinstance(old, IntType) and isinstance(new, BigIntType):
            return True
        if isinstance(old, FloatType) and isinstance(new, DoubleType):
            return True
        return (isinstance(old, DecimalType) and isinstance(new, DecimalType) and new.scale == old.scale
                and new.precision >= old.precision)
    if isinstance(old, _INTEGERS):
        if isinstance(new, _INTEGERS):
            return _INTEGERS.index(type(new)) >= _INTEGERS.index(type(old))
        if isinstance(new, DoubleType):
            return True
        if isinstance(new, DecimalType):
            return new.precision - new.scale >= _INTEGER_DIGITS[type(old)]
    if isinstance(old, FloatType) and isinstance(new, DoubleType):
        return True
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
    if isinstance(old, (CharType, VarcharType)):
        if isinstance(new, StringType):
            return True
        if isinstance(new, type(old)):
            return new.length >= old.length
    return text and isinstance(old, PrimitiveType) and isinstance(new, StringType)


def check_widening(column: str, old_text: str, new_text: str, *, iceberg: bool = False, text: bool = False) -> str:
    """The new type in the metastore's spelling, or a ConfigurationError naming the column and both types."""
    old = parse_hive_type(old_text, column=column)
    new = parse_hive_type(new_text, column=column)
    if not is_widening(old, new, iceberg=iceberg, text=text):
        rules = ("Iceberg allows int to bigint, float to double and a decimal's precision to grow" if iceberg else
                 "Hive tables allow integers to wider integers, decimals or double, float to double, decimals that keep "
                 "their digits, char/varchar to string or longer" + (", and any type to string in text tables" if text else ""))
        raise ConfigurationError(f"cannot change column '{column}' from {to_hive_string(old)} to {to_hive_string(new)}: "
                                 f"files written as {to_hive_string(old)} would not read as {to_hive_string(new)} ({rules})")
    return to_hive_string(new)
