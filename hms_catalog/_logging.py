"""Logging set-up for the command line, with secrets masked in every record.

Properties travel through messages (errors quoting a statement, debug logs of a catalog definition), so
the filter masks the value of any ``key=value`` or ``'key'='value'`` pair whose key looks secret, the
same rule SHOW CREATE CATALOG uses.
"""

from __future__ import annotations

import logging
import re

from hms_catalog.properties import MASK, is_secret_key

__all__ = ["SecretMaskingFilter", "mask_text", "configure_logging"]

_PAIR = re.compile(
    r"""(?P<key>['"]?[A-Za-z0-9_.\-]+['"]?)(?P<eq>\s*[=:]\s*)(?P<value>'[^']*'|"[^"]*"|[^\s,)'"]+)"""
)


def mask_text(text: str) -> str:
    """``text`` with the values of secret-looking ``key=value`` pairs replaced by the mask."""

    def replace(match: re.Match[str]) -> str:
        if not is_secret_key(match.group("key").strip("'\"")):
            return match.group(0)
        value = match.group("value")
        quote = value[0] if value[:1] in ("'", '"') else ""
        return f"{match.group('key')}{match.group('eq')}{quote}{MASK}{quote}"

    return _PAIR.sub(replace, text)


class SecretMaskingFilter(logging.Filter):
    """Rewrites each record's message with :func:`mask_text` before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = mask_text(record.getMessage())
        record.args = None
        return True


def configure_logging(*, debug: bool = False) -> None:
    """Warnings (or everything with ``debug``) to stderr, secrets masked."""
    handler = logging.StreamHandler()
    handler.addFilter(SecretMaskingFilter())
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("hms_catalog")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
    root.propagate = False
