"""A call into an engine whose retries the catalog cannot set, held to the catalog's request timeout from outside.

hudi-rs reads Hudi tables with its own client (Rust's ``object_store``). It takes a timeout per attempt, which
the catalog sets (:func:`hms_catalog.storage.engines.object_store_timeouts`), but retries a request ten times
within three minutes, and neither number can be passed to it: a store that accepts connections and never
answers would hold a DESCRIBE or a plan of a Hudi table for minutes.

So the engine's call runs on a worker thread while the calling thread watches the store itself: after a
quarter of a second (a call done by then costs nothing more), and then once per request timeout, it asks the
store for a file the call reads anyway, with one HEAD request through the catalog's own filesystem, which
fails within the request timeout (:mod:`hms_catalog.storage.timeouts`). A store that answers lets the call go
on, however long: a large table's file listing may take longer than one request timeout and is not cut off.
A store that does not answer, or refuses, fails the call with the catalog's error (catalog, location,
endpoint, request, timeout and its key), within the request timeout and a quarter of a second.

The worker is then left to finish by itself, and no more is heard of it: the engine gives up after its own
retries (about three minutes and one attempt at most, each attempt within the request timeout) and the thread
ends. It is a daemon thread, so it never holds up the process's exit. Each call has one, and a caller makes
one call per table load (opening the Hudi table, its schema and timeline, or its file slices, together), so a
silent store leaves at most one waiting thread per table load, each for a few minutes at most.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from hms_catalog.storage.resolver import StorageResolver

__all__ = ["bounded_call"]

T = TypeVar("T")

_FIRST_LOOK_S = 0.25  # a call done within this never costs a request of the catalog's own


class _Worker(Generic[T]):
    """``call`` on a daemon thread; its value or error kept for whoever still waits for it."""

    def __init__(self, call: Callable[[], T], name: str) -> None:
        self._call = call
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def _run(self) -> None:
        try:
            self._value = self._call()
        except BaseException as error:  # noqa: BLE001 - raised to the caller still waiting; a worker left behind drops it
            self._error = error
        finally:
            self._done.set()

    def wait(self, seconds: float) -> bool:
        return self._done.wait(max(0.0, seconds))

    def result(self) -> T:
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set whenever no error was


def bounded_call(storage: StorageResolver, location: str, call: Callable[[], T], *, probe: str, doing: str) -> T:
    """``call()`` (an engine's reading of ``location``), failed with the catalog's StorageError ("cannot
    ``doing`` ``location``: the store ... did not answer ...") as soon as the store stops answering ``probe``
    (a file the call reads) within the request timeout. Locations the resolver reaches otherwise than through
    an S3 store (local disk, HDFS, GCS, Azure) are called as they are, with no thread."""
    settings = storage.s3_settings(location)
    if settings is None:
        return call()
    worker = _Worker(call, f"hms-catalog: {doing} {location}")
    if worker.wait(min(_FIRST_LOOK_S, settings.request_timeout / 8)):
        return worker.result()
    while True:
        asked = time.monotonic()
        storage.answers(probe, named=location, doing=doing)  # the catalog's error, within the request timeout
        if worker.wait(settings.request_timeout - (time.monotonic() - asked)):
            return worker.result()
