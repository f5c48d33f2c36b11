"""Partitions answered from the catalog's partition caches, the ones its planner fills and keeps fresh.

A table's partition names are one cache entry (the planner's), each partition another. Only whole
partitions are answered from the cache: the planner may have cached a projection (Hive 4 fills only the
fields planning needs), and a client is owed the metastore's whole object, so a projected entry is fetched
again whole (by names, in batches) and replaces it.

``get_partitions_by_filter`` is evaluated here against the table's names when the table is cached and the
filter is one :mod:`.partition_filters` evaluates exactly as the metastore would (the names are fetched
once and cached, as the planner caches them); else the metastore evaluates it.
``get_partitions_by_expr`` carries a serialized Hive expression that only Hive's own classes read: for a
table whose names are cached the answer is every partition with ``hasUnknownPartitions`` set, which tells
the client (Hive) to filter the partitions itself, as the protocol allows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import HmsCatalogError, NotFoundError
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name, parse_partition_name
from hms_catalog.model import ExternalCatalog
from service.thrift.context import Caller, EndpointContext
from service.thrift.errors import translated
from service.thrift.names import Route
from service.thrift.partition_filters import parse_partition_filter

__all__ = ["PartitionReads"]

BATCH = 1000  # partitions asked by names per call, as the planner asks them


def _whole(partition: ttypes.Partition | None) -> bool:
    return partition is not None and partition.dbName is not None and partition.sd is not None and partition.sd.cols is not None


def _values(name: str) -> tuple[str, ...]:
    return tuple(value if value is not None else DEFAULT_PARTITION for _, value in parse_partition_name(name))


def _limited(items: Sequence[Any], max_parts: int | None) -> list[Any]:
    return list(items) if max_parts is None or max_parts < 0 else list(items[:max_parts])


def _limited_names(names: Sequence[str], max_parts: int | None) -> list[str]:
    """``get_partition_names``'s own limit: there (and only there) the metastore takes 0, like a negative
    limit, for every name (it sets a range only for a limit above 0)."""
    return _limited(names, None if max_parts == 0 else max_parts)


class _Partitions:
    """One table's partitions in one catalog's caches. What reaches the metastore does so within ``reaching``: while
    the catalog's metastore is known down, what the caches lack fails at once (:meth:`CatalogHealth.reaching`)."""

    def __init__(self, catalog: ExternalCatalog, database: str, table: str,
                 reaching: Callable[[], AbstractContextManager[ExternalCatalog]]) -> None:
        self.catalog = catalog
        self.database = database
        self.table = table.lower()
        self.reaching = reaching

    def key(self, name: str) -> tuple[str, str, str]:
        return (self.database, self.table, name)

    def table_loaded(self) -> bool:
        return self.catalog.table(self.database, self.table).loaded

    def names_cached(self) -> bool:
        return self.catalog.caches.partition_values.peek(self.key("")) is not None

    def names(self) -> tuple[str, ...]:
        client = self.catalog.client

        def fetched() -> tuple[str, ...]:
            # The table first (cached once loaded): Hive 2.3 answers get_partition_names of a missing table with an
            # internal error, where a client is owed the NoSuchObjectException get_partitions declares.
            self.catalog.table(self.database, self.table).thrift  # noqa: B018 - loaded for its NotFoundError
            return tuple(client.get_partition_names(self.database, self.table))

        with self.reaching():
            return self.catalog.caches.partition_values.get(self.key(""), fetched)

    def key_types(self) -> dict[str, str]:
        with self.reaching():
            table = self.catalog.table(self.database, self.table).thrift
        return {key.name.lower(): (key.type or "string").lower() for key in table.partitionKeys or ()}

    def objects(self, names: Sequence[str]) -> list[ttypes.Partition]:
        """The whole partitions named, in that order; absent ones left out."""
        cache = self.catalog.caches.partitions
        found: dict[str, ttypes.Partition] = {}
        missing = []
        for name in names:
            cached = cache.peek(self.key(name), used=True)
            if _whole(cached):
                found[name] = cached
            else:
                missing.append(name)
        ticket = cache.ticket()
        for start in range(0, len(missing), BATCH):
            batch = missing[start:start + BATCH]
            with self.reaching():
                answered = self.catalog.client.get_partitions_by_names(self.database, self.table, batch)
            by_values = {tuple(p.values or ()): p for p in answered}
            named = [(name, partition) for name in batch if (partition := by_values.get(_values(name))) is not None]
            cache.put_all([(self.key(name), partition) for name, partition in named], ticket=ticket)
            found.update(named)
        return [found[name] for name in names if name in found]

    def filtered_by_metastore(self, text: str, max_parts: int) -> list[ttypes.Partition]:
        """The partitions the metastore selects with filter ``text``, cached as they come (whole)."""
        cache = self.catalog.caches.partitions
        ticket = cache.ticket()  # taken before the call, so a change while it runs keeps its answer out of the cache
        with self.reaching():
            found = self.catalog.client.get_partitions_by_filter(self.database, self.table, text, max_parts)
            keys = [key.name for key in self.catalog.table(self.database, self.table).thrift.partitionKeys or ()]
        cache.put_all([(self.key(make_partition_name(keys, partition.values or [])), partition) for partition in found],
                      ticket=ticket)
        return found


class PartitionReads:
    endpoint: EndpointContext
    caller: Caller

    @translated("get_partition_names")
    def get_partition_names(self, db_name: str, tbl_name: str, max_parts: int) -> list[str]:
        _, partitions = self._partitions(db_name, tbl_name)
        return _limited_names(partitions.names(), max_parts)

    @translated("get_partitions")
    def get_partitions(self, db_name: str, tbl_name: str, max_parts: int) -> list[ttypes.Partition]:
        route, partitions = self._partitions(db_name, tbl_name)
        return self._answer(route, partitions.objects(_limited(partitions.names(), max_parts)))

    @translated("get_partitions_with_auth")
    def get_partitions_with_auth(self, db_name: str, tbl_name: str, max_parts: int, user_name: str,
                                 group_names: list[str]) -> list[ttypes.Partition]:
        return self.get_partitions(db_name, tbl_name, max_parts)

    @translated("get_partition_names_ps")
    def get_partition_names_ps(self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int) -> list[str]:
        _, partitions = self._partitions(db_name, tbl_name)
        spec = _partial_spec(partitions, part_vals)  # refused before any name is fetched
        return _limited(_matching(partitions.names(), spec), max_parts)

    @translated("get_partitions_ps")
    def get_partitions_ps(self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int) -> list[ttypes.Partition]:
        route, partitions = self._partitions(db_name, tbl_name)
        spec = _partial_spec(partitions, part_vals)
        matching = _matching(partitions.names(), spec)
        return self._answer(route, partitions.objects(_limited(matching, max_parts)))

    @translated("get_partitions_ps_with_auth")
    def get_partitions_ps_with_auth(self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int,
                                    user_name: str, group_names: list[str]) -> list[ttypes.Partition]:
        return self.get_partitions_ps(db_name, tbl_name, part_vals, max_parts)

    @translated("get_partition")
    def get_partition(self, db_name: str, tbl_name: str, part_vals: list[str]) -> ttypes.Partition:
        route, partitions = self._partitions(db_name, tbl_name)
        keys = list(partitions.key_types())
        if len(part_vals or ()) != len(keys):
            raise HmsCatalogError(f"{len(part_vals or ())} partition values given for {len(keys)} partition keys")
        return self._one(route, partitions, make_partition_name(keys, list(part_vals)))

    @translated("get_partition_with_auth")
    def get_partition_with_auth(self, db_name: str, tbl_name: str, part_vals: list[str], user_name: str,
                                group_names: list[str]) -> ttypes.Partition:
        return self.get_partition(db_name, tbl_name, part_vals)

    @translated("get_partition_by_name")
    def get_partition_by_name(self, db_name: str, tbl_name: str, part_name: str) -> ttypes.Partition:
        route, partitions = self._partitions(db_name, tbl_name)
        return self._one(route, partitions, part_name)

    @translated("get_partitions_by_names")
    def get_partitions_by_names(self, db_name: str, tbl_name: str, names: list[str]) -> list[ttypes.Partition]:
        route, partitions = self._partitions(db_name, tbl_name)
        return self._answer(route, partitions.objects(list(names or ())))

    @translated("get_partitions_by_names_req")
    def get_partitions_by_names_req(self, req: Any) -> Any:
        # The request has no catName (Hive 4 names the catalog as '@cat#db' in db_name, which routes alike).
        route, partitions = self._partitions(req.db_name, req.tbl_name)
        return ttypes.GetPartitionsByNamesResult(partitions=self._answer(route, partitions.objects(list(req.names or ()))))

    @translated("get_partitions_by_filter")
    def get_partitions_by_filter(self, db_name: str, tbl_name: str, filter: str, max_parts: int) -> list[ttypes.Partition]:
        route, partitions = self._partitions(db_name, tbl_name)
        names = self._filtered(partitions, filter)
        if names is not None:
            return self._answer(route, partitions.objects(_limited(names, max_parts)))
        return self._answer(route, partitions.filtered_by_metastore(filter, max_parts))

    @translated("get_num_partitions_by_filter")
    def get_num_partitions_by_filter(self, db_name: str, tbl_name: str, filter: str) -> int:
        route, partitions = self._partitions(db_name, tbl_name)
        names = self._filtered(partitions, filter)
        if names is not None:
            return len(names)
        return int(self.endpoint.forwarder.call("get_num_partitions_by_filter", (db_name, tbl_name, filter)))

    @translated("get_partitions_by_expr")
    def get_partitions_by_expr(self, req: Any) -> Any:
        route, partitions = self._partitions(req.dbName, req.tblName, req.catName)
        if not partitions.names_cached():
            return self.endpoint.forwarder.call("get_partitions_by_expr", (req,))
        found = partitions.objects(_limited(partitions.names(), req.maxParts))
        return ttypes.PartitionsByExprResult(partitions=self._answer(route, found), hasUnknownPartitions=True)

    # What they share -----------------------------------------------------------------------------------

    def _partitions(self, database: str, table: str, catalog: str | None = None) -> tuple[Route, _Partitions]:
        route = self.endpoint.readable_route(self.caller, database, catalog)
        live = self.endpoint.catalog(route)
        return route, _Partitions(live, route.database, table, lambda: self.endpoint.health.reaching(route.catalog, live))

    def _answer(self, route: Route, partitions: list[ttypes.Partition]) -> list[ttypes.Partition]:
        return [self.endpoint.outward(route, partition) for partition in partitions]

    def _one(self, route: Route, partitions: _Partitions, name: str) -> ttypes.Partition:
        found = partitions.objects([name])
        if not found:
            raise NotFoundError("partition", f"{route.database}.{partitions.table} {name}")
        return self.endpoint.outward(route, found[0])

    @staticmethod
    def _filtered(partitions: _Partitions, text: str) -> list[str] | None:
        """The names ``text`` selects, evaluated here; None when the metastore must evaluate it.

        Evaluated here when the table is cached (its definition, so its partition keys' types, are known): its
        names are then fetched once, if not cached yet, and every later filter of the table costs nothing."""
        if not partitions.names_cached() and not partitions.table_loaded():
            return None
        try:
            parsed = parse_partition_filter(text, partitions.key_types())
            # matches() too may find a value whose answer depends on the metastore's database: then it decides
            return [name for name in partitions.names() if parsed.matches(dict(parse_partition_name(name)))]
        except HmsCatalogError:
            return None


def _partial_spec(partitions: _Partitions, part_vals: Sequence[str] | None) -> list[str]:
    """``part_vals`` of a ``_ps`` call, checked as the metastore checks them: one value or more, and no more
    values than the table has partition keys."""
    values = list(part_vals or ())
    keys = len(partitions.key_types())
    if keys == 0:
        raise HmsCatalogError(f"table {partitions.database}.{partitions.table} is not partitioned: it has no partition "
                              "keys to give values of")
    if not values or len(values) > keys:
        raise HmsCatalogError(f"{len(values)} partition values given for a table of {keys} partition keys: "
                              f"a partial specification gives 1 to {keys} values, '' for any value")
    return values


def _matching(names: Sequence[str], part_vals: Sequence[str]) -> list[str]:
    """Names whose leading values equal ``part_vals`` ('' matches any value), as get_partitions_ps matches."""
    wanted = list(part_vals or ())
    return [name for name in names
            if all(want == "" or want == have for want, have in zip(wanted, _values(name), strict=False))]
