"""Column types as Spark's own DDL records them in a metastore, where that differs from the type model's plain
rendering: the metastore's column type carries no comments of nested fields (Spark keeps those in its schema
record only), and Spark's schema record holds ``char(n)``/``varchar(n)`` as ``string`` with the declared type
in the field's ``__CHAR_VARCHAR_TYPE_STRING`` metadata, so Spark reads the table back as it was declared.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hms_catalog.types import (
    ArrayType,
    CharType,
    DataType,
    MapType,
    StringType,
    StructField,
    StructType,
    UnionType,
    VarcharType,
    to_hive_string,
)

__all__ = ["CHAR_VARCHAR_KEY", "without_nested_comments", "strings_for_chars", "declared_char_type"]

CHAR_VARCHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"


def _mapped(data_type: DataType, leaf: Any, field: Any) -> DataType:
    """``data_type`` rebuilt bottom-up: primitives through ``leaf``, struct fields through ``field``."""
    if isinstance(data_type, StructType):
        return StructType(tuple(field(dataclasses.replace(f, type=_mapped(f.type, leaf, field))) for f in data_type.fields))
    if isinstance(data_type, ArrayType):
        return dataclasses.replace(data_type, element=_mapped(data_type.element, leaf, field))
    if isinstance(data_type, MapType):
        return dataclasses.replace(data_type, key=_mapped(data_type.key, leaf, field), value=_mapped(data_type.value, leaf, field))
    if isinstance(data_type, UnionType):
        return dataclasses.replace(data_type, alternatives=tuple(_mapped(a, leaf, field) for a in data_type.alternatives))
    return leaf(data_type)


def without_nested_comments(data_type: DataType) -> DataType:
    def uncommented(member: StructField) -> StructField:
        return dataclasses.replace(member, comment=None)

    return _mapped(data_type, lambda t: t, uncommented)


def strings_for_chars(data_type: DataType) -> DataType:
    return _mapped(data_type, lambda t: StringType() if isinstance(t, (CharType, VarcharType)) else t, lambda f: f)


def declared_char_type(data_type: DataType) -> str | None:
    """The type Spark records under :data:`CHAR_VARCHAR_KEY` for a column of ``data_type``, if it holds a char
    or varchar anywhere; else None."""
    if strings_for_chars(data_type) == data_type:
        return None
    return to_hive_string(without_nested_comments(data_type))
