"""Planning Hive tables: prune partitions, list their locations, cut the files."""

from __future__ import annotations

import time
from collections.abc import Callable

from hms_catalog.errors import PlanningError, UnsupportedTableError
from hms_catalog.sql.expressions import Expression
from planner._gc import paused_gc
from planner.aggregates import AggregateAnswer, FileFacts, answer, refused
from planner.context import FormatPlan, PlanningContext
from planner.footers import file_facts
from planner.listing import FileEntry, list_locations
from planner.partitions import select_partitions
from planner.predicates import bind
from planner.splitter import cut_file
from planner.statistics import PartitionFacts, PlanStatistics, hive_statistics, partition_key

__all__ = ["plan_hive"]


def plan_hive(ctx: PlanningContext, where: Expression | None) -> FormatPlan:
    metadata = ctx.metadata
    detection = metadata.detection
    table = metadata.table
    name = f"{table.dbName}.{table.tableName}"
    if detection.transactional:
        raise UnsupportedTableError(
            f"{name} is a transactional (ACID, {detection.transactional}) table: its base/delta layout needs "
            "Hive's merge of delta files, which hms-catalog does not do; read it through Hive or Spark, or "
            "compact it into a non-transactional copy"
        )
    database, table_name = table.dbName.lower(), table.tableName.lower()
    keys = [k.name.lower() for k in table.partitionKeys or []]
    notes: list[str] = []
    hms_seconds = 0.0
    total = None
    if keys:
        schema = metadata.schema
        predicate = bind(where, {key: schema.column(key).type for key in keys})
        selection = select_partitions(
            ctx.client, ctx.caches, table, predicate, max_partitions=ctx.config.max_partitions, parallelism=ctx.parallelism
        )
        hms_seconds, total, notes = selection.seconds, selection.total, selection.notes
        targets_with_parameters = [(p.location, p.values, dict(p.parameters)) for p in selection.partitions if p.location]
    else:
        if not detection.location:
            raise PlanningError(f"{name} has no location")
        targets_with_parameters = [(detection.location, (), dict(table.parameters or {}))]
    targets = [(location, values) for location, values, _ in targets_with_parameters]
    progress = ctx.progress
    listing = list_locations(
        [((database, table_name, location), location) for location, _ in targets],
        ctx.caches,
        storage=ctx.storage,
        recursive=ctx.config.recursive,
        block_size=ctx.config.block_size,
        locator=ctx.locator,
        parallelism=ctx.config.listing_parallelism,
        progress=(lambda done, count: progress("listing", done, count)) if progress else None,
        # most of the partitions wanted: one listing of the table's root on an object store answers them all
        shared_root=detection.location if keys and (total is None or 2 * len(targets) >= total) else None,
    )
    if listing.absent and not ctx.config.ignore_absent:
        raise PlanningError(
            f"{name}: {len(listing.absent)} location(s) do not exist, e.g. {listing.absent[0]} "
            "(set 'hive.ignore_absent_partitions'='true' to skip them)"
        )
    started = time.perf_counter()
    splits = []
    files = size = 0
    file_format = detection.file_format or "parquet"
    with paused_gc():
        for location, values in targets:
            for entry in listing.files.get(location, ()):
                files += 1
                size += entry.size
                splits.extend(cut_file(entry, ctx.config, file_format=file_format, partition_values=values))
    if listing.absent:
        notes.append(f"{len(listing.absent)} absent location(s) skipped, e.g. {listing.absent[0]}")
    plan = FormatPlan(
        splits, files, size, partitions_total=total, partitions_scanned=len(targets) if keys else 0,
        absent_locations=len(listing.absent), hms_seconds=hms_seconds, listing_seconds=listing.seconds,
        splitting_seconds=time.perf_counter() - started, notes=notes,
    )
    if ctx.statistics or ctx.aggregate is not None:
        facts = [
            PartitionFacts(values, parameters, len(listing.files.get(location, ())),
                           sum(entry.size for entry in listing.files.get(location, ())))
            for location, values, parameters in targets_with_parameters
        ]
        plan.statistics = hive_statistics(ctx.client, table, facts, all_partitions=not keys or total == len(targets),
                                          parallelism=ctx.parallelism)
        if ctx.aggregate is not None:
            plan.aggregate = _aggregate(ctx, file_format, plan.statistics, targets_with_parameters, listing.files)
    return plan


def _aggregate(ctx: PlanningContext, file_format: str, statistics: PlanStatistics,
               targets: list[tuple[str, tuple[tuple[str, str | None], ...], dict[str, str]]],
               files: dict[str, list[FileEntry]]) -> AggregateAnswer:
    """The aggregates per partition: Hive's verified count where ``count(*)`` is all that is asked, the
    footers of the partition's files otherwise."""
    request = ctx.aggregate
    assert request is not None
    if file_format not in ("parquet", "orc"):
        return refused(f"{file_format} files keep no row counts")
    exact = statistics.exact_rows if request.count_only else {}
    needed = [(entry.path, entry.size, entry.modification_time)
              for location, values, _ in targets if partition_key(values) not in exact
              for entry in files.get(location, ()) if entry.size > 0]
    try:
        read = dict(zip(needed, file_facts(needed, file_format, ctx.caches, ctx.config.listing_parallelism, ctx.storage)))
    except PlanningError as error:
        return refused(str(error))

    def partition(location: str, values: tuple[tuple[str, str | None], ...]) -> Callable[[], list[FileFacts]] | int:
        key = partition_key(values)
        if key in exact:
            return exact[key]
        return lambda: [read[(e.path, e.size, e.modification_time)] for e in files.get(location, ()) if e.size > 0]

    sources = "Hive statistics" if exact else f"{file_format} footers"
    return answer(request, ctx.metadata.schema, [(values, partition(location, values)) for location, values, _ in targets], sources)
