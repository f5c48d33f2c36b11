"""Which partitions a scan reads, asking the metastore as little as it can.

The routes, first that applies:
- The table's full list of names is cached: evaluated locally, no call for names.
- No predicate on partition keys: every name (cached for the next scans), then the objects.
- String keys pinned by ``col = 'v'`` from the first key on (a prefix of the keys): one
  get_partition_names_ps, then the objects. The metastore matches that spec against its index on
  partition names: measured on 120,000 partitions, 2 calls in 0.02 s where one filter takes 0.06 s.
- Any other predicate the metastore's filter grammar can express (ranges, IN and equality on string,
  integral and date keys, see :meth:`PartitionPredicate.metastore_filter`): one get_partitions_by_filter,
  which answers the objects too. A metastore that refuses it (integral and date keys need its direct SQL
  path or ``hive.metastore.integral.jdo.pushdown``) is remembered to refuse that kind of key for that
  table, and the kinds it still takes are asked instead; with none left, the names route.
- Nothing can be expressed: every name, evaluated locally.

The predicate is always evaluated locally on the names as well, so what the metastore returns only has to
be a superset. Objects missing from the partition cache are asked by names in batches of
:data:`PARTITION_BATCH_SIZE`, in parallel, with the projection planning needs (``PLANNING_FIELDS``; a
metastore without projections answers whole partitions).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from hms_catalog.cache import CatalogCaches
from hms_catalog.client.batches import in_batches
from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.partition_specs import PLANNING_FIELDS
from hms_catalog.errors import MetastoreError, MetastoreUnavailableError, PlanningError
from hms_catalog.formats.partition_values import DEFAULT_PARTITION, make_partition_name, parse_partition_name
from hms_catalog.properties import MAX_PARTITIONS_PER_SCAN
from planner.predicates import STRING, MetastoreFilter, PartitionPredicate, keys_in_order

__all__ = ["SelectedPartition", "PartitionSelection", "select_partitions", "select_partition_names", "PARTITION_BATCH_SIZE"]

# Partitions asked by names per call. Hive's own client asks 300 at a time
# (hive.metastore.batch.retrieve.max); at 1,000 a 1,200-partition scan is 2 calls instead of 4, and the
# metastore still answers each in about 0.1 s.
PARTITION_BATCH_SIZE = 1000


@dataclass(frozen=True)
class SelectedPartition:
    """A partition a scan reads: where its files are and how they are stored, with the parameters the
    metastore keeps on it (``numRows``, ``totalSize``, ``numFiles``, ``COLUMN_STATS_ACCURATE``), which
    are its statistics without another call."""

    name: str
    values: tuple[tuple[str, str | None], ...]
    location: str | None
    input_format: str | None
    serde: str | None = None
    parameters: dict[str, str] = field(default_factory=dict, hash=False)


@dataclass
class PartitionSelection:
    partitions: list[SelectedPartition]
    total: int | None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass
class _Table:
    """One table's selection: where to ask, what is cached, and the notes for the plan."""

    client: MetastoreCalls
    caches: CatalogCaches
    database: str
    name: str
    keys: list[str]
    notes: list[str]

    def key(self, spec: str) -> tuple[str, str, str]:
        return (self.database, self.name, spec)


@dataclass
class _Candidates:
    """Partition names that may match (a superset), the table's total when known, and the objects that
    came with the names (a filter answers both)."""

    names: Sequence[str]
    total: int | None
    objects: dict[str, ttypes.Partition] = field(default_factory=dict)


def _all_names(table: _Table) -> _Candidates:
    names = table.caches.partition_values.get(
        table.key(""), lambda: tuple(table.client.get_partition_names(table.database, table.name)))
    return _Candidates(names, len(names))


def _candidates(table: _Table, predicate: PartitionPredicate | None, *, objects: bool = True) -> _Candidates:
    """``objects=False`` leaves out the filter route: its answer is partition objects, which a caller that
    needs only names (SHOW PARTITIONS) would pay for by the megabyte."""
    cached = table.caches.partition_values.peek(table.key(""), used=True)
    if cached is not None:
        return _Candidates(cached, len(cached))
    if predicate is None or not predicate.touches_partitions:
        return _all_names(table)
    spec = keys_in_order(table.keys, predicate.equalities())
    if spec and "" not in spec:
        names = table.caches.partition_values.get(
            table.key("ps:" + "\x00".join(spec)),
            lambda: tuple(table.client.get_partition_names_ps(table.database, table.name, spec)))
        table.notes.append(f"metastore narrowed by partial spec {spec}")
        return _Candidates(names, None)
    if not objects:
        return _all_names(table)
    refusals = table.caches.filter_refusals
    refused = refusals.refused(table.database, table.name)
    while (metastore_filter := predicate.metastore_filter(refused)) is not None:
        try:
            found = _by_filter(table, metastore_filter.expression)
        except MetastoreUnavailableError:
            raise
        except MetastoreError as error:
            blamed = _blamed(metastore_filter)
            refusals.remember(table.database, table.name, blamed)
            refused |= blamed
            table.notes.append(f"metastore refused filter {metastore_filter.expression!r} ({error}); "
                               f"not asking it filters on {', '.join(sorted(blamed))} keys of this table again")
            continue
        table.notes.append(f"metastore narrowed by filter {metastore_filter.expression}")
        return found
    return _all_names(table)


def _blamed(refused: MetastoreFilter) -> frozenset[str]:
    """The kinds a refusal is put down to: every metastore compares string keys (its ORM path does), so a
    filter mixing kinds was refused for the others."""
    return refused.kinds - {STRING} or refused.kinds


def _by_filter(table: _Table, expression: str) -> _Candidates:
    fetched: dict[str, ttypes.Partition] = {}

    def load() -> tuple[str, ...]:
        ticket = table.caches.partitions.ticket()
        partitions = table.client.get_partitions_by_filter(table.database, table.name, expression, fields=PLANNING_FIELDS)
        for partition in partitions:
            fetched[make_partition_name(table.keys, partition.values)] = partition
        table.caches.partitions.put_all([(table.key(name), partition) for name, partition in fetched.items()], ticket=ticket)
        return tuple(fetched)

    names = table.caches.partition_values.get(table.key("filter:" + expression), load)
    return _Candidates(names, None, fetched)


def _fetch(table: _Table, names: Sequence[str], parallelism: int) -> dict[str, ttypes.Partition]:
    """Partition objects by name: the cached ones, the rest asked in batches (absent ones left out)."""
    found: dict[str, ttypes.Partition] = {}
    missing = []
    for name in names:
        cached = table.caches.partitions.peek(table.key(name), used=True)
        if cached is not None:
            found[name] = cached
        else:
            missing.append(name)
    ticket = table.caches.partitions.ticket()
    answers = in_batches(
        lambda batch: table.client.get_partitions_by_names(table.database, table.name, batch, fields=PLANNING_FIELDS),
        missing, PARTITION_BATCH_SIZE, parallelism,
    )
    for batch, partitions in answers:
        by_values = {tuple(p.values): p for p in partitions}
        answered = {}
        for name in batch:
            values = tuple(v if v is not None else DEFAULT_PARTITION for _, v in parse_partition_name(name))
            partition = by_values.get(values)
            if partition is not None:
                answered[name] = partition
        table.caches.partitions.put_all([(table.key(name), partition) for name, partition in answered.items()], ticket=ticket)
        found.update(answered)
    return found


def _selected(name: str, values: tuple[tuple[str, str | None], ...], partition: ttypes.Partition) -> SelectedPartition:
    sd = partition.sd or ttypes.StorageDescriptor()
    serde = sd.serdeInfo.serializationLib if sd.serdeInfo is not None else None
    return SelectedPartition(name, values, sd.location, sd.inputFormat, serde, dict(partition.parameters or {}))


def _scope(client: MetastoreCalls, caches: CatalogCaches, table: ttypes.Table) -> _Table:
    return _Table(client, caches, table.dbName.lower(), table.tableName.lower(),
                  [k.name.lower() for k in table.partitionKeys or []], [])


def _kept(names: Sequence[str], predicate: PartitionPredicate | None) -> list[tuple[str, tuple[tuple[str, str | None], ...]]]:
    """The names ``predicate`` may match, with their values: the local evaluation every route ends with."""
    kept = []
    for partition_name in names:
        values = parse_partition_name(partition_name)
        if predicate is None or predicate.may_match(dict(values)):
            kept.append((partition_name, values))
    return kept


def select_partition_names(
    client: MetastoreCalls,
    caches: CatalogCaches,
    table: ttypes.Table,
    predicate: PartitionPredicate | None,
) -> list[str]:
    """The names of the partitions of ``table`` that ``predicate`` may match, in the metastore's order, without
    asking for a partition object: the cached names, the names a leading-key spec narrows to, or every name."""
    return [name for name, _ in _kept(_candidates(_scope(client, caches, table), predicate, objects=False).names, predicate)]


def select_partitions(
    client: MetastoreCalls,
    caches: CatalogCaches,
    table: ttypes.Table,
    predicate: PartitionPredicate | None,
    *,
    max_partitions: int,
    parallelism: int = 1,
) -> PartitionSelection:
    """The partitions of ``table`` a scan with ``predicate`` must read, with locations and parameters."""
    started = time.perf_counter()
    scope = _scope(client, caches, table)
    candidates = _candidates(scope, predicate)
    selected = _kept(candidates.names, predicate)
    if len(selected) > max_partitions:
        raise PlanningError(
            f"scanning {scope.database}.{scope.name} would read {len(selected)} partitions, more than "
            f"{MAX_PARTITIONS_PER_SCAN}={max_partitions}; add a partition predicate or raise the property"
        )
    objects = candidates.objects
    missing = [name for name, _ in selected if name not in objects]
    if missing:
        objects = {**objects, **_fetch(scope, missing, parallelism)}
    partitions = []
    for partition_name, values in selected:
        partition = objects.get(partition_name)
        if partition is None:
            scope.notes.append(f"partition {partition_name} vanished while planning")
            continue
        partitions.append(_selected(partition_name, values, partition))
    return PartitionSelection(partitions, candidates.total, time.perf_counter() - started, scope.notes)
