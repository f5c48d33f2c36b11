"""Planning Iceberg tables: the scan tasks of the current snapshot (:mod:`planner.iceberg_tasks`, equality
deletes matched there), each data file cut by the rule and carrying the delete files that apply to it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hms_catalog.errors import PlanningError
from hms_catalog.sql.expressions import Expression
from hms_catalog.storage.locations import normalize_location
from planner._gc import paused_gc
from planner.aggregates import AggregateAnswer, FileFacts, answer, refused
from planner.context import FormatPlan, PlanningContext
from planner.iceberg_filters import to_iceberg_filter
from planner.iceberg_metrics import file_facts as iceberg_file_facts
from planner.iceberg_metrics import iceberg_statistics, partition_fields
from planner.iceberg_tasks import IcebergTask, scan_tasks
from planner.iceberg_v3 import refuse_unreadable
from planner.listing import with_blocks
from planner.plan import DeleteFile
from planner.splitter import cut_file

if TYPE_CHECKING:
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.table import FileScanTask

    from hms_catalog.cache.metadata_cache import MetadataCache

__all__ = ["plan_iceberg"]


def _partition_values(task: FileScanTask, spec: PartitionSpec) -> tuple[tuple[str, str | None], ...]:
    record = task.file.partition
    values = []
    for index, field in enumerate(spec.fields):
        try:
            value = record[index]
        except (IndexError, TypeError):
            value = None
        values.append((field.name, None if value is None else str(value)))
    return tuple(values)


def _plan_tasks(static: Any, row_filter: Any, manifests: MetadataCache[str, bytes]) -> list[IcebergTask]:
    """pyiceberg's scan tasks of the current snapshot, each with the equality delete files for its file; the
    manifests are read through the catalog's cache of them."""
    try:
        from pyiceberg.table import ManifestGroupPlanner  # noqa: F401 - pyiceberg 0.12 and later
    except ImportError:  # pyiceberg before 0.12: its own planning, which refuses equality deletes
        return [(task, []) for task in static.scan(row_filter=row_filter, case_sensitive=False).plan_files()]
    from hms_catalog.cache.manifest_io import ManifestCachingIO

    io = ManifestCachingIO(static.io, manifests)
    return scan_tasks(static.metadata, io, static.current_snapshot(), row_filter, case_sensitive=False)


def _delete_file(d: Any) -> DeleteFile:
    return DeleteFile(d.file_path, d.content.name.lower(), d.file_format.name.lower(), int(d.file_size_in_bytes),
                      tuple(d.equality_ids or ()))


def plan_iceberg(ctx: PlanningContext, where: Expression | None) -> FormatPlan:
    from pyiceberg.table import StaticTable

    table = ctx.metadata.table
    location = (table.parameters or {}).get("metadata_location")
    if not location:
        raise PlanningError(f"Iceberg table {table.dbName}.{table.tableName} has no metadata_location")
    started = time.perf_counter()
    try:
        static = StaticTable.from_metadata(normalize_location(location), properties=ctx.io_properties)
        tasks = _plan_tasks(static, to_iceberg_filter(where, static.schema()), ctx.caches.iceberg_manifests)
    except OSError as error:  # the store: named in the catalog's terms (endpoint, request, timeout)
        raise ctx.storage.error(location, error, f"plan Iceberg table {table.dbName}.{table.tableName} at") from None
    except ValueError as error:
        raise PlanningError(f"cannot plan Iceberg table {table.dbName}.{table.tableName}: {error}") from error
    refuse_unreadable(f"{table.dbName}.{table.tableName}", static.metadata,
                      [d for task, equality in tasks for d in (*task.delete_files, *equality)])
    listing_seconds = time.perf_counter() - started
    specs = static.metadata.specs()
    started = time.perf_counter()
    splits = []
    files = size = 0
    entries = with_blocks([(t.file.file_path, int(t.file.file_size_in_bytes), 0) for t, _ in tasks],
                          ctx.caches, ctx.locator, ctx.config.block_size)
    with paused_gc():
        for (task, equality), entry in zip(tasks, entries):
            data = task.file
            deletes = tuple(_delete_file(d) for d in sorted([*task.delete_files, *equality], key=lambda d: d.file_path))
            files += 1
            size += entry.size
            splits.extend(cut_file(
                entry, ctx.config, file_format=data.file_format.name.lower(),
                partition_values=_partition_values(task, specs[data.spec_id]), delete_files=deletes,
            ))
    snapshot = static.current_snapshot()
    notes = [f"snapshot {snapshot.snapshot_id}" if snapshot is not None else "no snapshot: empty table"]
    plan = FormatPlan(splits, files, size, listing_seconds=listing_seconds,
                      splitting_seconds=time.perf_counter() - started, notes=notes,
                      partition_fields=partition_fields(specs, static.schema()))
    if ctx.statistics or ctx.aggregate is not None:
        schema = static.schema()
        described = [(_partition_values(task, specs[task.file.spec_id]), iceberg_file_facts(task.file, schema),
                      bool(task.delete_files or equality)) for task, equality in tasks]
        plan.statistics = iceberg_statistics(described)
        if ctx.aggregate is not None:
            plan.aggregate = _aggregate(ctx, described)
    return plan


def _aggregate(ctx: PlanningContext, described: list[tuple[tuple[tuple[str, str | None], ...], FileFacts, bool]]) -> AggregateAnswer:
    request = ctx.aggregate
    assert request is not None
    if any(deleted for _, _, deleted in described):
        return refused("delete files apply to some data files: their manifests count rows deleted since")
    # one answer per data file; the engine adds them up (Iceberg tables have no metastore partitions)
    return answer(request, ctx.metadata.schema, [((), _facts(facts)) for _, facts, _ in described], "Iceberg manifests")


def _facts(facts: FileFacts) -> Callable[[], list[FileFacts]]:
    return lambda: [facts]
