"""Metastore structs as text an undo log can hold: thrift's binary encoding, in base64."""

from __future__ import annotations

import base64
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocolFactory
from thrift.TSerialization import deserialize, serialize

__all__ = ["decode_struct", "encode_struct"]

_PROTOCOL = TBinaryProtocolFactory()


def encode_struct(struct: Any) -> str:
    """A metastore struct as text the log can hold (thrift's binary encoding, base64)."""
    return base64.b64encode(serialize(struct, _PROTOCOL)).decode("ascii")


def decode_struct(text: str, kind: type) -> Any:
    return deserialize(kind(), base64.b64decode(text), _PROTOCOL)
