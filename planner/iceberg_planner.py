"""Planning Iceberg tables: pyiceberg's scan planning of the current snapshot, each data file cut by the
rule and carrying the delete files that apply to it."""

from __future__ import annotations

import time

from hms_catalog.errors import PlanningError
from hms_catalog.formats._paths import normalize_location
from hms_catalog.sql.expressions import Expression
from planner.context import FormatPlan, PlanningContext
from planner.iceberg_filters import to_iceberg_filter
from planner.listing import with_blocks
from planner.plan import DeleteFile
from planner._gc import paused_gc
from planner.splitter import cut_file

__all__ = ["plan_iceberg"]


def _partition_values(task, spec) -> tuple[tuple[str, str | None], ...]:  # type: ignore[no-untyped-def]
    record = task.file.partition
    values = []
    for index, field in enumerate(spec.fields):
        try:
            value = record[index]
        except (IndexError, TypeError):
            value = None
        values.append((field.name, None if value is None else str(value)))
    return tuple(values)


def plan_iceberg(ctx: PlanningContext, where: Expression | None) -> FormatPlan:
    from pyiceberg.table import StaticTable

    table = ctx.metadata.table
    location = (table.parameters or {}).get("metadata_location")
    if not location:
        raise PlanningError(f"Iceberg table {table.dbName}.{table.tableName} has no metadata_location")
    started = time.perf_counter()
    try:
        static = StaticTable.from_metadata(normalize_location(location), properties=ctx.io_properties)
        tasks = list(static.scan(row_filter=to_iceberg_filter(where, static.schema()), case_sensitive=False).plan_files())
    except (OSError, ValueError) as error:
        raise PlanningError(f"cannot plan Iceberg table {table.dbName}.{table.tableName}: {error}") from error
    listing_seconds = time.perf_counter() - started
    spec = static.spec()
    started = time.perf_counter()
    splits = []
    files = size = 0
    entries = with_blocks([(t.file.file_path, int(t.file.file_size_in_bytes), 0) for t in tasks],
                          ctx.caches, ctx.locator, ctx.config.block_size)
    with paused_gc():
        for task, entry in zip(tasks, entries):
            data = task.file
            deletes = tuple(
                DeleteFile(d.file_path, d.content.name.lower(), d.file_format.name.lower(), int(d.file_size_in_bytes),
                           tuple(d.equality_ids or ()))
                for d in sorted(task.delete_files, key=lambda d: d.file_path)
            )
            files += 1
            size += entry.size
            splits.extend(cut_file(
                entry, ctx.config, file_format=data.file_format.name.lower(),
                partition_values=_partition_values(task, spec), delete_files=deletes,
            ))
    notes = [f"snapshot {static.current_snapshot().snapshot_id}" if static.current_snapshot() else "no snapshot: empty table"]
    return FormatPlan(splits, files, size, listing_seconds=listing_seconds,
                      splitting_seconds=time.perf_counter() - started, notes=notes)
