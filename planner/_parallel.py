"""Work on threads that ends at the first failure.

``ThreadPoolExecutor.map`` inside ``with`` raises only once every queued item has run: the executor's exit
waits for them all. Against a store that does not answer, each queued listing then waits out the store's
request timeout in turn, and a plan of many locations failed after several timeouts instead of one. Here
the first error cancels what has not started, tells the work under way to stop before its next unit
(``stop``), and is raised without waiting for the calls in flight: each of those ends by itself within the
store's request timeout, and there are never more of them than threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import TypeVar

__all__ = ["run_all"]

T = TypeVar("T")
R = TypeVar("R")


def run_all(function: Callable[[T, threading.Event], R], items: Sequence[T], threads: int,
            done: Callable[[R], None] | None = None, *, workers: ThreadPoolExecutor | None = None) -> list[R]:
    """``function(item, stop)`` for each item on up to ``threads`` threads; the results in the items' order.

    ``done`` is called in the caller's thread with each result as it comes (progress). The first error is
    raised at once: ``stop`` is set for the work under way, which should check it between its units.
    ``workers``: threads the caller keeps for many such calls (a plan's batches), instead of new ones for this
    call: starting eight threads for each batch was a tenth of a plan's main-thread samples (py-spy, 30,000
    partitions on a busy machine)."""
    stop = threading.Event()
    owned = workers is None
    pool = ThreadPoolExecutor(max_workers=max(1, min(threads, len(items)))) if workers is None else workers
    futures: dict[Future[R], int] = {}
    results: dict[int, R] = {}
    try:
        for index, item in enumerate(items):
            futures[pool.submit(function, item, stop)] = index
        for future in as_completed(futures):
            result = future.result()
            results[futures[future]] = result
            if done is not None:
                done(result)
    except BaseException:
        # first: no queued item starts once stop is seen
        if owned:
            pool.shutdown(wait=False, cancel_futures=True)
        else:
            for future in futures:
                future.cancel()
        stop.set()
        raise
    if owned:
        pool.shutdown(wait=True)
    return [results[index] for index in range(len(items))]
