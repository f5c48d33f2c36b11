"""What a query did in Spark, read after it ran: its scans' SQL metrics, runtime filters and tasks.

The executed plan is read through py4j (``df._jdf.queryExecution().executedPlan()``). With adaptive query
execution the final plan is under ``AdaptiveSparkPlanExec.executedPlan()`` and the query stages hold their
plans in ``plan()``; subqueries (scalar ones, and the broadcasts that feed dynamic partition pruning) are
walked too. A node reached twice (a reused exchange or subquery) is counted once, by its plan id (a query
stage's ``id`` is its stage number instead, repeated across plans, so stages are never taken as seen). When AQE
finds a side of a join empty it replaces that part of the plan by ``EmptyRelationExec``, whose logical plan still
holds the query stages that ran before: their scans are read from there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Scan", "scans", "tasks_of_group", "wait_for_listeners"]

# A scan's partition filter or runtime filter from dynamic partition pruning; "(true)" is one Spark planned and
# then dropped (not worth it), which prunes nothing.
_RUNTIME_FILTER = re.compile(r"dynamicpruningexpression\((?!true\))")


@dataclass
class Scan:
    """One scan node of an executed plan: its name (``Scan parquet spark_catalog.tpcds.store_sales``,
    ``BatchScan tpcds.tpcds.store_sales``), whether a runtime filter applied to it, and its SQL metrics."""

    node: str
    runtime_filtered: bool
    metrics: dict[str, int] = field(default_factory=dict)


def _seq(scala_seq: Any) -> list[Any]:
    return [scala_seq.apply(index) for index in range(scala_seq.size())]


def _inner(node: Any, kind: str) -> list[Any]:
    """The plans under ``node``, AQE's wrappers and reuse included."""
    if kind == "AdaptiveSparkPlanExec":
        return [node.executedPlan()]
    if kind.endswith("QueryStageExec"):
        return [node.plan()]
    if kind in ("ReusedExchangeExec", "ReusedSubqueryExec"):
        return [node.child()]
    if kind == "EmptyRelationExec":
        return _stages_of(node.logical())
    return _seq(node.children()) + _seq(node.subqueries())


def _stages_of(logical: Any) -> list[Any]:
    """The physical query stages a logical plan of AQE's holds (``LogicalQueryStage.physicalPlan``)."""
    found, pending = [], [logical]
    while pending:
        plan = pending.pop()
        if plan.getClass().getSimpleName() == "LogicalQueryStage":
            found.append(plan.physicalPlan())
        else:
            pending.extend(_seq(plan.children()))
    return found


def _metrics(node: Any) -> dict[str, int]:
    found = {}
    names = node.metrics().keys().iterator()
    while names.hasNext():
        name = names.next()
        found[name] = int(node.metrics().apply(name).value())
    return found


def scans(plan: Any) -> list[Scan]:
    """Every scan of an executed plan (``FileSourceScanExec``, ``BatchScanExec``, ``HiveTableScanExec``, ...)."""
    found: list[Scan] = []
    seen: set[int] = set()
    pending = [plan]
    while pending:
        node = pending.pop()
        if node is None:
            continue
        kind = node.getClass().getSimpleName()
        if not kind.endswith("QueryStageExec"):
            identity = int(node.id())
            if identity in seen:
                continue
            seen.add(identity)
        if kind.endswith("ScanExec") and kind != "LocalTableScanExec":
            expressions = " ".join(expression.toString() for expression in _seq(node.expressions()))
            found.append(Scan(str(node.nodeName()), bool(_RUNTIME_FILTER.search(expressions)), _metrics(node)))
        pending.extend(reversed(_inner(node, kind)))
    return found


def wait_for_listeners(spark: Any, timeout_ms: int = 10_000) -> None:
    """Let Spark's listener bus deliver the events of what just ran, so its status tracker knows every stage."""
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(timeout_ms)


def tasks_of_group(spark: Any, group: str) -> int:
    """The tasks the jobs of a job group ran (completed tasks of their stages; skipped stages ran none)."""
    tracker = spark.sparkContext.statusTracker()
    total = 0
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        for stage in info.stageIds if info is not None else ():
            stage_info = tracker.getStageInfo(stage)
            if stage_info is not None:
                total += stage_info.numCompletedTasks
    return total
