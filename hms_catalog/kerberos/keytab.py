"""The principals a keytab holds, read from the file itself (MIT's keytab format, versions 1 and 2).

Read in Python rather than through GSSAPI so that ``CREATE CATALOG`` can say "this principal is not in
that keytab" on a machine without the Kerberos extra installed, and without logging in. Only names are
read: the keys are skipped and never kept.
"""

from __future__ import annotations

import struct
from pathlib import Path

__all__ = ["KeytabFormatError", "keytab_principals"]

_MAGIC = 0x05


class KeytabFormatError(ValueError):
    """The file is not a keytab, or is cut short."""


def keytab_principals(path: Path) -> frozenset[str]:
    """Every ``primary/instance@REALM`` with a key in the keytab at ``path``.

    Raises OSError when the file cannot be read and :class:`KeytabFormatError` when it is not a keytab.
    """
    data = path.read_bytes()
    if len(data) < 2 or data[0] != _MAGIC or data[1] not in (1, 2):
        raise KeytabFormatError(f"{path} is not a Kerberos keytab (it does not start with 0x0501 or 0x0502)")
    version = data[1]
    order = ">" if version == 2 else "="  # version 1 wrote numbers in the writer's byte order
    principals: set[str] = set()
    offset = 2
    while offset + 4 <= len(data):
        (size,) = struct.unpack_from(order + "i", data, offset)
        offset += 4
        if size < 0:  # a hole left by a removed entry
            offset += -size
            continue
        if size == 0:
            break
        if offset + size > len(data):
            raise KeytabFormatError(f"{path} is cut short: an entry of {size} bytes runs past its end")
        principals.add(_entry_principal(data[offset : offset + size], order, version, path))
        offset += size
    return frozenset(principals)


def _entry_principal(entry: bytes, order: str, version: int, path: Path) -> str:
    try:
        (count,) = struct.unpack_from(order + "H", entry, 0)
        if version == 1:
            count -= 1  # version 1 counted the realm among the components
        position = 2
        realm, position = _counted(entry, position, order)
        components = []
        for _ in range(count):
            component, position = _counted(entry, position, order)
            components.append(component)
    except (struct.error, UnicodeDecodeError) as error:
        raise KeytabFormatError(f"{path} has an entry that cannot be read: {error}") from None
    return "/".join(components) + "@" + realm


def _counted(entry: bytes, position: int, order: str) -> tuple[str, int]:
    (length,) = struct.unpack_from(order + "H", entry, position)
    position += 2
    if position + length > len(entry):
        raise struct.error("a name runs past the end of its entry")
    return entry[position : position + length].decode("utf-8"), position + length
