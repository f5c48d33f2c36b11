"""The spec's paging (``pageToken``, ``pageSize``) over a sorted list of names.

A page token is the last name of the page before, base64-encoded so that clients treat it as opaque; the
next page starts after it, so names created or dropped between two pages shift nothing already seen.
"""

from __future__ import annotations

import base64
import binascii

from service.iceberg_rest.errors import IcebergError

__all__ = ["page"]


def page(names: list[str], token: str | None, size: int | None) -> tuple[list[str], str | None]:
    """The names after ``token`` (all of them, or ``size``), and the token of the next page (None: the last)."""
    ordered = sorted(names)
    if token:
        try:
            after = base64.urlsafe_b64decode(token.encode("ascii")).decode("utf-8")
        except (binascii.Error, UnicodeError, ValueError):
            raise IcebergError(400, "BadRequestException", f"pageToken {token!r} is not one this service gave") from None
        ordered = [name for name in ordered if name > after]
    if size is None or len(ordered) <= size:
        return ordered, None
    shown = ordered[:size]
    return shown, base64.urlsafe_b64encode(shown[-1].encode("utf-8")).decode("ascii")
