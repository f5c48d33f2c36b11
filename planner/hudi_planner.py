"""Planning Hudi tables: the latest file slices from the timeline (hudi-rs).

Copy-on-write and read-optimized reads take each slice's base file, cut by the rule. A snapshot read of
a merge-on-read table keeps a slice with log files whole (base file and logs are merged by file group)
and carries its log files; slices without logs are cut like base files.
"""

from __future__ import annotations

import time
from typing import Any

from hms_catalog.formats.hudi_schema import open_hudi_table
from hms_catalog.sql.expressions import Expression
from planner.context import FormatPlan, PlanningContext
from planner.listing import with_blocks
from planner.predicates import bind
from planner._gc import paused_gc
from planner.splitter import cut_file

__all__ = ["plan_hudi", "partition_values_of"]


def partition_values_of(path: str, fields: list[str], hive_style: bool) -> tuple[tuple[str, str | None], ...]:
    """Values of a Hudi partition path: ``k=v/...`` when hive-style, else positional segments."""
    if not fields:
        return ()
    segments = [segment for segment in path.split("/") if segment] if path else []
    if hive_style or (segments and all("=" in segment for segment in segments)):
        found = dict(segment.split("=", 1) for segment in segments if "=" in segment)
        lowered = {k.lower(): v for k, v in found.items()}
        return tuple((field, lowered.get(field.lower())) for field in fields)
    if len(segments) == len(fields):
        return tuple(zip(fields, segments))
    if len(fields) == 1:  # one field whose value has slashes, e.g. a date written as 2024/01/01
        return ((fields[0], path),)
    return tuple((field, None) for field in fields)  # a layout we cannot map: values unknown


def _prunable(values: tuple[tuple[str, str | None], ...], types: dict[str, Any]) -> bool:
    """Whether the path's values can be judged: all present and readable in their column types (a key
    generator's formatted values may not be), else the slice is kept."""
    from planner.partition_values import typed_value

    return all(v is not None and typed_value(v, types.get(k.lower())) is not None for k, v in values)


def plan_hudi(ctx: PlanningContext, where: Expression | None) -> FormatPlan:
    metadata = ctx.metadata
    started = time.perf_counter()
    hudi_table = open_hudi_table(metadata.table)
    slices = hudi_table.get_file_slices()
    listing_seconds = time.perf_counter() - started
    options = hudi_table.hudi_options()
    fields = [f for f in options.get("hoodie.table.partition.fields", "").split(",") if f]
    hive_style = options.get("hoodie.datasource.write.hive_style_partitioning", "false").lower() == "true"
    schema = metadata.schema
    types = {}
    for field in fields:
        try:
            types[field.lower()] = schema.column(field).type
        except Exception:  # a partition field that is not a column: compare as text
            types[field.lower()] = None
    predicate = bind(where, types)
    snapshot = metadata.detection.hudi_query == "snapshot"
    base = hudi_table.base_url.rstrip("/")
    started = time.perf_counter()
    splits = []
    files = size = 0
    partitions: set[str] = set()
    kept: set[str] = set()
    chosen = []
    for piece in slices:
        values = partition_values_of(piece.partition_path, fields, hive_style)
        partitions.add(piece.partition_path)
        if predicate is not None and _prunable(values, types) and not predicate.may_match({k.lower(): v for k, v in values}):
            continue
        kept.add(piece.partition_path)
        chosen.append((piece, values))
    entries = with_blocks([(f"{base}/{piece.base_file_relative_path()}", int(piece.base_file_size), 0) for piece, _ in chosen],
                          ctx.caches, ctx.locator, ctx.config.block_size)
    with paused_gc():
        for (piece, values), entry in zip(chosen, entries):
            logs = tuple(f"{base}/{log}" for log in piece.log_files_relative_paths()) if snapshot else ()
            files += 1 + len(logs)
            size += entry.size
            splits.extend(cut_file(entry, ctx.config, file_format="parquet", partition_values=values,
                                   log_files=logs, splittable=not logs))
    notes = [f"{'snapshot' if snapshot else 'read-optimized'} read of a {hudi_table.table_type} table"]
    if not snapshot and hudi_table.is_mor:
        notes.append("log files are not read (read-optimized): rows not yet compacted are not seen")
    return FormatPlan(
        splits, files, size, partitions_total=len(partitions) if fields else None,
        partitions_scanned=len(kept) if fields else 0, listing_seconds=listing_seconds,
        splitting_seconds=time.perf_counter() - started, notes=notes,
    )
