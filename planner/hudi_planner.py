"""Planning Hudi tables: the latest file slices from the timeline (hudi-rs).

Copy-on-write and read-optimized reads take each slice's base file, cut by the rule. A snapshot read of
a merge-on-read table keeps a slice with log files whole (base file and logs are merged by file group)
and carries its log files, the table's root and the commit the plan is as of, so that every split reads
the same snapshot; slices without logs are cut like base files. A slice with no base file (inserts
written straight to log files) is planned on its first log file, with file format ``hudi_log``.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from hms_catalog.errors import PlanningError, SchemaError
from hms_catalog.formats.hudi_schema import read_hudi_table
from hms_catalog.sql.expressions import Expression
from planner._gc import paused_gc
from planner.context import FormatPlan, PlanningContext
from planner.listing import with_blocks
from planner.predicates import bind
from planner.splitter import cut_file

__all__ = ["plan_hudi", "partition_values_of", "LOG_ONLY"]

LOG_ONLY = "hudi_log"  # the file format of a split whose slice has log files and no base file


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
    from hms_catalog.formats.partition_values import typed_value

    return all(v is not None and typed_value(v, types.get(k.lower())) is not None for k, v in values)


def _latest_instant(hudi_table: Any) -> str | None:
    """The latest completed commit, which a snapshot plan is made at; None for a table with no commit yet."""
    try:
        return str(hudi_table.get_timeline().get_latest_commit_timestamp())
    except Exception as error:  # hudi-rs raises its own HudiCoreError
        if "no completed commit" in str(error).lower():
            return None
        raise PlanningError(f"cannot read the Hudi timeline at {hudi_table.base_url}: {error}") from error


def _as_of(instant: str | None) -> Any:
    """Read options pinning file slices to ``instant`` (the slices and the commit a plan names must agree)."""
    import hudi

    options = hudi.HudiReadOptions()
    return options if instant is None else options.with_as_of_timestamp(instant)


class _Listed(NamedTuple):
    """What a plan reads from the store, in one call the catalog holds to its request timeout."""

    table: Any
    instant: str | None  # the commit a snapshot plan is as of
    slices: list[Any]
    options: dict[str, str]


def _list(hudi_table: Any, snapshot: bool) -> _Listed:
    instant = _latest_instant(hudi_table) if snapshot else None
    return _Listed(hudi_table, instant, hudi_table.get_file_slices(_as_of(instant)), hudi_table.hudi_options())


def plan_hudi(ctx: PlanningContext, where: Expression | None) -> FormatPlan:
    metadata = ctx.metadata
    snapshot = metadata.detection.hudi_query == "snapshot"
    started = time.perf_counter()
    hudi_table, instant, slices, options = read_hudi_table(metadata.table, ctx.io_properties, ctx.storage,
                                                           lambda table: _list(table, snapshot))
    listing_seconds = time.perf_counter() - started
    fields = [f for f in options.get("hoodie.table.partition.fields", "").split(",") if f]
    hive_style = options.get("hoodie.datasource.write.hive_style_partitioning", "false").lower() == "true"
    schema = metadata.schema
    types = {}
    for field in fields:
        try:
            types[field.lower()] = schema.column(field).type
        except SchemaError:  # a partition field that is not a column: compare as text
            types[field.lower()] = None
    predicate = bind(where, types)
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
        logs = tuple(f"{base}/{log}" for log in piece.log_files_relative_paths()) if snapshot else ()
        if piece.base_file_name:
            file_format, listed = "parquet", (f"{base}/{piece.base_file_relative_path()}", int(piece.base_file_size), 0)
            files, size = files + 1, size + listed[1]
        elif logs:
            file_format, listed = LOG_ONLY, (logs[0], int(piece.log_file_sizes[0]), 0)
        else:
            continue  # read-optimized: a slice of log files alone has nothing to read
        files, size = files + len(logs), size + (sum(int(s) for s in piece.log_file_sizes) if logs else 0)
        chosen.append((values, logs, file_format, listed))
    entries = with_blocks([listed for *_, listed in chosen], ctx.caches, ctx.locator, ctx.config.block_size)
    with paused_gc():
        for (values, logs, file_format, _), entry in zip(chosen, entries):
            cut = cut_file(entry, ctx.config, file_format=file_format, partition_values=values, log_files=logs,
                           splittable=not logs)
            splits.extend([s._replace(table_root=base, snapshot=instant) for s in cut] if logs else cut)
    notes = [f"{'snapshot' if snapshot else 'read-optimized'} read of a {hudi_table.table_type} table"
             + (f" as of commit {instant}" if snapshot and instant else "")]
    if not snapshot and hudi_table.is_mor:
        notes.append("log files are not read (read-optimized): rows not yet compacted are not seen")
    log_only = sum(1 for *_, file_format, _ in chosen if file_format == LOG_ONLY)
    if log_only:
        notes.append(f"{log_only} file group(s) have log files and no base file: hudi-rs's file-group reader cannot "
                     "read such a slice, so reading them fails (the _ro table does not include them)")
    return FormatPlan(
        splits, files, size, partitions_total=len(partitions) if fields else None,
        partitions_scanned=len(kept) if fields else 0, listing_seconds=listing_seconds,
        splitting_seconds=time.perf_counter() - started, notes=notes,
    )
