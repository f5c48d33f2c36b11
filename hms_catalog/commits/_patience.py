"""Retrying a completion's metastore call while a killed process's abandoned call is still in the way.

The abandoned call holds what the completion touches until it ends: the partition names it adds (the metastore
keeps them unique), the rows it changes (its database's locks), a table's new folder (a RENAME moves it before
it commits). The completion's call is refused meanwhile, and once the abandoned call ends (it commits the same
change, or fails) the same call goes through or finds nothing left to do. A metastore out of reach is not
waited for: the log stays for the next look.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import TypeVar

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.writes import MetastoreWrites
from hms_catalog.errors import AlreadyExistsError, MetastoreError, MetastoreUnavailableError

__all__ = ["COMPLETE_PATIENCE", "add_missing", "deadline", "patiently"]

COMPLETE_PATIENCE = 60.0  # seconds a completion keeps trying while an abandoned call holds what it changes
_PAUSE = 0.2  # seconds between tries
_ADD_BATCH = 1000  # partitions per add_partitions call of a completion

T = TypeVar("T")


def deadline(patience: float = COMPLETE_PATIENCE) -> float:
    """The monotonic time a completion started now stops waiting."""
    return time.monotonic() + patience


def patiently(call: Callable[[], T], until: float) -> T:
    """``call``'s answer, asked again while the metastore refuses it, until ``until``; then its refusal."""
    while True:
        try:
            return call()
        except MetastoreUnavailableError:
            raise
        except (MetastoreError, AlreadyExistsError):
            if time.monotonic() > until:
                raise
            time.sleep(_PAUSE)


def add_missing(client: MetastoreWrites, partitions: list[ttypes.Partition], until: float) -> None:
    """Add whichever of ``partitions`` (of one table) are missing, in batches. While an abandoned call's
    transaction holds some of their names an add is refused until that call ends; the next try then finds them
    and skips them, and the abandoned call, which adds without skipping, fails on those the completion added."""
    for start in range(0, len(partitions), _ADD_BATCH):
        batch = partitions[start : start + _ADD_BATCH]
        patiently(functools.partial(client.add_partitions, batch, if_not_exists=True), until)
