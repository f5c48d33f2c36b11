"""The Hudi table builder lives with the demo, which writes a Hudi table too; tests use the same one."""

from __future__ import annotations

from hms_catalog.demo.hudi_writer import META_FIELDS, HudiCommit, hive_sync_table, write_cow_table

__all__ = ["HudiCommit", "write_cow_table", "hive_sync_table", "META_FIELDS"]
