"""Which partitions a scan reads, asking the metastore as little as it can.

- Names already cached for the table: evaluated locally, no call.
- String partition columns pinned by ``col = 'v'``: get_partition_names_ps with a partial spec.
- Other pushable filters: get_partitions_by_filter, which also returns the partition objects; if the
  metastore refuses the filter, fall back to all names and local evaluation.
- Otherwise all names (get_partition_names), cached for the next scan.
The predicate is always evaluated locally on the names as well, so what the metastore returns only has to
be a superset. Partition objects come from the partition cache or get_partitions_by_names in batches.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from hms_catalog.cache import CatalogCaches
from hms_catalog.client.batches import in_batches
from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import MetastoreError, PlanningError
from hms_catalog.properties import MAX_PARTITIONS_PER_SCAN
from planner.partition_values import make_partition_name, parse_partition_name
from planner.predicates import PartitionPredicate, keys_in_order

__all__ = ["SelectedPartition", "PartitionSelection", "select_partitions", "PARTITION_BATCH_SIZE"]

PARTITION_BATCH_SIZE = 300


@dataclass(frozen=True)
class SelectedPartition:
    name: str
    values: tuple[tuple[str, str | None], ...]
    location: str | None
    input_format: str | None


@dataclass
class PartitionSelection:
    partitions: list[SelectedPartition]
    total: int | None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def _names(client: MetastoreCalls, caches: CatalogCaches, key: tuple[str, str], keys: Sequence[str],
           predicate: PartitionPredicate | None, notes: list[str]) -> tuple[list[str], int | None]:
    """Candidate partition names (a superset of the answer) and the table's total when it is known."""
    database, table = key
    full = caches.partition_values.peek((database, table, ""))
    if full is not None or predicate is None or not predicate.touches_partitions:
        names = full if full is not None else caches.partition_values.get(
            (database, table, ""), lambda: tuple(client.get_partition_names(database, table)))
        return list(names), len(names)
    pinned = predicate.equalities()
    if pinned:
        spec = keys_in_order(keys, pinned)
        names = caches.partition_values.get(
            (database, table, "ps:" + "\x00".join(spec)), lambda: tuple(client.get_partition_names_ps(database, table, spec)))
        notes.append(f"metastore narrowed by partial spec {spec}")
        return list(names), None
    expression = predicate.metastore_filter()
    if expression:
        try:
            found = caches.partition_values.get(
                (database, table, "filter:" + expression),
                lambda: _by_filter(client, caches, database, table, keys, expression),
            )
            notes.append(f"metastore narrowed by filter {expression}")
            return list(found), None
        except MetastoreError as error:
            notes.append(f"metastore refused filter {expression!r} ({error}); evaluated locally")
    names = caches.partition_values.get((database, table, ""), lambda: tuple(client.get_partition_names(database, table)))
    return list(names), len(names)


def _by_filter(client: MetastoreCalls, caches: CatalogCaches, database: str, table: str, keys: Sequence[str],
               expression: str) -> tuple[str, ...]:
    names = []
    ticket = caches.partitions.ticket()
    for partition in client.get_partitions_by_filter(database, table, expression):
        name = make_partition_name(keys, partition.values)
        caches.partitions.put((database, table, name), partition, ticket=ticket)
        names.append(name)
    return tuple(names)


def _fetch(client: MetastoreCalls, caches: CatalogCaches, database: str, table: str, names: list[str],
           parallelism: int) -> dict[str, ttypes.Partition]:
    found: dict[str, ttypes.Partition] = {}
    missing = []
    for name in names:
        cached = caches.partitions.peek((database, table, name))
        if cached is not None:
            found[name] = cached
        else:
            missing.append(name)
    ticket = caches.partitions.ticket()
    answers = in_batches(lambda batch: client.get_partitions_by_names(database, table, batch),
                         missing, PARTITION_BATCH_SIZE, parallelism)
    for batch, partitions in answers:
        by_values = {tuple(p.values): p for p in partitions}
        for name in batch:
            values = tuple(v if v is not None else "__HIVE_DEFAULT_PARTITION__" for _, v in parse_partition_name(name))
            partition = by_values.get(values)
            if partition is not None:
                caches.partitions.put((database, table, name), partition, ticket=ticket)
                found[name] = partition
    return found


def select_partitions(
    client: MetastoreCalls,
    caches: CatalogCaches,
    table: ttypes.Table,
    predicate: PartitionPredicate | None,
    *,
    max_partitions: int,
    parallelism: int = 1,
) -> PartitionSelection:
    """The partitions of ``table`` a scan with ``predicate`` must read, with locations."""
    started = time.perf_counter()
    database, name = table.dbName.lower(), table.tableName.lower()
    keys = [k.name.lower() for k in table.partitionKeys or []]
    notes: list[str] = []
    candidates, total = _names(client, caches, (database, name), keys, predicate, notes)
    selected = []
    for partition_name in candidates:
        values = parse_partition_name(partition_name)
        if predicate is None or predicate.may_match(dict(values)):
            selected.append((partition_name, values))
    if len(selected) > max_partitions:
        raise PlanningError(
            f"scanning {database}.{name} would read {len(selected)} partitions, more than "
            f"{MAX_PARTITIONS_PER_SCAN}={max_partitions}; add a partition predicate or raise the property"
        )
    objects = _fetch(client, caches, database, name, [n for n, _ in selected], parallelism)
    partitions = []
    for partition_name, values in selected:
        partition = objects.get(partition_name)
        if partition is None:
            notes.append(f"partition {partition_name} vanished while planning")
            continue
        sd = partition.sd or ttypes.StorageDescriptor()
        partitions.append(SelectedPartition(partition_name, values, sd.location, sd.inputFormat))
    return PartitionSelection(partitions, total, time.perf_counter() - started, notes)
