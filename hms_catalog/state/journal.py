"""The change log in the store: versions allocated per catalog, entries bounded, positions fenced.

Appending updates the catalog's counter row first (``current = current + n``), which holds that row's
lock until the transaction commits. Two replicas recording for one catalog are serialised there, so
versions commit in the order they are numbered, and a reader asking for "versions above n" cannot pass over
one that commits late: the gap-free order a long poll needs. The log keeps the newest ``capacity`` entries
per catalog (10,000 by default); older ones are deleted as new ones arrive.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, RowMapping, bindparam, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from hms_catalog.cache.shared_versions import PendingChange
from hms_catalog.cache.versions import CHANGE_LOG_CAPACITY, CatalogObject, Change, ChangeKind, ChangeSource
from hms_catalog.errors import LeaseLostError
from hms_catalog.state.database import StoreDatabase
from hms_catalog.state.schema import CHANGES, COUNTERS, DEFINITIONS_GENERATION, LEASES

__all__ = ["ChangeJournal", "EventPosition"]

_PRUNE_EVERY = 64  # delete entries past the bound once in this many versions, not on every append
# The query :meth:`ChangeJournal.heads` runs before every statement, made once: building it anew each time (the
# IN, its coercions) took a sixth of a warm thrift get_all_databases.
_HEADS = select(COUNTERS.c.catalog_id, COUNTERS.c.current).where(
    COUNTERS.c.catalog_id.in_(bindparam("catalogs", expanding=True)))


@dataclass(frozen=True)
class EventPosition:
    """A metastore event applied under a lease: stored with the event's changes, if the lease still holds."""

    holder: str
    fence: int
    event_id: int


class ChangeJournal:
    """Every catalog's change log in ``database``; ``replica`` names this process in the entries it writes."""

    def __init__(self, database: StoreDatabase, replica: str, capacity: int = CHANGE_LOG_CAPACITY) -> None:
        self.database = database
        self.replica = replica
        self.capacity = capacity

    def append(self, catalog_id: str, changes: Sequence[PendingChange], *, position: object | None = None) -> int:
        fence = position if isinstance(position, EventPosition) else None
        for attempt in (1, 2):
            try:
                with self.database.writing() as connection:
                    if fence is not None:
                        _advance(connection, catalog_id, fence)
                    return self._append(connection, catalog_id, changes, fence)
            except IntegrityError:  # two replicas made the catalog's counter row at once: the loser goes again
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def after(self, catalog_id: str, version: int, limit: int) -> tuple[list[tuple[Change, str]], int]:
        with self.database.reading() as connection:
            newest = connection.execute(select(COUNTERS.c.current).where(COUNTERS.c.catalog_id == catalog_id)).scalar()
            if newest is None or newest <= version:
                return [], int(newest or 0)
            rows = connection.execute(
                select(CHANGES).where(CHANGES.c.catalog_id == catalog_id, CHANGES.c.version > version)
                .order_by(CHANGES.c.version.desc()).limit(limit)
            ).mappings().all()
        return [(_change(row), row["replica"]) for row in reversed(rows)], int(newest)

    def heads(self, catalog_id: str) -> tuple[int, int]:
        """The definitions' generation and the catalog's newest version, in one indexed read: all a process
        holding the catalog live asks the store before each statement when nothing has changed."""
        with self.database.reading() as connection:
            rows = connection.execute(_HEADS, {"catalogs": [DEFINITIONS_GENERATION, catalog_id]}).all()
        found = {row.catalog_id: int(row.current) for row in rows}
        return found.get(DEFINITIONS_GENERATION, 0), found.get(catalog_id, 0)

    def generation(self) -> int:
        """The definitions' generation alone (read before a definition, so a change after it is noticed)."""
        with self.database.reading() as connection:
            found = connection.execute(select(COUNTERS.c.current).where(COUNTERS.c.catalog_id == DEFINITIONS_GENERATION)).scalar()
        return int(found or 0)

    def currents(self) -> dict[str, int]:
        """Every catalog's newest version: one small query tells a follower which catalogs moved."""
        with self.database.reading() as connection:
            return {row.catalog_id: int(row.current) for row in connection.execute(select(COUNTERS))}

    def _append(self, connection: Connection, catalog_id: str, changes: Sequence[PendingChange],
                fence: EventPosition | None) -> int:
        if not changes:
            return int(connection.execute(select(COUNTERS.c.current).where(COUNTERS.c.catalog_id == catalog_id)).scalar() or 0)
        count = len(changes)
        last = connection.execute(
            update(COUNTERS).where(COUNTERS.c.catalog_id == catalog_id).values(current=COUNTERS.c.current + count)
            .returning(COUNTERS.c.current)
        ).scalar()
        if last is None:  # the catalog's first change, or one logged after its definition was dropped: after any row left
            logged = connection.execute(select(func.max(CHANGES.c.version)).where(CHANGES.c.catalog_id == catalog_id)).scalar()
            last = int(logged or 0) + count
            connection.execute(insert(COUNTERS).values(catalog_id=catalog_id, current=last))
        now = time.time()
        first = int(last) - count + 1
        connection.execute(insert(CHANGES), [
            {"catalog_id": catalog_id, "version": first + index, "kind": kind.value, "object_kind": obj.kind,
             "database_name": obj.database, "table_name": obj.table, "detail": obj.detail, "source": source.value,
             "replica": self.replica, "fence": fence.fence if fence else None, "recorded_at": now}
            for index, (kind, obj, source) in enumerate(changes)
        ])
        if first // _PRUNE_EVERY != int(last) // _PRUNE_EVERY or count >= _PRUNE_EVERY:
            connection.execute(delete(CHANGES).where(CHANGES.c.catalog_id == catalog_id,
                                                     CHANGES.c.version <= int(last) - self.capacity))
        return int(last)


def _advance(connection: Connection, catalog_id: str, position: EventPosition) -> None:
    """Store the event position, only while the lease is still this holder's under this number."""
    done = connection.execute(
        update(LEASES).where(LEASES.c.catalog_id == catalog_id, LEASES.c.holder == position.holder,
                             LEASES.c.fence == position.fence).values(last_event_id=position.event_id)
    )
    if done.rowcount != 1:
        raise LeaseLostError(f"the event lease of catalog {catalog_id} (number {position.fence}) was taken over; "
                             f"event {position.event_id} is left to the new holder")


def _change(row: RowMapping) -> Change:
    get = row.__getitem__
    obj = CatalogObject(get("object_kind"), get("database_name"), get("table_name"), get("detail"))
    return Change(int(get("version")), ChangeKind(get("kind")), obj, ChangeSource(get("source")))
