"""The split planner: turns a table and its predicates into a serialisable split plan.

It may import :mod:`hms_catalog`; :mod:`hms_catalog` never imports it.
"""

from __future__ import annotations

__all__: list[str] = []
