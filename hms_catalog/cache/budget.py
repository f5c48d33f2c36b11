"""The memory the warm caches of a process may hold, and which entries go when they would hold more.

One budget is shared by every cache of every catalog of a process: the service makes one
(``serve --cache-memory``) and hands it to its :class:`~hms_catalog.manager.CatalogManager`, which hands it
to each catalog's caches. A busy catalog then takes room from an idle one, and the bound is the process's,
which is what an operator sets. Nothing finds it any other way (no global): a process that wants two
managers under one bound passes both the same budget.

Each entry is charged its measured size when stored (:mod:`hms_catalog.cache.sizing`, or a cache's own
weigher) and released when it leaves: invalidated, expired, evicted by its cache's count cap, or cleared.
The budget keeps one order of use for every entry of every cache (an ``OrderedDict`` of ``(cache, key)``;
a hit moves the entry to the end), and when the total passes the limit the least recently used entries
go, whichever cache holds them, until it is under again. An entry larger than the whole budget is not
kept at all.

Locks: a cache calls :meth:`MemoryBudget.charge`, :meth:`release` and :meth:`touch` while it holds its own
lock, and the budget takes only its own inside them and never calls a cache. :meth:`enforce`, which a cache
calls after it stored and let go of its own lock, takes the entries to evict off the books under the
budget's lock, lets go of it, and only then hands each to its cache. So no thread holds the budget's lock
while it waits for a cache's, nor two caches' locks at once: nothing can deadlock. A victim replaced or
dropped in between is recognised by its token (the stored entry) and left alone.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Protocol

from hms_catalog.errors import ConfigurationError

__all__ = ["DEFAULT_CACHE_MEMORY", "UNLIMITED", "BudgetHolder", "MemoryBudget", "format_size", "parse_size"]

DEFAULT_CACHE_MEMORY = 1024**3  # 1 GiB
UNLIMITED = "unlimited"

_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1000, "kib": 1024, "m": 1024**2, "mb": 1000**2, "mib": 1024**2,
          "g": 1024**3, "gb": 1000**3, "gib": 1024**3, "t": 1024**4, "tb": 1000**4, "tib": 1024**4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def parse_size(text: str | int, what: str = "--cache-memory") -> int | None:
    """Bytes from ``512MiB``, ``2GiB``, ``1.5GB``, ``64k`` or ``1048576``; None for ``unlimited``.

    Binary units (KiB, MiB, GiB, TiB, and K, M, G, T as the JVM's ``-Xmx`` reads them) count 1024s, decimal
    ones (KB, MB, GB, TB) 1000s. ConfigurationError names ``what`` and the value it cannot read."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 1:
            raise ConfigurationError(f"{what} must be a positive number of bytes, got {text}")
        return text
    value = str(text)
    if value.strip().lower() == UNLIMITED:
        return None
    found = _SIZE.match(value)
    unit = _UNITS.get(found.group(2).lower()) if found else None
    if found is None or unit is None:
        raise ConfigurationError(f"{what} must be a size such as 512MiB, 2GiB or 1073741824 (bytes), or "
                                 f"'{UNLIMITED}'; got {value!r}")
    if unit == 1 and "." in found.group(1):
        raise ConfigurationError(f"{what} must be a whole number of bytes, or a size with a unit such as 1.5GiB; "
                                 f"got {value!r}")
    size = int(float(found.group(1)) * unit)
    if size < 1:
        raise ConfigurationError(f"{what} must be at least 1 byte, got {value!r}")
    return size


def format_size(size: int | None) -> str:
    """``1.0 GiB``, ``512.0 KiB``, ``300 B``; ``unlimited`` for None."""
    if size is None:
        return UNLIMITED
    for unit, scale in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


class BudgetHolder(Protocol):
    """A cache under a budget: what the budget's victims are handed back to."""

    def evict_for_memory(self, key: Hashable, token: object) -> None:
        """Drop ``key`` if its entry is still ``token`` (not replaced since), counting an eviction for memory."""


class MemoryBudget:
    """The bytes the caches under it may hold together (``limit``; None: no bound, sizes still kept)."""

    def __init__(self, limit: int | None = DEFAULT_CACHE_MEMORY) -> None:
        if limit is not None and limit < 1:
            raise ConfigurationError(f"a cache memory budget must be at least 1 byte, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        self._order: OrderedDict[tuple[BudgetHolder, Hashable], tuple[object, int]] = OrderedDict()
        self._held = 0
        self._by_holder: dict[BudgetHolder, int] = {}

    @classmethod
    def parse(cls, text: MemoryBudget | str | int, what: str = "--cache-memory") -> MemoryBudget:
        """A budget of ``text`` (:func:`parse_size`: ``1GiB``, ``512MiB``, ``unlimited``); a budget given is
        returned as it is (shared by whoever holds it)."""
        return text if isinstance(text, MemoryBudget) else cls(parse_size(text, what))

    @property
    def held(self) -> int:
        """Bytes charged to every cache under the budget."""
        with self._lock:
            return self._held

    def held_by(self, holder: BudgetHolder) -> int:
        """Bytes charged to one cache."""
        with self._lock:
            return self._by_holder.get(holder, 0)

    def fits(self, size: int) -> bool:
        """Whether an entry of ``size`` bytes may be kept at all (one larger than the whole budget may not)."""
        return self.limit is None or size <= self.limit

    def charge(self, holder: BudgetHolder, key: Hashable, token: object, size: int) -> None:
        """``holder`` now keeps ``key`` (its entry ``token``), of ``size`` bytes, as its most recent entry."""
        with self._lock:
            self._drop((holder, key))
            self._order[(holder, key)] = (token, size)
            self._held += size
            self._by_holder[holder] = self._by_holder.get(holder, 0) + size

    def release(self, holder: BudgetHolder, key: Hashable) -> None:
        """``holder`` no longer keeps ``key`` (invalidated, expired, evicted by count, cleared)."""
        with self._lock:
            self._drop((holder, key))

    def touch(self, holder: BudgetHolder, key: Hashable) -> None:
        """``key`` of ``holder`` was used: it becomes the most recent entry."""
        place = (holder, key)
        with self._lock:
            if place in self._order:  # not if released meanwhile (a victim on its way out)
                self._order.move_to_end(place)

    def enforce(self) -> int:
        """Evict the least recently used entries, of any cache, until the total fits; how many went.

        Called by a cache after it stored, holding no lock of its own: the victims are taken off the books
        under the budget's lock, then each is handed to its cache (:meth:`BudgetHolder.evict_for_memory`)."""
        if self.limit is None:
            return 0
        victims: list[tuple[BudgetHolder, Hashable, object]] = []
        with self._lock:
            while self._held > self.limit and self._order:
                (holder, key), (token, size) = self._order.popitem(last=False)
                self._debit(holder, size)
                victims.append((holder, key, token))
        for holder, key, token in victims:
            holder.evict_for_memory(key, token)
        return len(victims)

    def _drop(self, place: tuple[BudgetHolder, Hashable]) -> None:
        found = self._order.pop(place, None)
        if found is not None:
            self._debit(place[0], found[1])

    def _debit(self, holder: BudgetHolder, size: int) -> None:
        self._held -= size
        left = self._by_holder.get(holder, 0) - size
        if left > 0:
            self._by_holder[holder] = left
        else:
            self._by_holder.pop(holder, None)

    def __repr__(self) -> str:
        return f"MemoryBudget({format_size(self.limit)}, {format_size(self.held)} held)"
