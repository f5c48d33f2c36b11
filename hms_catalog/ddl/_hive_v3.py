"""pyiceberg's HiveCatalog, made to write format version 3 (:mod:`hms_catalog.ddl.iceberg_v3` says what it lacks).

Everything else is HiveCatalog's own: the metastore's lock on the table, the current metadata read under it,
the requirements validated and the updates applied by pyiceberg, the new metadata file written beside the
old one and ``metadata_location`` / ``previous_metadata_location`` swapped with ``alter_table`` under that
lock. Only four points differ, each for v3 alone: the metadata file is serialized here
(:func:`~hms_catalog.ddl.iceberg_v3.metadata_bytes`), an upgrade to v3 is applied (pyiceberg's handler stops
at v2), a new table keeps its columns' defaults and starts its row lineage, and every added snapshot's row
ids are checked and the table's ``next-row-id`` advanced as Java's ``TableMetadata.Builder`` does. An update
that pyiceberg finds invalid (its ValueError) is the spec's ValidationException, not a fault of the service.

This module imports pyiceberg when it is imported: :func:`hms_catalog.ddl.iceberg.iceberg_catalog` imports it
only when a catalog is made.
"""

from __future__ import annotations

from typing import Any

from pyiceberg.catalog.hive import HIVE_PRIMITIVE_TYPES, HiveCatalog
from pyiceberg.exceptions import ValidationError
from pyiceberg.serializers import Compressor
from pyiceberg.table import StagedTable
from pyiceberg.table.metadata import SUPPORTED_TABLE_FORMAT_VERSION, TableMetadataUtil
from pyiceberg.table.update import UpgradeFormatVersionUpdate, _apply_table_update, _TableMetadataUpdateContext
from pyiceberg.types import TimestampNanoType, TimestamptzNanoType

from hms_catalog.ddl.iceberg_v3 import INITIAL_ROW_ID, ROW_LINEAGE_VERSION, check_row_lineage, metadata_bytes, started

__all__ = ["HiveCatalogV3"]

# The metastore's columns of a table with nanosecond timestamps (pyiceberg 0.12 has no Hive type for them and
# fails): Hive's timestamp carries nanoseconds, and a Hive 2 metastore has no zoned one (pyiceberg's own
# choice for microsecond ones). An Iceberg table's truth is its metadata file; these columns only show it.
HIVE_PRIMITIVE_TYPES.setdefault(TimestampNanoType, "timestamp")
HIVE_PRIMITIVE_TYPES.setdefault(TimestamptzNanoType, "timestamp")


class _UpgradeToV3(UpgradeFormatVersionUpdate):
    """An ``upgrade-format-version`` to 3, applied here: pyiceberg's handler refuses versions it cannot write."""


@_apply_table_update.register(_UpgradeToV3)
def _upgrade(update: _UpgradeToV3, base: Any, context: _TableMetadataUpdateContext) -> Any:
    if update.format_version < base.format_version:
        raise ValueError(f"Cannot downgrade v{base.format_version} table to v{update.format_version}")
    if update.format_version == base.format_version:
        return base
    context.add_update(update)
    upgraded: Any = TableMetadataUtil._construct_without_validation(base.model_copy(update={"format_version": update.format_version}))
    if upgraded.next_row_id is None:  # the spec: an upgraded table's next-row-id starts at 0, its old snapshots keep none
        upgraded = upgraded.model_copy(update={"next_row_id": INITIAL_ROW_ID})
    return upgraded


def _ours(update: Any) -> Any:
    if isinstance(update, UpgradeFormatVersionUpdate) and update.format_version == ROW_LINEAGE_VERSION > SUPPORTED_TABLE_FORMAT_VERSION:
        return _UpgradeToV3.model_validate({"format-version": update.format_version})
    return update


def _restaged(staged: Any, metadata: Any, catalog: HiveCatalog) -> Any:
    return StagedTable(identifier=staged.name(), metadata=metadata, metadata_location=staged.metadata_location, io=staged.io,
                       catalog=catalog)


class HiveCatalogV3(HiveCatalog):
    """HiveCatalog, writing v3 tables too."""

    @staticmethod
    def _write_metadata(metadata: Any, io: Any, metadata_path: str) -> None:
        if metadata.format_version < ROW_LINEAGE_VERSION:
            HiveCatalog._write_metadata(metadata, io, metadata_path)
            return
        output = io.new_output(metadata_path)
        with output.create(overwrite=False) as stream:  # a metadata file is never rewritten: it names a version
            stream.write(Compressor.get_compressor(metadata_path).bytes_compressor()(metadata_bytes(metadata)))

    def _create_staged_table(self, identifier: Any, schema: Any, *args: Any, **kwargs: Any) -> Any:
        staged = super()._create_staged_table(identifier, schema, *args, **kwargs)
        metadata = started(staged.metadata, schema)
        return staged if metadata is staged.metadata else _restaged(staged, metadata, self)

    def _update_and_stage_table(self, current_table: Any, table_identifier: Any, requirements: Any, updates: Any) -> Any:
        base = current_table.metadata if current_table is not None else None
        for requirement in requirements:  # first, as pyiceberg and Java do: a stale base is a 409, not a bad update
            requirement.validate(base)
        next_row_id = check_row_lineage(base, updates)
        try:
            staged = super()._update_and_stage_table(current_table, table_identifier, requirements,
                                                     tuple(_ours(update) for update in updates))
        except ValueError as error:
            raise ValidationError(str(error)) from error
        if next_row_id is None or getattr(staged.metadata, "next_row_id", None) == next_row_id:
            return staged
        return _restaged(staged, staged.metadata.model_copy(update={"next_row_id": next_row_id}), self)
