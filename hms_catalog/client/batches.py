"""Asking the metastore for many objects: in batches, the batches in parallel on the pool."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["in_batches"]

T = TypeVar("T")
R = TypeVar("R")


def in_batches(call: Callable[[list[T]], R], items: Sequence[T], batch_size: int, parallelism: int) -> list[tuple[list[T], R]]:
    """``call`` on each batch of ``items`` (on up to ``parallelism`` threads), paired with its batch, in order.

    Each batch runs in a copy of the caller's context, as it would in the caller's thread: a pool's refusal
    (:meth:`HmsClientPool.refusing`) holds for the batches too."""
    batches = [list(items[start : start + batch_size]) for start in range(0, len(items), batch_size)]
    if len(batches) > 1 and parallelism > 1:
        contexts = [contextvars.copy_context() for _ in batches]  # one each: a context is entered by one thread at a time
        with ThreadPoolExecutor(max_workers=min(parallelism, len(batches))) as workers:
            return list(zip(batches, workers.map(lambda context, batch: context.run(call, batch), contexts, batches)))
    return [(batch, call(batch)) for batch in batches]
