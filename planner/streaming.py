"""A split plan whose splits come as an iterator, its summary known once they have all come.

A plan of half a million partitions has as many splits: held whole, with its JSON text on top, it took
gigabytes. :class:`PlanStream` hands the splits on as the planner cuts them (a batch of partitions at a time,
see :mod:`planner.hive_planner`), so a writer can send each on and forget it; the summary (counts, seconds,
notes, metastore calls) and the statistics come after the last. :meth:`PlanStream.collect` is the whole
:class:`~planner.plan.SplitPlan`, for callers that want it all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from planner.plan import Split, SplitPlan

__all__ = ["PlanStream"]


class PlanStream:
    """``header``: the plan without its splits and with an empty summary (identity, format, schema,
    predicate: all known before the first split). Iterating gives the splits, once; :meth:`finished` gives
    the plan's summary and the rest once they are consumed (draining what is left, unkept)."""

    def __init__(self, header: SplitPlan, splits: Iterator[Split], finish: Callable[[], SplitPlan]) -> None:
        self.header = header
        self._splits = splits
        self._finish = finish
        self._started = False
        self._done: SplitPlan | None = None
        self._options: dict[str, Any] = {}

    def __iter__(self) -> Iterator[Split]:
        if self._started:
            raise RuntimeError(f"the splits of the plan of {self.header.full_name} were already read")
        self._started = True
        return self._splits

    def with_options(self, **options: Any) -> PlanStream:
        """Options the plan carries besides the planner's (the columns a reader asked for); returns self."""
        self._options.update(options)
        return self

    def finished(self) -> SplitPlan:
        """The plan without its splits and with its summary, statistics and aggregate; the splits not yet read
        are read and dropped (EXPLAIN SPLITS wants only the summary)."""
        if self._done is None:
            for _ in self if not self._started else self._splits:
                pass
            done = self._finish()
            self._done = replace(done, options={**done.options, **self._options}) if self._options else done
        return self._done

    def collect(self) -> SplitPlan:
        """The whole plan, every split held."""
        splits = tuple(self)
        return replace(self.finished(), splits=splits)
