"""Partition names as the metastore spells them: ``k1=v1/k2=v2`` with Hive's path escaping (``%XX``).

``__HIVE_DEFAULT_PARTITION__`` stands for NULL. Names are cache keys and event payloads name partitions
by their values, so both sides must spell a name exactly as the metastore does.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import unquote

__all__ = ["DEFAULT_PARTITION", "parse_partition_name", "make_partition_name"]

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
