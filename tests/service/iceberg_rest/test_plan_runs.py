"""A plan's run: a cancel stops work that checks, and a new start after a cancel or a failure plans again."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from service.iceberg_rest.plan_ids import PlanKey
from service.iceberg_rest.plan_runs import PlanCancelled, PlanRuns
from service.iceberg_rest.scans import Planned

KEY = PlanKey.of("s3://bucket/t/metadata/00001.metadata.json", {})
DONE = Planned((), {})


@pytest.fixture
def runs() -> Iterator[PlanRuns]:
    pool = ThreadPoolExecutor(2)
    yield PlanRuns(pool)
    pool.shutdown(wait=True)


def test_a_cancel_stops_work_at_its_next_check(runs: PlanRuns) -> None:
    started, checks = threading.Event(), []

    def work(check: Callable[[], None]) -> Planned:
        started.set()
        while True:  # a planning loop with no end of its own
            check()
            checks.append(1)

    run = runs.start(KEY, work)
    assert started.wait(10) and run.outcome(0) is None
    runs.cancel(KEY)
    assert run.future is not None
    with pytest.raises(PlanCancelled):
        run.future.result(timeout=10)  # the work itself stopped
    with pytest.raises(PlanCancelled):
        run.outcome(0)
    assert runs.find(KEY) is run


def test_a_start_after_a_cancel_or_a_failure_plans_again(runs: PlanRuns) -> None:
    runs.cancel(KEY)  # a plan never run here is remembered as cancelled
    found = runs.find(KEY)
    assert found is not None and found.future is None
    failing = runs.start(KEY, lambda check: (_ for _ in ()).throw(ValueError("bad")))
    with pytest.raises(ValueError, match="bad"):
        failing.outcome(10)
    again = runs.start(KEY, lambda check: DONE)
    assert again is not failing and again.outcome(10) is DONE
    assert runs.start(KEY, lambda check: DONE) is again  # done: kept
