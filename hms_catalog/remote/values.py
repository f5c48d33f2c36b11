"""Row values over JSON without losing their Python type, so a remote run renders as a local one does.

Statement results hold plain Python values; JSON carries str, int, float, bool, None, lists and string-
keyed objects exactly. The others travel as a one-key object naming their type: ``{"$decimal": "1.20"}``,
``{"$date": "2024-01-01"}``, ``{"$timestamp": "2024-01-01T10:11:12.123456"}``, ``{"$binary": base64}``.
A map that itself has exactly one such key is wrapped as ``{"$map": {...}}`` so that it reads back as a map.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

__all__ = ["decode_value", "encode_value"]

_DECODERS: dict[str, Callable[[Any], Any]] = {
    "$decimal": Decimal,
    "$date": date.fromisoformat,
    "$timestamp": datetime.fromisoformat,
    "$binary": base64.b64decode,
}
_MAP = "$map"


def encode_value(value: Any) -> Any:
    """``value`` as JSON-ready data; :func:`decode_value` gives it back with its type."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Decimal):
        return {"$decimal": str(value)}
    if isinstance(value, datetime):  # before date: a datetime is a date
        return {"$timestamp": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$binary": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, (list, tuple)):
        return [encode_value(item) for item in value]
    if isinstance(value, dict):
        encoded = {str(key): encode_value(item) for key, item in value.items()}
        return {_MAP: encoded} if _looks_tagged(encoded) else encoded
    return str(value)


def decode_value(data: Any) -> Any:
    """The Python value :func:`encode_value` encoded as ``data``."""
    if isinstance(data, list):
        return [decode_value(item) for item in data]
    if isinstance(data, dict):
        if _looks_tagged(data):
            (tag, payload), = data.items()
            if tag == _MAP:
                return {key: decode_value(item) for key, item in payload.items()}
            return _DECODERS[tag](payload)
        return {key: decode_value(item) for key, item in data.items()}
    return data


def _looks_tagged(data: dict[str, Any]) -> bool:
    return len(data) == 1 and next(iter(data)) in (*_DECODERS, _MAP)
