"""A value loaded on first use, once, however many threads ask at the same moment."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Lazy"]

T = TypeVar("T")


class Lazy(Generic[T]):
    """Holds what ``loader`` returns, loading it on the first :meth:`get` behind a lock.

    A failed load stores nothing, so the next :meth:`get` tries again. :meth:`reset` takes the same
    lock, so a reset that returns has also waited out a load in flight: no caller can see a value
    loaded before the reset once it has returned.
    """

    _UNSET = object()

    def __init__(self, loader: Callable[[], T]) -> None:
        self._loader = loader
        self._lock = threading.Lock()
        self._value: object = Lazy._UNSET

    @property
    def loaded(self) -> bool:
        return self._value is not Lazy._UNSET

    def get(self) -> T:
        value = self._value
        if value is Lazy._UNSET:
            with self._lock:
                value = self._value
                if value is Lazy._UNSET:
                    value = self._loader()
                    self._value = value
        return value  # type: ignore[return-value]

    def reset(self) -> None:
        with self._lock:
            self._value = Lazy._UNSET
