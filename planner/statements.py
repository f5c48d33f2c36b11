"""SHOW SPLITS, EXPLAIN SPLITS and SHOW PARTITIONS, registered with the session through the ``hms_catalog.statements``
entry point (hms_catalog does not import the planner)."""

from __future__ import annotations

from hms_catalog.errors import ConfigurationError
from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session, register
from hms_catalog.sql import ast, ast_ddl
from hms_catalog.sql.expressions import And, ColumnRef, Comparison, Expression, IsNull, Literal
from planner.core import plan_table_stream
from planner.partitions import select_partition_names
from planner.plan import Split, SplitPlan
from planner.predicates import bind
from planner.streaming import PlanStream

__all__ = ["SHOW_SPLITS_COLUMNS", "SHOW_PARTITIONS_COLUMNS", "EXPLAIN_COLUMNS", "explain_rows"]

SHOW_SPLITS_COLUMNS = ("path", "start", "length", "file_length", "hosts", "partition_values")
EXPLAIN_COLUMNS = ("Property", "Value")
SHOW_PARTITIONS_COLUMNS = ("Partition",)


def _plan(session: Session, name: ast.TableName, where: object) -> PlanStream:
    table = session.table(name)
    catalog = session.manager.catalog(table.catalog)
    return plan_table_stream(catalog, table, where, progress=session.progress)  # type: ignore[arg-type]


def _values(pairs: tuple[tuple[str, str | None], ...]) -> str:
    return "/".join(f"{k}={'NULL' if v is None else v}" for k, v in pairs)


def _row(split: Split) -> tuple[object, ...]:
    return (split.path, split.start, split.length, split.file_length, ",".join(split.hosts), _values(split.partition_values))


@register(ast.ShowSplits)
def show_splits(session: Session, statement: ast.ShowSplits) -> Result:
    """A row per split; to a session that takes streamed rows (the CLI), the rows as the splits are cut."""
    stream = _plan(session, statement.table, statement.where)
    if session.stream_rows:
        return Result.streamed(SHOW_SPLITS_COLUMNS, (_row(split) for split in stream))
    return Result.table(SHOW_SPLITS_COLUMNS, [_row(split) for split in stream])


def explain_rows(plan: SplitPlan) -> list[tuple[str, object]]:
    summary = plan.summary
    rows: list[tuple[str, object]] = [
        ("table", plan.full_name),
        ("format", plan.table_format),
        ("file_format", plan.file_format),
        ("predicate", plan.predicate or ""),
        ("files", summary.files),
        ("bytes", summary.bytes),
        ("splits", summary.splits),
        ("partitions_total", summary.partitions_total),
        ("partitions_scanned", summary.partitions_scanned),
        ("partitions_pruned", summary.partitions_pruned),
        ("absent_locations", summary.absent_locations),
        ("hosts", ", ".join(f"{host}:{count}" for host, count in summary.hosts.items())),
        ("metastore_calls", ", ".join(f"{m}:{c}" for m, c in sorted(summary.metastore_calls.items())) or "none"),
        ("hms_seconds", summary.hms_seconds),
        ("listing_seconds", summary.listing_seconds),
        ("splitting_seconds", summary.splitting_seconds),
    ]
    rows += [("note", note) for note in summary.notes]
    return rows


@register(ast.ExplainSplits)
def explain_splits(session: Session, statement: ast.ExplainSplits) -> Result:
    """The summary alone: the splits are counted as they are cut, never held."""
    return Result.table(EXPLAIN_COLUMNS, explain_rows(_plan(session, statement.table, statement.where).finished()))


@register(ast_ddl.ShowPartitions)
def show_partitions(session: Session, statement: ast_ddl.ShowPartitions) -> Result:
    """One row per partition, ``k=v/k2=v2`` as the metastore names it, pruned by ``PARTITION (..)`` and ``WHERE``
    as the planner prunes, on names only: a partition object is never asked for (a million of them took 167 s and
    4 GB to print their names; docs/measurements.md)."""
    table = session.table(statement.table)
    catalog = session.manager.catalog(table.catalog)
    struct = table.metadata.table
    keys = [k.name.lower() for k in struct.partitionKeys or []]
    if not keys:
        raise ConfigurationError(f"table '{table.full_name}' is not partitioned")
    unknown = [key for key, _ in statement.partition if key.lower() not in keys]
    if unknown:  # as Spark refuses it (PARTITIONS_NOT_FOUND), rather than list partitions the spec does not narrow
        raise ConfigurationError(f"SHOW PARTITIONS .. PARTITION ({', '.join(unknown)} ..): {', '.join(repr(k) for k in unknown)} "
                                 f"{'is not a partition column' if len(unknown) == 1 else 'are not partition columns'} of "
                                 f"table '{table.full_name}' (its partition columns: {', '.join(keys)})")
    where = statement.where
    for key, value in statement.partition:
        pinned: Expression = IsNull(ColumnRef(key)) if value is None else Comparison("=", ColumnRef(key), Literal(value))
        where = pinned if where is None else And(where, pinned)
    schema = table.metadata.schema
    predicate = bind(where, {key: schema.column(key).type for key in keys})
    names = select_partition_names(catalog.client, catalog.caches, struct, predicate)
    return Result.table(SHOW_PARTITIONS_COLUMNS, [(name,) for name in sorted(names)])
