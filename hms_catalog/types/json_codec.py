"""The canonical type tree as JSON, so split plans carry their schema without loss.

Every node is a frozen dataclass of :mod:`hms_catalog.types.tree`; its JSON is ``{"kind": ClassName,
field: value, ...}`` with nested types and struct fields encoded the same way.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hms_catalog.errors import SchemaError
from hms_catalog.types import tree

__all__ = ["type_to_json", "type_from_json"]

_KINDS = {
    name: cls for name, cls in vars(tree).items()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and issubclass(cls, (tree.DataType, tree.StructField))
}


def type_to_json(node: Any) -> Any:
    if isinstance(node, tuple):
        return [type_to_json(item) for item in node]
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        encoded = {"kind": type(node).__name__}
        for item in dataclasses.fields(node):
            encoded[item.name] = type_to_json(getattr(node, item.name))
        return encoded
    return node


def type_from_json(data: Any) -> Any:
    if isinstance(data, list):
        return tuple(type_from_json(item) for item in data)
    if isinstance(data, dict):
        kind = _KINDS.get(str(data.get("kind")))
        if kind is None:
            raise SchemaError(f"unknown type kind {data.get('kind')!r} in a serialised schema")
        return kind(**{key: type_from_json(value) for key, value in data.items() if key != "kind"})
    return data
