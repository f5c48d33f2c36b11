"""Work on threads ending at the first failure (pure logic: the store is played by events; the real store's
case is tests/storage/test_timeouts.py): the error comes while other work is still in flight, queued work
never starts, and the work in flight is told to stop."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from planner._parallel import run_all


def test_results_keep_the_items_order_and_each_is_reported() -> None:
    seen: list[int] = []
    assert run_all(lambda item, _: item * 10, [3, 1, 2], 3, seen.append) == [30, 10, 20]
    assert sorted(seen) == [10, 20, 30]


@pytest.mark.parametrize("kept", [False, True], ids=["own threads", "the caller's threads"])
def test_the_first_error_comes_without_waiting_for_the_work_in_flight(kept: bool) -> None:
    hanging = threading.Event()  # the call in flight: released only after the error reached the caller
    started: list[int] = []
    stopped = threading.Event()

    def work(item: int, stop: threading.Event) -> int:
        started.append(item)
        if item == 0:
            hanging.wait(10)
            if stop.is_set():
                stopped.set()
        elif item == 1:
            raise OSError("refused")
        else:  # the next item the other thread takes: it waits for the stop, by which time the rest is cancelled
            stop.wait(10)
        return item

    workers = ThreadPoolExecutor(max_workers=2) if kept else None
    try:
        with pytest.raises(OSError, match="refused"):
            run_all(work, list(range(10)), 2, workers=workers)
        assert not hanging.is_set()  # raised while item 0 was still in flight
    finally:
        hanging.set()
    assert stopped.wait(5)  # the work in flight saw the stop
    assert {0, 1} <= set(started) <= {0, 1, 2}  # nothing queued started once the failure was seen
    if workers is not None:  # the caller's threads serve its next call
        assert run_all(lambda item, _: item + 1, [1, 2, 3], 2, workers=workers) == [2, 3, 4]
        assert {0, 1} <= set(started) <= {0, 1, 2}
        workers.shutdown(wait=True)


def test_the_callers_threads_serve_every_call() -> None:
    workers = ThreadPoolExecutor(max_workers=2)
    names = set()

    def work(item: int, _: threading.Event) -> int:
        names.add(threading.current_thread().name)
        return item

    try:
        for _ in range(5):
            assert run_all(work, list(range(8)), 2, workers=workers) == list(range(8))
    finally:
        workers.shutdown(wait=True)
    assert len(names) <= 2
