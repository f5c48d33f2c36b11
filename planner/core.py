"""Planning a table: dispatch on its format, then assemble the plan and its summary, whole or as a stream."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace

from hms_catalog.errors import UnsupportedTableError
from hms_catalog.formats import TableFormat
from hms_catalog.model import ExternalCatalog, ExternalTable
from hms_catalog.sql import parse_expression, to_sql
from hms_catalog.sql.expressions import Expression
from planner.aggregates import AggregateRequest, refused
from planner.context import FormatPlan, PlanningContext, Progress
from planner.hadoop_blocks import StorageBlockLocator
from planner.hive_planner import plan_hive
from planner.hudi_planner import plan_hudi
from planner.iceberg_planner import plan_iceberg
from planner.listing import BlockLocator
from planner.plan import PlanSummary, Split, SplitPlan
from planner.streaming import PlanStream

__all__ = ["plan_table", "plan_table_stream"]

_PLANNERS: dict[TableFormat, Callable[[PlanningContext, Expression | None], FormatPlan]] = {
    TableFormat.HIVE: plan_hive,
    TableFormat.ICEBERG: plan_iceberg,
    TableFormat.HUDI: plan_hudi,
}


def plan_table(
    catalog: ExternalCatalog,
    table: ExternalTable,
    where: Expression | str | None = None,
    *,
    locator: BlockLocator | None = None,
    progress: Progress | None = None,
    statistics: bool = False,
    aggregate: AggregateRequest | None = None,
) -> SplitPlan:
    """The split plan of ``table`` (a table of ``catalog``) for rows matching ``where``.

    ``where`` prunes partitions (and, for Iceberg, files by their metrics); the reader still applies it
    to rows. Raises UnsupportedTableError with the detection's reason for a table that cannot be read.
    With ``statistics`` the plan carries the row counts and column statistics the table keeps (for an
    engine's optimizer); with ``aggregate``, those aggregates answered per partition from metadata, or
    the reason they cannot be. Every split is held: :func:`plan_table_stream` hands them on instead.
    """
    return plan_table_stream(catalog, table, where, locator=locator, progress=progress, statistics=statistics,
                             aggregate=aggregate).collect()


def plan_table_stream(
    catalog: ExternalCatalog,
    table: ExternalTable,
    where: Expression | str | None = None,
    *,
    locator: BlockLocator | None = None,
    progress: Progress | None = None,
    statistics: bool = False,
    aggregate: AggregateRequest | None = None,
) -> PlanStream:
    """The plan of :func:`plan_table` as a stream: which partitions are read is settled (and a scan of too many
    refused) before this returns; the splits are cut as they are read, and the summary is known after."""
    expression = parse_expression(where) if isinstance(where, str) else where
    before = catalog.metrics()
    started = time.perf_counter()
    metadata = table.metadata
    detection = metadata.detection
    if not detection.readable:
        raise UnsupportedTableError(f"{table.full_name} cannot be read: {detection.reason}")
    context = PlanningContext(
        client=catalog.client,
        caches=catalog.caches,
        config=catalog.config.scan,
        metadata=metadata,
        locator=locator or StorageBlockLocator(catalog.storage),
        io_properties=dict(catalog.io_properties),
        storage=catalog.storage,
        parallelism=catalog.config.client.pool_size,
        progress=progress,
        statistics=statistics,
        aggregate=aggregate,
    )
    result = _PLANNERS[detection.format](context, expression)
    header = SplitPlan(
        catalog=table.catalog,
        database=table.database,
        table=table.name,
        table_format=detection.format.value,
        file_format=detection.file_format or "",
        schema=metadata.schema,
        splits=(),
        summary=PlanSummary(),
        predicate=None if expression is None else to_sql(expression),
        text=detection.text,
        partition_fields=result.partition_fields,
    )
    hosts: Counter[str] = Counter()
    count = 0

    def splits() -> Iterator[Split]:
        nonlocal count
        for split in result.splits:
            count += 1
            hosts.update(split.hosts)
            yield split

    def finish() -> SplitPlan:
        if aggregate is not None and result.aggregate is None:
            result.aggregate = refused(f"{detection.format.value} tables keep no exact aggregates")
        total = result.partitions_total
        summary = PlanSummary(
            files=result.files,
            bytes=result.bytes,
            splits=count,
            partitions_total=total,
            partitions_scanned=result.partitions_scanned,
            partitions_pruned=(total - result.partitions_scanned) if total is not None else 0,
            absent_locations=result.absent_locations,
            hosts=dict(sorted(hosts.items())),
            metastore_calls=catalog.metrics().calls_since(before),
            hms_seconds=round(result.hms_seconds, 6),
            listing_seconds=round(result.listing_seconds, 6),
            splitting_seconds=round(result.splitting_seconds, 6),
            notes=tuple(result.notes),
        )
        return replace(
            header,
            summary=summary,
            options={"planning_seconds": round(time.perf_counter() - started, 6), "hudi_query": detection.hudi_query},
            statistics=result.statistics,
            aggregate=result.aggregate if aggregate is not None else None,
        )

    return PlanStream(header, splits(), finish)
