"""Work on threads ending at the first failure (pure logic: the store is played by events; the real store's
case is tests/storage/test_timeouts.py): the error comes while other work is still in flight, queued work
never starts, and the work in flight is told to stop."""

from __future__ import annotations

import threading

import pytest

from planner._parallel import run_all


def test_results_keep_the_items_order_and_each_is_reported() -> None:
    seen: list[int] = []
    assert run_all(lambda item, _: item * 10, [3, 1, 2], 3, seen.append) == [30, 10, 20]
    assert sorted(seen) == [10, 20, 30]


def test_the_first_error_comes_without_waiting_for_the_work_in_flight() -> None:
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

    try:
        with pytest.raises(OSError, match="refused"):
            run_all(work, list(range(10)), 2)
        assert not hanging.is_set()  # raised while item 0 was still in flight
    finally:
        hanging.set()
    assert stopped.wait(5)  # the work in flight saw the stop
    assert {0, 1} <= set(started) <= {0, 1, 2}  # nothing queued started once the failure was seen
