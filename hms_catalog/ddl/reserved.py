"""Property keys Spark reserves for a clause of their own, refused in a property list as Spark's parser refuses them.

Spark 4 (``AstBuilder.cleanTableProperties`` / ``cleanNamespaceProperties``) refuses ``TBLPROPERTIES``,
``OPTIONS`` and ``UNSET TBLPROPERTIES`` naming ``provider``, ``location``, ``owner``, ``external``,
``collation``, ``is_managed_location`` or ``table_type``, and ``DBPROPERTIES`` naming ``location``, ``owner`` or
``collation``: each is said by a clause (``USING``, ``LOCATION``, ``CREATE EXTERNAL TABLE``) or set by Spark
itself. Taking one as a plain property would store a key Spark's own DDL never leaves, and which Spark then
reads as that clause's value (a ``location`` property shadows the table's real location in its v2 view).
Keys compare exactly, as Spark compares them: ``EXTERNAL`` (Hive's flag) and ``Owner`` are ordinary keys.
``comment`` is no reserved key: a table's is its comment, a database's its description.

The check is here, not in the SQL parser, so every front end (SQL, the service's REST bodies) meets it.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType

from hms_catalog.errors import ConfigurationError

__all__ = ["TABLE_RESERVED", "NAMESPACE_RESERVED", "check_table_keys", "check_namespace_keys"]

_REMOVE = "remove it from the list"
TABLE_RESERVED = MappingProxyType({
    "provider": "use the USING clause to give it", "location": "use the LOCATION clause to give it",
    "owner": "it is set to the current user", "external": "use CREATE EXTERNAL TABLE",
    "collation": "use the DEFAULT COLLATION clause to give it", "is_managed_location": _REMOVE, "table_type": _REMOVE,
})
"""Reserved table property keys, with what to do instead (Spark's ``TableCatalog.PROP_*``)."""

NAMESPACE_RESERVED = MappingProxyType({
    "location": "use the LOCATION clause to give it", "owner": "it is set to the current user",
    "collation": "use the DEFAULT COLLATION clause to give it",
})
"""Reserved database (namespace) property keys, with what to do instead (Spark's ``SupportsNamespaces.PROP_*``)."""


def check_table_keys(keys: Iterable[str], clause: str) -> None:
    """A ConfigurationError naming the first reserved key among ``keys`` of ``clause`` (``TBLPROPERTIES``, ...)."""
    _check(keys, clause, TABLE_RESERVED, "table")


def check_namespace_keys(keys: Iterable[str], clause: str) -> None:
    """A ConfigurationError naming the first reserved key among ``keys`` of ``clause`` (``DBPROPERTIES``, ...)."""
    _check(keys, clause, NAMESPACE_RESERVED, "database")


def _check(keys: Iterable[str], clause: str, reserved: MappingProxyType[str, str], kind: str) -> None:
    for key in keys:
        instead = reserved.get(key)
        if instead is not None:
            raise ConfigurationError(f"{clause}: '{key}' is a reserved {kind} property ({instead}), as Spark reserves it")
