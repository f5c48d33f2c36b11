"""The split planner: turns a table and its predicates into a serialisable split plan.

It may import :mod:`hms_catalog`; :mod:`hms_catalog` never imports it (its statements reach the session
through the ``hms_catalog.statements`` entry point).

    from planner import plan_table, SplitPlan
    plan = plan_table(catalog, catalog.table("sales", "orders"), "dt >= DATE '2024-01-01'")
    text = plan.dumps(); again = SplitPlan.loads(text)

A plan of many partitions is better streamed: ``plan_table_stream`` hands its splits on as they are cut, with
the summary after them, and ``plan_json_pieces`` writes its JSON text (the same text) as they come.
"""

from __future__ import annotations

from planner.core import plan_table, plan_table_stream
from planner.listing import BlockLocator, Blocks, LocalBlockLocator
from planner.plan import DeleteFile, PlanSummary, Split, SplitPlan
from planner.plan_json import PlanReader, fetch_plan, plan_json_pieces
from planner.split_rule import effective_split_size, split_ranges
from planner.streaming import PlanStream

__all__ = [
    "BlockLocator",
    "Blocks",
    "DeleteFile",
    "LocalBlockLocator",
    "PlanReader",
    "PlanStream",
    "PlanSummary",
    "Split",
    "SplitPlan",
    "effective_split_size",
    "fetch_plan",
    "plan_json_pieces",
    "plan_table",
    "plan_table_stream",
    "split_ranges",
]
