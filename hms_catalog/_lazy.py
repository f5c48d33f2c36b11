"""A value loaded on first use, once, however many threads ask at the same moment; a module imported on first use."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Lazy", "LazyModule"]

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


class LazyModule:
    """A module imported on its first attribute access, so that importing a module of ours that only sometimes
    needs a heavy library (pyspark, pyiceberg, pyarrow: about a second of the CLI's start together) costs nothing
    until a statement uses it. Python's import lock makes the first access safe from any thread."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> object:
        module = importlib.import_module(self._name)
        self.__dict__.update(vars(module))  # later lookups are plain attribute hits, no __getattr__
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"LazyModule({self._name!r})"
