"""SHOW SPLITS and EXPLAIN SPLITS, registered with the session through the ``hms_catalog.statements``
entry point (hms_catalog does not import the planner)."""

from __future__ import annotations

from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session, register
from hms_catalog.sql import ast
from planner.core import plan_table
from planner.plan import SplitPlan

__all__ = ["SHOW_SPLITS_COLUMNS", "EXPLAIN_COLUMNS", "explain_rows"]

SHOW_SPLITS_COLUMNS = ("path", "start", "length", "file_length", "hosts", "partition_values")
EXPLAIN_COLUMNS = ("Property", "Value")


def _plan(session: Session, name: ast.TableName, where: object) -> SplitPlan:
    table = session.table(name)
    catalog = session.manager.catalog(table.catalog)
    return plan_table(catalog, table, where, progress=session.progress)  # type: ignore[arg-type]


def _values(pairs: tuple[tuple[str, str | None], ...]) -> str:
    return "/".join(f"{k}={'NULL' if v is None else v}" for k, v in pairs)


@register(ast.ShowSplits)
def show_splits(session: Session, statement: ast.ShowSplits) -> Result:
    plan = _plan(session, statement.table, statement.where)
    rows = [
        (s.path, s.start, s.length, s.file_length, ",".join(s.hosts), _values(s.partition_values))
        for s in plan.splits
    ]
    return Result.table(SHOW_SPLITS_COLUMNS, rows)


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
    return Result.table(EXPLAIN_COLUMNS, explain_rows(_plan(session, statement.table, statement.where)))
