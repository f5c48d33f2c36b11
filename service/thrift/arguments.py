"""Database names inside thrift arguments and answers, found and rewritten generically.

The forwarder does not know the metastore's ~280 calls one by one. It reads each call's argument names
from the generated ``<method>_args.thrift_spec`` and walks the values: a string argument or struct field
whose name says it holds a database (``dbname``, ``db_name``, ``dbName``, ``databaseName``; a
``Database``'s ``name``; ``name`` in a ``*_database`` call) is a database name, a ``catName`` field a
metastore catalog. That is enough to route any call that names an object (tables, partitions, locks,
statistics, constraints, ...) and to move its names between the client's federated names and the owning
metastore's own, both ways.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from hive_metastore import ThriftHiveMetastore

__all__ = ["argument_names", "databases_in", "rename_arguments", "rename_databases"]

_DATABASE_FIELDS = frozenset({"dbname", "db_name", "databasename", "db", "table_db", "pktable_db", "fktable_db",
                              "parent_db_name", "foreign_db_name"})
_CATALOG_FIELDS = frozenset({"catname", "cat_name"})

Rename = Callable[[str], str]


@functools.cache
def argument_names(method: str) -> tuple[str, ...]:
    """The generated call's argument names, in the order the processor passes them."""
    spec = getattr(ThriftHiveMetastore, f"{method}_args").thrift_spec
    return tuple(field[2] for field in spec if field is not None)


def _is_database_argument(method: str, name: str) -> bool:
    lowered = name.lower()
    return lowered in _DATABASE_FIELDS or (lowered == "name" and "database" in method.lower())


def _is_struct(value: Any) -> bool:
    return hasattr(value, "thrift_spec") and not isinstance(value, type)


def _fields(struct: Any) -> list[str]:
    return [field[2] for field in struct.thrift_spec if field is not None]


def _database_field(struct: Any, name: str) -> bool:
    return name.lower() in _DATABASE_FIELDS or (name == "name" and type(struct).__name__ == "Database")


def databases_in(method: str, args: tuple[Any, ...]) -> list[tuple[str, str | None]]:
    """Every (database, catName beside it) the arguments name, outermost first."""
    found: list[tuple[str, str | None]] = []

    def walk(value: Any) -> None:
        if _is_struct(value):
            names = _fields(value)
            catalog = next((getattr(value, n) for n in names if n.lower() in _CATALOG_FIELDS and getattr(value, n)), None)
            for name in names:
                field = getattr(value, name, None)
                if isinstance(field, str) and _database_field(value, name):
                    found.append((field, catalog))
                elif field is not None and not isinstance(field, (str, bytes, int, float, bool)):
                    walk(field)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for each in value:
                walk(each)
        elif isinstance(value, dict):
            for each in value.values():
                walk(each)

    for name, value in zip(argument_names(method), args, strict=False):
        if isinstance(value, str) and _is_database_argument(method, name):
            found.append((value, None))
        else:
            walk(value)
    return found


def rename_databases(value: Any, rename: Rename, catalog: str | None = None) -> Any:
    """``value`` with every database name passed through ``rename`` (structs changed in place, so pass copies
    of anything shared); ``catalog``: set every ``catName`` to it (the owning metastore's catalog)."""
    if _is_struct(value):
        for name in _fields(value):
            field = getattr(value, name, None)
            if field is None:
                continue
            if isinstance(field, str):
                if _database_field(value, name):
                    setattr(value, name, rename(field))
                elif catalog is not None and name.lower() in _CATALOG_FIELDS:
                    setattr(value, name, catalog)
            elif not isinstance(field, (bytes, int, float, bool)):
                setattr(value, name, rename_databases(field, rename, catalog))
        return value
    if isinstance(value, list):
        return [rename_databases(each, rename, catalog) for each in value]
    if isinstance(value, (set, frozenset)):
        return type(value)(rename_databases(each, rename, catalog) for each in value)
    if isinstance(value, dict):
        return {key: rename_databases(each, rename, catalog) for key, each in value.items()}
    return value


def rename_arguments(method: str, args: tuple[Any, ...], rename: Rename, catalog: str | None = None) -> tuple[Any, ...]:
    """The call's arguments with their database names renamed (string arguments replaced, structs in place)."""
    renamed = []
    for name, value in zip(argument_names(method), args, strict=False):
        if isinstance(value, str) and _is_database_argument(method, name):
            renamed.append(rename(value))
        else:
            renamed.append(rename_databases(value, rename, catalog))
    return tuple(renamed) + tuple(args[len(renamed):])
