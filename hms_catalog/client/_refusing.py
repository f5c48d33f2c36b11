"""Calls a caller asks a pool not to make: answering from the caches alone while a metastore is known down.

A caller that knows a metastore is down (the thrift endpoint, for a federated catalog) still wants what the
catalog's caches hold, and wants what they lack to fail at once rather than after every retry and socket
timeout. The refusal is a context variable, not pool state, because it is that caller's choice for its own
block: the calls made within it (in its thread, and in the batches it hands to ``in_batches``, which run in
copies of its context) fail fast, while every other user of the same pool (the REST API, the event follower,
a statement) keeps reaching the metastore with its retries.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from types import TracebackType

__all__ = ["Refusing", "refusal"]

# (id of the pool, why) for each pool refused in the current context; a tuple, so a value is never shared mutably
_REFUSED: ContextVar[tuple[tuple[int, str], ...]] = ContextVar("hms_catalog_refused_pools", default=())


class Refusing:
    """The ``with`` block of :meth:`HmsClientPool.refusing`.

    A class rather than ``@contextmanager`` for the reason :class:`hms_catalog.client.pool._Loan` gives:
    contextlib sets ``__traceback__`` on an exception leaving the block, which the generated thrift exceptions
    (a forwarded call's NoSuchObjectException) refuse.
    """

    def __init__(self, pool: int, reason: str) -> None:
        self._pool = pool
        self._reason = reason
        self._token: Token[tuple[tuple[int, str], ...]] | None = None

    def __enter__(self) -> None:
        self._token = _REFUSED.set((*_REFUSED.get(), (self._pool, self._reason)))

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if self._token is not None:
            token, self._token = self._token, None
            _REFUSED.reset(token)


def refusal(pool: int) -> str | None:
    """Why calls of pool ``pool`` (its id) are refused in the current context, or None."""
    for refused, reason in reversed(_REFUSED.get()):
        if refused == pool:
            return reason
    return None
