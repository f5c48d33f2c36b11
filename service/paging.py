"""Paging over a list of names, for the REST APIs: the service's own (``page_token``, ``page_size``) and the
Iceberg REST catalog's (``pageToken``, ``pageSize``).

A page token is the last name of the page before, base64-encoded so that clients treat it as opaque; the
next page starts after it, so names created or dropped between two pages shift nothing already seen.
"""

from __future__ import annotations

import base64
import binascii
import bisect
from collections.abc import Iterable

from hms_catalog.errors import ConfigurationError

__all__ = ["page"]


def page(names: Iterable[str], token: str | None, size: int | None,
         *, token_name: str = "page_token", in_order: bool = False) -> tuple[list[str], str | None]:
    """The names, sorted, after ``token`` (all of them, or ``size``), and the token of the next page (None: the
    last). A token this service did not give is a ConfigurationError (400) naming ``token_name``. ``in_order``:
    the names come sorted already (SHOW PARTITIONS sorts its rows), and are not sorted again."""
    ordered = list(names) if in_order else sorted(names)
    if token:
        try:
            after = base64.urlsafe_b64decode(token.encode("ascii")).decode("utf-8")
        except (binascii.Error, UnicodeError, ValueError):
            raise ConfigurationError(f"{token_name} {token!r} is not one this service gave") from None
        ordered = ordered[bisect.bisect_right(ordered, after):]
    if size is None or len(ordered) <= size:
        return ordered, None
    shown = ordered[:size]
    return shown, base64.urlsafe_b64encode(shown[-1].encode("utf-8")).decode("ascii")
