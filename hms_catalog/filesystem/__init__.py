"""Filesystem catalogs: folders of files served as tables, their formats detected and kept on promotion."""

from __future__ import annotations

from hms_catalog.filesystem.client import FilesystemClient
from hms_catalog.filesystem.config import FilesystemConfig
from hms_catalog.filesystem.detect import TableLayout, detect_table, list_table
from hms_catalog.filesystem.promotions import PromotionStore

__all__ = ["FilesystemClient", "FilesystemConfig", "PromotionStore", "TableLayout", "detect_table", "list_table"]
