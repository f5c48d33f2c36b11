"""Partition names and values as the metastore spells them, and their typed Python values.

A partition name is ``k1=v1/k2=v2`` with Hive's path escaping (``%XX``); ``__HIVE_DEFAULT_PARTITION__``
stands for NULL. Values are compared in their column's type (a ``date`` partition compares as a date,
an ``int`` one as a number), as Spark and Hive do.
"""

from __future__ import annotations

import datetime
import re
from decimal import Decimal, InvalidOperation

from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name, parse_partition_name
from hms_catalog.types import (
    BigIntType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    SmallIntType,
    StringType,
    TimestampNtzType,
    TimestampType,
    TinyIntType,
    VarcharType,
)

__all__ = ["DEFAULT_PARTITION", "parse_partition_name", "make_partition_name", "typed_value", "is_string_type"]

_INTEGERS = (TinyIntType, SmallIntType, IntType, BigIntType)
_INTEGER_BITS = {TinyIntType: 8, SmallIntType: 16, IntType: 32, BigIntType: 64}
_INTEGER_TEXT = re.compile(r"[+-]?\d+")
_STRINGS = (StringType, CharType, VarcharType)


def is_string_type(kind: DataType | None) -> bool:
    return isinstance(kind, _STRINGS)


def typed_value(text: str | None, kind: DataType | None) -> object:
    """The value of a partition as its column's type; None for NULL or text the type cannot hold."""
    if text is None:
        return None
    try:
        if isinstance(kind, _INTEGERS):
            if not _INTEGER_TEXT.fullmatch(text.strip()):
                return None
            value = int(text)
            bits = _INTEGER_BITS[type(kind)]
            return value if -(1 << (bits - 1)) <= value < (1 << (bits - 1)) else None  # Hive: out of range is NULL
        if isinstance(kind, DecimalType):
            return Decimal(text)
        if isinstance(kind, (FloatType, DoubleType)):
            return float(text)
        if isinstance(kind, DateType):
            return datetime.date.fromisoformat(text)
        if isinstance(kind, (TimestampType, TimestampNtzType)):
            return datetime.datetime.fromisoformat(text)
        if isinstance(kind, BooleanType):
            lowered = text.strip().lower()
            return True if lowered == "true" else False if lowered == "false" else None
    except (ValueError, InvalidOperation):
        return None
    return text
