"""Which partitions a scan reads, asking the metastore as little as it can.

The routes, first that applies:
- The table's full list of names is cached: evaluated locally, no call for names.
- No predicate on partition keys: every name (cached for the next scans), then the objects.
- String keys pinned by ``col = 'v'`` from the first key on (a prefix of the keys): one
  get_partition_names_ps, then the objects. The metastore matches that spec against its index on
  partition names: measured on 120,000 partitions, 2 calls in 0.02 s where one filter takes 0.06 s.
- Every conjunct on partition keys pins string keys, leading or not, to plain values (``col = 'v'``,
  ``col IN (...)``): one get_partition_names_ps per combination of the values, '' (any) for the keys left
  free, at most :data:`PARTIAL_SPECS_LIMIT`; then the objects. The metastore matches the spec against the
  table's partition names alone, where a filter on a key after the first joins every partition's key values:
  10,000 of a million partitions on PostgreSQL in 0.15-0.34 s for the names against 1.9-2.2 s for the
  filter's answer, and the objects by names cost what the filter's did (so the planner's batches come a batch
  at a time, listed as the next is fetched, not in one answer). A range or an OR beside them leaves this route
  to the filter, which narrows by all of it in one call.
- Any other predicate the metastore's filter grammar can express (ranges, IN and equality on string,
  integral and date keys, see :meth:`PartitionPredicate.metastore_filter`): one get_partitions_by_filter, which
  answers the objects too, asked for at most one more than :data:`FILTER_OBJECTS_LIMIT` (or than
  ``max_partitions``, if smaller). When that many come back, the selection is too large for one answer: its
  objects are dropped and the names route takes it, where a scan over ``max_partitions`` is refused on the
  exact count and a large one fetched by names, batch by batch. A metastore that refuses a filter (integral
  and date keys need its direct SQL path or ``hive.metastore.integral.jdo.pushdown``) is remembered to refuse
  that kind of key for that table, and the kinds it still takes are asked instead; with none left, the names
  route.
- Nothing can be expressed: every name, evaluated locally.

The bound keeps every selection the filter route serves at one call (a metastore's filter query is its
costliest: 2.5-3.6 s on a million-partition PostgreSQL metastore without an index on partition key values,
which Hive's schemas lack; the embedded metastore adds one on PostgreSQL, which serves selective filters),
and keeps a selection of half a million partitions from arriving as one answer (74 s and 2 GB there,
docs/measurements.md): what it costs such a selection, or a refusal, is the bound's objects, fetched and
dropped. (Counting first, with get_num_partitions_by_filter, runs the filter's query twice for every plan.)

The predicate is always evaluated locally on the names as well, so what the metastore returns only has to
be a superset. :func:`choose_partitions` settles the names (all of them may be held: a name is a short
string) and refuses too many; :func:`partition_batches` then hands the objects on a batch at a time, the next
batch asked for while the current one is used, so a scan never holds more than two batches of them: those
missing from the partition cache are asked by names in calls of :data:`PARTITION_BATCH_SIZE`, in parallel,
with the projection planning needs (``PLANNING_FIELDS``; a metastore without projections answers whole
partitions).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
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

__all__ = [
    "SelectedPartition", "PartitionSelection", "PartitionChoice", "choose_partitions", "partition_batches",
    "select_partitions", "select_partition_names", "PARTITION_BATCH_SIZE", "FILTER_OBJECTS_LIMIT",
]

# Partitions asked by names per call. Hive's own client asks 300 at a time
# (hive.metastore.batch.retrieve.max); at 1,000 a 1,200-partition scan is 2 calls instead of 4, and the
# metastore still answers each in about 0.1 s.
PARTITION_BATCH_SIZE = 1000
# The most partitions a filter's one call brings as objects; a filter matching more goes by names, a batch at
# a time. Sized for the largest of the 120,000- and million-partition measurements' shapes (IN on the second
# key: 30,000 partitions, about 200 MB in one answer; half a million in one answer took 2 GB), and below the
# 32,767 that Hive's get_partitions_by_filter (an i16 max_parts) can be asked for.
FILTER_OBJECTS_LIMIT = 32_000
# The most partial specs one scan asks names for (one call each): ``a IN (3 values) AND b IN (2 values)`` is 6.
# Past it, one filter answers.
PARTIAL_SPECS_LIMIT = 8


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
    parallelism: int = 1  # calls at once, on the catalog's pool

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


def _candidates(table: _Table, predicate: PartitionPredicate | None, *, objects: bool = True,
                max_partitions: int | None = None) -> _Candidates:
    """``objects=False`` leaves out the filter route: its answer is partition objects, which a caller that
    needs only names (SHOW PARTITIONS) would pay for by the megabyte. ``max_partitions``: the filter route
    answers only a selection within it (and within :data:`FILTER_OBJECTS_LIMIT`)."""
    cached = table.caches.partition_values.peek(table.key(""), used=True)
    if cached is not None:
        return _Candidates(cached, len(cached))
    if predicate is None or not predicate.touches_partitions:
        return _all_names(table)
    spec = keys_in_order(table.keys, predicate.equalities())
    if spec and "" not in spec:
        return _by_specs(table, [spec])
    specs = predicate.partial_specs(table.keys, PARTIAL_SPECS_LIMIT)
    if specs is not None:
        return _by_specs(table, specs)
    if not objects:
        return _all_names(table)
    refusals = table.caches.filter_refusals
    refused = refusals.refused(table.database, table.name)
    while (metastore_filter := predicate.metastore_filter(refused)) is not None:
        try:
            found = _by_filter(table, metastore_filter.expression, max_partitions)
        except MetastoreUnavailableError:
            raise
        except MetastoreError as error:
            blamed = _blamed(metastore_filter)
            refusals.remember(table.database, table.name, blamed)
            refused |= blamed
            table.notes.append(f"metastore refused filter {metastore_filter.expression!r} ({error}); "
                               f"not asking it filters on {', '.join(sorted(blamed))} keys of this table again")
            continue
        if found is None:  # counted too many to bring as objects in one answer
            break
        table.notes.append(f"metastore narrowed by filter {metastore_filter.expression}")
        return found
    return _all_names(table)


def _by_specs(table: _Table, specs: list[list[str]]) -> _Candidates:
    """The names each partial spec matches (specs naming different values of a key match different partitions),
    one get_partition_names_ps each unless cached, asked at once."""
    def matching(spec: list[str]) -> tuple[str, ...]:
        return table.caches.partition_values.get(
            table.key("ps:" + "\x00".join(spec)),
            lambda: tuple(table.client.get_partition_names_ps(table.database, table.name, spec)))

    if not specs:
        table.notes.append("no partition can match: the predicate pins a partition key to values that exclude each other")
        return _Candidates((), None)
    answers = in_batches(lambda batch: matching(batch[0]), specs, 1, table.parallelism)
    names = [name for _, matched in answers for name in matched]
    shown = ", ".join(str(spec) for spec in specs)
    table.notes.append(f"metastore narrowed by partial spec{'s' if len(specs) > 1 else ''} {shown}")
    return _Candidates(names, None)


def _blamed(refused: MetastoreFilter) -> frozenset[str]:
    """The kinds a refusal is put down to: every metastore compares string keys (its ORM path does), so a
    filter mixing kinds was refused for the others."""
    return refused.kinds - {STRING} or refused.kinds


def _by_filter(table: _Table, expression: str, max_partitions: int | None) -> _Candidates | None:
    """The filter's partitions, names and objects, in one call (a cached answer needs none); None when more
    than ``max_partitions`` or :data:`FILTER_OBJECTS_LIMIT` match, for the names route to count exactly and
    fetch in batches: no more than one over the bound's objects have crossed the wire then."""
    key = table.key("filter:" + expression)
    cached = table.caches.partition_values.peek(key, used=True)
    if cached is not None:
        return _Candidates(cached, None)
    limit = FILTER_OBJECTS_LIMIT if max_partitions is None else min(max_partitions, FILTER_OBJECTS_LIMIT)
    names_ticket = table.caches.partition_values.ticket()
    ticket = table.caches.partitions.ticket()
    partitions = table.client.get_partitions_by_filter(table.database, table.name, expression, limit + 1,
                                                       fields=PLANNING_FIELDS)
    if len(partitions) > limit:
        table.notes.append(f"metastore has more than {limit} partitions for filter {expression}: too many for one "
                           "answer, so asked by names in batches")
        return None
    fetched = {make_partition_name(table.keys, partition.values): partition for partition in partitions}
    table.caches.partitions.put_all([(table.key(name), partition) for name, partition in fetched.items()], ticket=ticket)
    names = tuple(fetched)
    table.caches.partition_values.put(key, names, ticket=names_ticket)
    return _Candidates(names, None, fetched)


def _fetch(table: _Table, names: Sequence[str], *, keep: bool = True) -> dict[str, ttypes.Partition]:
    """Partition objects by name: the cached ones, the rest asked in batches (absent ones left out) and, with
    ``keep``, cached."""
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
        missing, PARTITION_BATCH_SIZE, table.parallelism,
    )
    for batch, partitions in answers:
        by_values = {tuple(p.values): p for p in partitions}
        answered = {}
        for name in batch:
            values = tuple(v if v is not None else DEFAULT_PARTITION for _, v in parse_partition_name(name))
            partition = by_values.get(values)
            if partition is not None:
                answered[name] = partition
        if keep:
            table.caches.partitions.put_all([(table.key(name), partition) for name, partition in answered.items()],
                                            ticket=ticket)
        found.update(answered)
    return found


def _selected(name: str, values: tuple[tuple[str, str | None], ...], partition: ttypes.Partition) -> SelectedPartition:
    sd = partition.sd or ttypes.StorageDescriptor()
    serde = sd.serdeInfo.serializationLib if sd.serdeInfo is not None else None
    return SelectedPartition(name, values, sd.location, sd.inputFormat, serde, dict(partition.parameters or {}))


def _scope(client: MetastoreCalls, caches: CatalogCaches, table: ttypes.Table, parallelism: int = 1) -> _Table:
    return _Table(client, caches, table.dbName.lower(), table.tableName.lower(),
                  [k.name.lower() for k in table.partitionKeys or []], [], parallelism)


def _kept(names: Sequence[str], predicate: PartitionPredicate | None) -> list[str]:
    """The names ``predicate`` may match: the local evaluation every route ends with. Names only, the values
    parsed again a batch at a time: 500,000 names with their parsed values took 210 MB more than the names."""
    if predicate is None:
        return list(names)
    return [name for name in names if predicate.may_match(dict(parse_partition_name(name)))]


def select_partition_names(
    client: MetastoreCalls,
    caches: CatalogCaches,
    table: ttypes.Table,
    predicate: PartitionPredicate | None,
) -> list[str]:
    """The names of the partitions of ``table`` that ``predicate`` may match, in the metastore's order, without
    asking for a partition object: the cached names, the names partial specs narrow to, or every name."""
    return _kept(_candidates(_scope(client, caches, table), predicate, objects=False).names, predicate)


@dataclass
class PartitionChoice:
    """The partitions a scan reads, by name (a name is a short string, so a million may be held), the objects
    a filter's one answer brought along, and what choosing cost.
    :func:`partition_batches` turns it into objects a batch at a time; ``seconds`` and ``notes`` grow as
    it does."""

    kept: list[str]
    total: int | None
    objects: dict[str, ttypes.Partition]
    seconds: float
    notes: list[str]
    scope: _Table = field(repr=False)
    # Whether the objects fetched are cached: not when the scan is larger than the partition cache, which they
    # would only flush (each evicting the one before, and every other table's), to no later scan's use.
    cached: bool = True


def choose_partitions(
    client: MetastoreCalls,
    caches: CatalogCaches,
    table: ttypes.Table,
    predicate: PartitionPredicate | None,
    *,
    max_partitions: int,
    parallelism: int = 1,
) -> PartitionChoice:
    """Which partitions of ``table`` a scan with ``predicate`` reads, by name; a scan of more than
    ``max_partitions`` is refused here, before any partition object is asked for. Up to ``parallelism`` calls
    are made at once, for the names here and for the objects in :func:`partition_batches`."""
    started = time.perf_counter()
    scope = _scope(client, caches, table, parallelism)
    candidates = _candidates(scope, predicate, max_partitions=max_partitions)
    selected = _kept(candidates.names, predicate)
    if len(selected) > max_partitions:
        raise PlanningError(
            f"scanning {scope.database}.{scope.name} would read {len(selected)} partitions, more than "
            f"{MAX_PARTITIONS_PER_SCAN}={max_partitions}; add a partition predicate or raise the property"
        )
    return PartitionChoice(selected, candidates.total, candidates.objects, time.perf_counter() - started, scope.notes, scope,
                           cached=len(selected) <= caches.partitions.capacity)


def partition_batches(choice: PartitionChoice, batch_size: int) -> Iterator[list[SelectedPartition]]:
    """The chosen partitions with their locations and parameters, ``batch_size`` at a time, in the order of
    the names. What a batch needs and the cache lacks is asked (in calls of :data:`PARTITION_BATCH_SIZE`, as
    many at once as the choice's parallelism) while the batch before it is used: the caller lists one batch's
    directories as the next one's objects come, and holds at most those two batches. A partition dropped since
    its name was read is left out, with a note."""
    names = choice.kept
    with _Ahead(choice) as ahead:
        pending = ahead.ask(names[:batch_size])
        for start in range(0, len(names), batch_size):
            found = ahead.wait(pending)
            pending = ahead.ask(names[start + batch_size : start + 2 * batch_size])
            selected = _selected_batch(names[start : start + batch_size], found, choice.notes)
            del found
            yield selected


def _selected_batch(names: Sequence[str], found: dict[str, ttypes.Partition], notes: list[str]) -> list[SelectedPartition]:
    """The batch's partitions as the planner keeps them. A function of its own so that no local outlives it: a
    loop variable left in the generator's frame held the batch's last partition object while the next two
    batches were asked for (three batches alive, where the plan promises two)."""
    selected = []
    for name in names:
        partition = found.get(name)
        if partition is None:
            notes.append(f"partition {name} vanished while planning")
            continue
        selected.append(_selected(name, parse_partition_name(name), partition))
    return selected


@dataclass
class _Asked:
    """A batch's objects: those at hand (the filter's answer, the cache), and the call for the rest."""

    found: dict[str, ttypes.Partition]
    rest: Future[tuple[dict[str, ttypes.Partition], float]] | None


class _Ahead:
    """The calls for the next batch, on a thread of their own while the caller uses the current batch (in the
    caller's context: a pool's refusal holds for them too). Leaving waits for a call under way and drops
    what it brought: a plan closed early never leaves a call behind it."""

    def __init__(self, choice: PartitionChoice) -> None:
        self._choice = choice
        self._thread: ThreadPoolExecutor | None = None

    def __enter__(self) -> _Ahead:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._thread.shutdown(wait=True, cancel_futures=True)

    def ask(self, batch: Sequence[str]) -> _Asked:
        objects = self._choice.objects
        found = {name: objects.pop(name) for name in batch if name in objects}
        missing = [name for name in batch if name not in found]
        if not missing:
            return _Asked(found, None)
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="partitions-ahead")
        return _Asked(found, self._thread.submit(contextvars.copy_context().run, self._fetch, missing))

    def wait(self, asked: _Asked) -> dict[str, ttypes.Partition]:
        """The batch's objects; the time its calls took is added to the choice's (its metastore time)."""
        if asked.rest is not None:
            fetched, seconds = asked.rest.result()
            asked.found.update(fetched)
            fetched.clear()  # the future's answer, which the finished fetch on the other thread may hold a moment more
            self._choice.seconds += seconds
        return asked.found

    def _fetch(self, missing: list[str]) -> tuple[dict[str, ttypes.Partition], float]:
        started = time.perf_counter()
        fetched = _fetch(self._choice.scope, missing, keep=self._choice.cached)
        return fetched, time.perf_counter() - started


def select_partitions(
    client: MetastoreCalls,
    caches: CatalogCaches,
    table: ttypes.Table,
    predicate: PartitionPredicate | None,
    *,
    max_partitions: int,
    parallelism: int = 1,
) -> PartitionSelection:
    """Every partition of ``table`` a scan with ``predicate`` must read, with locations and parameters, in
    one list: for callers that want them all at once (the planner takes them in batches instead)."""
    choice = choose_partitions(client, caches, table, predicate, max_partitions=max_partitions, parallelism=parallelism)
    partitions = [p for batch in partition_batches(choice, max(1, len(choice.kept))) for p in batch]
    return PartitionSelection(partitions, choice.total, choice.seconds, choice.notes)
