"""Planning a table: dispatch on its format, then assemble the plan and its summary."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

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
from planner.plan import PlanSummary, SplitPlan

__all__ = ["plan_table"]

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
    the reason they cannot be.
    """
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
    if aggregate is not None and result.aggregate is None:
        result.aggregate = refused(f"{detection.format.value} tables keep no exact aggregates")
    hosts: Counter[str] = Counter()
    for split in result.splits:
        hosts.update(split.hosts)
    total = result.partitions_total
    summary = PlanSummary(
        files=result.files,
        bytes=result.bytes,
        splits=len(result.splits),
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
    schema = metadata.schema
    return SplitPlan(
        catalog=table.catalog,
        database=table.database,
        table=table.name,
        table_format=detection.format.value,
        file_format=detection.file_format or "",
        schema=schema,
        splits=tuple(result.splits),
        summary=summary,
        predicate=None if expression is None else to_sql(expression),
        options={"planning_seconds": round(time.perf_counter() - started, 6), "hudi_query": detection.hudi_query},
        text=detection.text,
        statistics=result.statistics,
        aggregate=result.aggregate if aggregate is not None else None,
        partition_fields=result.partition_fields,
    )
