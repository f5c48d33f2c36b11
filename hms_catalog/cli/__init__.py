"""The ``hms-catalog`` command line."""

from __future__ import annotations

from hms_catalog.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
