"""Planning Hive tables: prune partitions, list their locations, cut the files, a batch of partitions at a time.

The names of the partitions a scan reads are settled first (and a scan of too many refused, before any
partition object is asked for: :func:`~planner.partitions.choose_partitions`). The splits then come as an
iterator: each batch of partitions (the catalog's ``planner.partition.batch``) is fetched, its locations
listed and its files cut, the next batch fetched meanwhile, and its objects dropped once the next batch is
taken, so a scan of half a million partitions never holds more than two batches of them (the plan's summary
is complete once the splits are consumed; see :class:`~planner.context.FormatPlan`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from hms_catalog.errors import PlanningError, UnsupportedTableError
from hms_catalog.sql.expressions import Expression
from planner._gc import paused_gc
from planner.aggregates import AggregateAnswer, FileFacts, answer, refused
from planner.context import FormatPlan, PlanningContext, Progress
from planner.footers import file_facts
from planner.listing import FileEntry, SharedRoot, list_locations
from planner.partitions import PartitionChoice, choose_partitions, partition_batches
from planner.plan import Split
from planner.predicates import bind
from planner.splitter import cut_file
from planner.statistics import PartitionFacts, PlanStatistics, hive_statistics, partition_key

__all__ = ["plan_hive"]

Values = tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class _Target:
    """A location to read: its partition values and the parameters the metastore keeps on it."""

    location: str
    values: Values
    parameters: dict[str, str] = field(hash=False)


@dataclass
class _Kept:
    """What statistics and aggregates need of every partition read: facts per partition (small), and for
    aggregates, which must read the footers of every file, the files themselves."""

    facts: list[PartitionFacts] = field(default_factory=list)
    targets: list[_Target] = field(default_factory=list)
    files: dict[str, list[FileEntry]] = field(default_factory=dict)


def plan_hive(ctx: PlanningContext, where: Expression | None) -> FormatPlan:
    """The plan of a Hive table, its splits an iterator (see the module's docstring).

    Statistics and aggregates (when asked for) cannot stream: they are answered over every partition read,
    so the facts of each partition (its values, parameters, file count and size) are kept as the batches go,
    and for aggregates the listing of every file too; the statistics' own calls are made once the last batch
    is cut."""
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
    keys = [k.name.lower() for k in table.partitionKeys or []]
    if not keys:
        if not detection.location:
            raise PlanningError(f"{name} has no location")
        plan = FormatPlan([], 0, 0)
        plan.splits = _splits(ctx, plan, None, iter([[_Target(detection.location, (), dict(table.parameters or {}))]]),
                              None, 1)
        return plan
    schema = metadata.schema
    predicate = bind(where, {key: schema.column(key).type for key in keys})
    with paused_gc():  # a filter's thousands of partition objects decoded and cached: see planner._gc
        choice = choose_partitions(ctx.client, ctx.caches, table, predicate, max_partitions=ctx.config.max_partitions,
                                   parallelism=ctx.parallelism)
    plan = FormatPlan([], 0, 0, partitions_total=choice.total, hms_seconds=choice.seconds, notes=choice.notes)
    wanted = len(choice.kept)
    shared = None
    if detection.location and (choice.total is None or 2 * wanted >= choice.total):
        # most of the partitions wanted: one listing of the table's root on an object store answers them all
        root = detection.location.rstrip("/")
        shared = SharedRoot(detection.location, (f"{root}/{partition}" for partition in choice.kept))
    batches = ([_Target(p.location, p.values, p.parameters) for p in batch if p.location]
               for batch in partition_batches(choice, ctx.config.partition_batch))
    plan.splits = _splits(ctx, plan, choice, batches, shared, wanted)
    return plan


def _splits(ctx: PlanningContext, plan: FormatPlan, choice: PartitionChoice | None, batches: Iterable[list[_Target]],
            shared: SharedRoot | None, wanted: int) -> Iterator[Split]:
    """The splits of each batch in turn, ``plan``'s counts kept up to date as they go; the statistics and the
    aggregate last."""
    metadata = ctx.metadata
    table = metadata.table
    name = f"{table.dbName}.{table.tableName}"
    database, table_name = table.dbName.lower(), table.tableName.lower()
    file_format = metadata.detection.file_format or "parquet"
    keep = _Kept() if ctx.statistics or ctx.aggregate is not None else None
    progress = ctx.progress
    listed = 0
    absent_example = None
    remaining = iter(batches)
    # One set of listing threads for every batch of the plan (see planner._parallel.run_all), let go when the plan
    # ends or is closed early.
    workers = ThreadPoolExecutor(max_workers=ctx.config.listing_parallelism, thread_name_prefix="hms-catalog-listing")
    try:
        while True:
            # Each batch's partitions taken (next() waits for the fetch partition_batches began while the batch before
            # was listed), listed and cut with the collector paused (see planner._gc); its splits are handed on after the
            # pause, so the stream's consumer never runs inside one.
            with paused_gc():
                targets = next(remaining, None)
                if targets is None:
                    break
                if choice is not None:
                    plan.hms_seconds = choice.seconds
                if not targets:
                    continue
                listing = list_locations(
                    [((database, table_name, t.location), t.location) for t in targets],
                    ctx.caches,
                    storage=ctx.storage,
                    recursive=ctx.config.recursive,
                    block_size=ctx.config.block_size,
                    locator=ctx.locator,
                    parallelism=ctx.config.listing_parallelism,
                    progress=_listing_progress(progress, listed, wanted),
                    shared_root=shared,
                    keep=wanted <= ctx.caches.files.capacity,  # a larger scan would only flush the listing cache
                    workers=workers,
                )
                listed += len(targets)
                plan.listing_seconds += listing.seconds
                if listing.absent and not ctx.config.ignore_absent:
                    raise PlanningError(
                        f"{name}: {len(listing.absent)} location(s) do not exist, e.g. {listing.absent[0]} "
                        "(set 'hive.ignore_absent_partitions'='true' to skip them)"
                    )
                plan.absent_locations += len(listing.absent)
                absent_example = absent_example or (listing.absent[0] if listing.absent else None)
                if choice is not None:
                    plan.partitions_scanned += len(targets)
                started = time.perf_counter()
                splits: list[Split] = []
                for target in targets:
                    for entry in listing.files.get(target.location, ()):
                        plan.files += 1
                        plan.bytes += entry.size
                        splits.extend(cut_file(entry, ctx.config, file_format=file_format, partition_values=target.values))
                plan.splitting_seconds += time.perf_counter() - started
                if keep is not None:
                    _keep(keep, targets, listing.files, ctx.aggregate is not None)
                del listing, targets
            yield from splits
    finally:
        workers.shutdown(wait=False, cancel_futures=True)
    if choice is not None:
        plan.hms_seconds = choice.seconds
    if plan.absent_locations:
        plan.notes.append(f"{plan.absent_locations} absent location(s) skipped, e.g. {absent_example}")
    if keep is not None:
        plan.statistics = hive_statistics(ctx.client, table, keep.facts,
                                          all_partitions=choice is None or choice.total == plan.partitions_scanned,
                                          parallelism=ctx.parallelism)
        if ctx.aggregate is not None:
            plan.aggregate = _aggregate(ctx, file_format, plan.statistics, keep.targets, keep.files)


def _listing_progress(progress: Progress | None, offset: int, wanted: int) -> Callable[[int, int], None] | None:
    """A batch's listing progress as the whole plan's: ``offset`` locations listed before it, of ``wanted``."""
    if progress is None:
        return None
    report = progress
    return lambda done, _count: report("listing", offset + done, wanted)


def _keep(keep: _Kept, targets: list[_Target], files: dict[str, list[FileEntry]], aggregate: bool) -> None:
    for target in targets:
        found = files.get(target.location, ())
        keep.facts.append(PartitionFacts(target.values, target.parameters, len(found), sum(entry.size for entry in found)))
        if aggregate:
            keep.targets.append(target)
            if target.location in files:
                keep.files[target.location] = files[target.location]


def _aggregate(ctx: PlanningContext, file_format: str, statistics: PlanStatistics, targets: list[_Target],
               files: dict[str, list[FileEntry]]) -> AggregateAnswer:
    """The aggregates per partition: Hive's verified count where ``count(*)`` is all that is asked, the
    footers of the partition's files otherwise."""
    request = ctx.aggregate
    assert request is not None
    if file_format not in ("parquet", "orc"):
        return refused(f"{file_format} files keep no row counts")
    exact = statistics.exact_rows if request.count_only else {}
    needed = [(entry.path, entry.size, entry.modification_time)
              for target in targets if partition_key(target.values) not in exact
              for entry in files.get(target.location, ()) if entry.size > 0]
    try:
        read = dict(zip(needed, file_facts(needed, file_format, ctx.caches, ctx.config.listing_parallelism, ctx.storage)))
    except PlanningError as error:
        return refused(str(error))

    def partition(location: str, values: Values) -> Callable[[], list[FileFacts]] | int:
        key = partition_key(values)
        if key in exact:
            return exact[key]
        return lambda: [read[(e.path, e.size, e.modification_time)] for e in files.get(location, ()) if e.size > 0]

    sources = "Hive statistics" if exact else f"{file_format} footers"
    return answer(request, ctx.metadata.schema, [(t.values, partition(t.location, t.values)) for t in targets], sources)
