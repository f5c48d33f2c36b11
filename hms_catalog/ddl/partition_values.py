"""Partition values a DDL gives, checked against their keys' types and spelled as Hive and Spark spell them.

The metastore takes any text as a partition value; an ``int`` key holding ``'abc'`` then reads as NULL
in every engine. So a value must parse as its key's type, and is stored in the form Spark writes (``05``
becomes ``5`` for an integer key, as Spark casts the literal to the column's type), so that one partition
has one name whoever added it. An empty value (``p = ''``) is refused, as Spark refuses it: its folder ``p=``
would read back as no value (``NULL`` is written ``p = null``, Hive's default partition).
"""

from __future__ import annotations

import datetime

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.specs import PartitionValues
from hms_catalog.errors import ConfigurationError
from hms_catalog.formats.partition_names import make_partition_name
from hms_catalog.formats.partition_values import is_string_type, typed_value
from hms_catalog.types import CharType, DataType, VarcharType, parse_hive_type

__all__ = ["normalized_values", "partition_name", "spelled"]


def spelled(key: str, type_text: str, value: str | None, table: str) -> str | None:
    """``value`` as its key's type spells it, or a ConfigurationError naming the value, the key and its type."""
    if value is None:
        return None
    if value == "":
        raise ConfigurationError(f"partition value of key '{key}' of {table} is empty (''); for no value write {key} = null")
    kind: DataType = parse_hive_type(type_text, column=key)
    if is_string_type(kind):
        limit = getattr(kind, "length", None) if isinstance(kind, (CharType, VarcharType)) else None
        if limit is not None and len(value) > limit:
            raise ConfigurationError(f"partition value '{value}' is longer than {type_text} allows for key '{key}' of {table}")
        return value
    typed = typed_value(value, kind)
    if typed is None:
        raise ConfigurationError(f"partition value '{value}' is not a {type_text}: key '{key}' of {table} is {type_text}")
    if isinstance(typed, bool):
        return "true" if typed else "false"
    if isinstance(typed, datetime.datetime):
        return typed.isoformat(sep=" ")
    if isinstance(typed, datetime.date):
        return typed.isoformat()
    return str(typed)


def normalized_values(table: ttypes.Table, partition: PartitionValues, *, partial: bool = False) -> dict[str, str | None]:
    """The given values by key (lower-case), each checked and spelled; with ``partial`` some keys may be missing."""
    keys = {k.name.lower(): k.type for k in table.partitionKeys or []}
    name = f"{table.dbName}.{table.tableName}"
    if not keys:
        raise ConfigurationError(f"table '{name}' is not partitioned")
    values: dict[str, str | None] = {}
    for key, value in partition.values:
        lowered = key.lower()
        if lowered not in keys:
            raise ConfigurationError(f"'{key}' is not a partition column of {name} (its partition columns: {', '.join(keys)})")
        if lowered in values:
            raise ConfigurationError(f"partition column '{key}' is given twice")
        values[lowered] = spelled(lowered, keys[lowered], value, name)
    missing = [key for key in keys if key not in values]
    if missing and not partial:
        raise ConfigurationError(f"a partition of {name} needs a value for '{missing[0]}' (its partition columns: {', '.join(keys)})")
    return values


def partition_name(table: ttypes.Table, partition: PartitionValues) -> str:
    """The ``k=v/k2=v2`` name of a fully given partition, values checked and spelled."""
    values = normalized_values(table, partition)
    keys = [k.name.lower() for k in table.partitionKeys or []]
    return make_partition_name(keys, [values[k] for k in keys])
