"""The split planner: turns a table and its predicates into a serialisable split plan.

It may import :mod:`hms_catalog`; :mod:`hms_catalog` never imports it (its statements reach the session
through the ``hms_catalog.statements`` entry point).

    from planner import plan_table, SplitPlan
    plan = plan_table(catalog, catalog.table("sales", "orders"), "dt >= DATE '2024-01-01'")
    text = plan.dumps(); again = SplitPlan.loads(text)
"""

from __future__ import annotations

from planner.core import plan_table
from planner.listing import BlockLocator, Blocks, LocalBlockLocator
from planner.plan import DeleteFile, PlanSummary, Split, SplitPlan
from planner.split_rule import effective_split_size, split_ranges

__all__ = [
    "BlockLocator",
    "Blocks",
    "DeleteFile",
    "LocalBlockLocator",
    "PlanSummary",
    "Split",
    "SplitPlan",
    "effective_split_size",
    "plan_table",
    "split_ranges",
]
