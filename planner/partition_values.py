"""Partition names and values as the metastore spells them, and their typed Python values.

A partition name is ``k1=v1/k2=v2`` with Hive's path escaping (``%XX``); ``__HIVE_DEFAULT_PARTITION__``
stands for NULL. Values are compared in their column's type (a ``date`` partition compares as a date,
an ``int`` one as a number), as Spark and Hive do.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from urllib.parse import unquote

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

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_UNESCAPED = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~ +,;@!$&()*'[]")
_ESCAPED_CHARS = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(0x20)}


def _escape(value: str) -> str:
    """Hive's FileUtils.escapePathName: the characters that break paths become %XX."""
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED_CHARS else ch for ch in value)


def parse_partition_name(name: str) -> tuple[tuple[str, str | None], ...]:
    """``'dt=2024-01-01/city=S%2FF'`` -> ``(('dt', '2024-01-01'), ('city', 'S/F'))``; NULL for the default."""
    pairs = []
    for part in name.split("/"):
        key, _, raw = part.partition("=")
        value = unquote(raw)
        pairs.append((unquote(key), None if value == DEFAULT_PARTITION else value))
    return tuple(pairs)


def make_partition_name(keys: Sequence[str], values: Sequence[str | None]) -> str:
    """The partition name of ``values`` for ``keys`` (the inverse of :func:`parse_partition_name`)."""
    return "/".join(f"{_escape(k)}={DEFAULT_PARTITION if v is None else _escape(v)}" for k, v in zip(keys, values))


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
