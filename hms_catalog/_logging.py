"""Logging set-up for the command line, with secrets masked in every record.

Properties travel through messages (errors quoting a statement, debug logs of a catalog definition), so
the filter masks them by the rule of :mod:`hms_catalog.masking`, which every other place that shows a
statement uses too.
"""

from __future__ import annotations

import logging

from hms_catalog.masking import mask_text

__all__ = ["SecretMaskingFilter", "configure_logging"]


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
    # sqlglot warns on stderr before some of the syntax errors we report ourselves, with position.
    logging.getLogger("sqlglot").setLevel(logging.DEBUG if debug else logging.ERROR)
