"""Reading Spark's physical plans through py4j: nodes (adaptive stages and subqueries included), scan
metrics, join strategies, the hosts an RDD's tasks prefer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["plan_nodes", "scan_metrics", "join_strategies", "executed_text", "preferred_hosts"]


def _seq(scala_seq: Any) -> list[Any]:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def plan_nodes(node: Any) -> Iterator[Any]:
    """Every node under ``node``: through adaptive plans (their final plan), query stages and subqueries."""
    name = node.getClass().getSimpleName()
    yield node
    if name == "AdaptiveSparkPlanExec":
        yield from plan_nodes(node.executedPlan())
        return
    if name.endswith("QueryStageExec"):
        yield from plan_nodes(node.plan())
        return
    if name in ("ReusedExchangeExec", "ReusedSubqueryExec"):
        yield from plan_nodes(node.child())
        return
    for child in _seq(node.children()):
        yield from plan_nodes(child)
    for subquery in _seq(node.subqueries()):
        yield from plan_nodes(subquery)


def executed_text(frame: Any) -> str:
    """The executed plan's text, with the final adaptive plan when the query ran."""
    return "\n".join(str(node.simpleString(400)) for node in plan_nodes(frame._jdf.queryExecution().executedPlan()))


def scan_metrics(frame: Any, table: str) -> dict[str, int]:
    """The SQL metrics of the scans of ``table`` (its full name in the plan) in ``frame``'s executed plan, summed.
    Run the frame first: metrics are filled by the run."""
    totals: dict[str, int] = {}
    seen: set[int] = set()
    for node in plan_nodes(frame._jdf.queryExecution().executedPlan()):
        kind = node.getClass().getSimpleName()
        if kind not in ("BatchScanExec", "FileSourceScanExec") or table not in str(node.simpleString(400)):
            continue
        if node.id() in seen:
            continue
        seen.add(node.id())
        metrics = node.metrics()
        keys = metrics.keys().iterator()
        while keys.hasNext():
            key = keys.next()
            totals[key] = totals.get(key, 0) + int(metrics.apply(key).value())
    return totals


def join_strategies(frame: Any) -> list[str]:
    """The join operators Spark's planner chose, in plan order, before adaptive execution changes them."""
    plan = frame._jdf.queryExecution().sparkPlan()
    return [node.getClass().getSimpleName() for node in plan_nodes(plan) if node.getClass().getSimpleName().endswith("JoinExec")]


def preferred_hosts(spark: Any, rdd: Any) -> set[str]:
    """The hosts the tasks of ``rdd`` (a JVM RDD) prefer, as Spark's scheduler computes them: through narrow
    dependencies, so a query's RDD gives its scans' preferences."""
    scheduler = spark.sparkContext._jsc.sc().dagScheduler()
    hosts: set[str] = set()
    for index in range(rdd.getNumPartitions()):
        hosts.update(location.host() for location in _seq(scheduler.getPreferredLocs(rdd, index)))
    return hosts
