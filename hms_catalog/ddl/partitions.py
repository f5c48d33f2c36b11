"""ADD, DROP and RECOVER PARTITIONS as catalog events, in batches, whole or not at all.

Partitions are added with ``add_partitions_req`` in batches of ``hive.metastore.partition.batch.size`` (one call per batch, one
metastore event each); if a later batch fails, the partitions the statement added before it are dropped
again, so the table is left as it was; a process killed in the middle has its statement completed by the
next start. Dropping takes every partition a (possibly partial) spec matches,
by name, in batches; a managed table's partition files go with it, an external one's stay. RECOVER
PARTITIONS (``MSCK REPAIR TABLE``) lists the table's folders once and adds the ``k=v`` folders the
metastore lacks; with SYNC it also drops the partitions whose folder is gone (their own location, which may
be elsewhere). It also deletes the staging folders crashed writes left (:func:`hms_catalog.commits.staging.remove_stale_staging`).
"""

from __future__ import annotations

import pyarrow.fs as pafs

from hms_catalog.cache.versions import CatalogObject, ChangeKind
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.commits.completion import partitions_intent
from hms_catalog.commits.staging import remove_stale_staging, table_root
from hms_catalog.ddl.alter import partition_provider
from hms_catalog.ddl.context import DdlContext, DdlOutcome, RecordedChanges, table_locked
from hms_catalog.ddl.locations import check_location, delete_remaining, resolved_location
from hms_catalog.ddl.partition_values import normalized_values
from hms_catalog.ddl.specs import AddPartitions, DropPartitions, PartitionValues, RecoverPartitions
from hms_catalog.ddl.structs import partition_struct
from hms_catalog.ddl.tables import changeable_table
from hms_catalog.errors import AlreadyExistsError, ConfigurationError, MetastoreError, NotFoundError
from hms_catalog.formats.detect import TableFormat, detect
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name, parse_partition_name
from hms_catalog.storage.files import exists
from hms_catalog.storage.locations import is_hidden
from hms_catalog.storage.resolver import StorageResolver, split_location

__all__ = ["add_partitions", "drop_partitions", "recover_partitions"]


def _partitioned(ctx: DdlContext, database: str, name: str, action: str) -> ttypes.Table:
    struct = changeable_table(ctx, database, name, action)
    if detect(struct).format is TableFormat.ICEBERG:
        raise ConfigurationError(f"{database}.{name} is an Iceberg table: its partitions are Iceberg's own, "
                                 f"made by its writes, not by {action}")
    if not struct.partitionKeys:
        raise ConfigurationError(f"table '{ctx.catalog.name}.{database}.{name}' is not partitioned")
    return struct


def _add(ctx: DdlContext, changes: RecordedChanges, struct: ttypes.Table, partitions: list[ttypes.Partition]) -> int:
    """Add ``partitions`` (none of which existed a moment ago) in batches, each written to an undo log first: a
    failure leaves none of them. The whole set is written down before the first batch, so a process killed
    in the middle leaves them to the next start to complete (the metastore may still be adding the batch it
    was killed in; see hms_catalog.commits.completion)."""
    database, name = struct.dbName.lower(), struct.tableName.lower()
    keys = [k.name.lower() for k in struct.partitionKeys]
    with ctx.undoable(changes, database, name) as log:
        log.will_complete("add_partitions", **partitions_intent(keys, partitions))
        for start in range(0, len(partitions), ctx.partition_batch):
            batch = partitions[start : start + ctx.partition_batch]
            log.will("added_partitions", database=database, table=name, names=[_name(keys, p) for p in batch])
            try:
                ctx.client.add_partitions(batch)
            except AlreadyExistsError:
                log.forget_last()  # nothing of the batch was added, and what exists is not this statement's to drop
                raise
            except MetastoreError as error:
                try:
                    _raise_if_one_existed(ctx, struct, keys, batch, error)
                except AlreadyExistsError:
                    log.forget_last()
                    raise
                raise
    return len(partitions)


def _existing(ctx: DdlContext, struct: ttypes.Table, partitions: list[ttypes.Partition]) -> list[ttypes.Partition]:
    """Which of ``partitions`` the table has already (one call per batch)."""
    database, name = struct.dbName.lower(), struct.tableName.lower()
    keys = [k.name.lower() for k in struct.partitionKeys]
    found: list[ttypes.Partition] = []
    batch = ctx.partition_batch
    for start in range(0, len(partitions), batch):
        found += ctx.catalog.client.get_partitions_by_names(database, name, [_name(keys, p) for p in partitions[start : start + batch]])
    return found


def _raise_if_one_existed(ctx: DdlContext, struct: ttypes.Table, keys: list[str], batch: list[ttypes.Partition],
                          error: MetastoreError) -> None:
    """A batch that failed because one of its partitions existed, told as such (AlreadyExistsError naming it).

    The metastore may report that case as something else: Hive 2.3 cleans up the folders it made for the
    batch on other threads and can fail with a ConcurrentModificationException instead. The batch is one
    metastore transaction, so when not all of it is there now, none of it was added."""
    if isinstance(error, AlreadyExistsError):
        return
    database, name = struct.dbName.lower(), struct.tableName.lower()
    found = ctx.catalog.client.get_partitions_by_names(database, name, [_name(keys, p) for p in batch])
    if found and len(found) < len(batch):
        first = _name(keys, found[0])
        raise AlreadyExistsError("partition", f"{ctx.catalog.name}.{database}.{name} ({first})") from error


def _shortened(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def _name(keys: list[str], partition: ttypes.Partition) -> str:
    return make_partition_name(keys, [None if v == DEFAULT_PARTITION else v for v in partition.values])


@table_locked
def add_partitions(ctx: DdlContext, database: str, name: str, change: AddPartitions) -> DdlOutcome:
    database, name = database.lower(), name.lower()
    struct = _partitioned(ctx, database, name, "ADD PARTITION")
    full = f"{ctx.catalog.name}.{database}.{name}"
    structs = []
    for partition in change.partitions:
        values = normalized_values(struct, partition)
        location = _resolved(struct, partition.location)
        if location is not None:
            check_location(location, f"a partition of {full}", ctx.catalog.storage)
        normalized = PartitionValues(tuple(values.items()), location)
        structs.append(partition_struct(struct, normalized))
    # Which exist is asked first, so that a statement that would fail on one fails before it adds any, and a
    # killed one is completed with exactly the partitions it was adding.
    existing = {tuple(p.values) for p in _existing(ctx, struct, structs)}
    if existing and not change.if_not_exists:
        keys = [k.name.lower() for k in struct.partitionKeys]
        first = next(p for p in structs if tuple(p.values) in existing)
        raise AlreadyExistsError("partition", f"{full} ({_name(keys, first)})")
    to_add = [p for p in structs if tuple(p.values) not in existing]
    skipped = len(structs) - len(to_add)
    existed = f", {skipped} existed already" if skipped else ""
    if not to_add:
        return ctx.outcome(f"0 partition(s) added to '{full}'{existed}")
    batches = -(-len(to_add) // ctx.partition_batch)
    with ctx.changing([(database, name)], events=[("ADD_PARTITION", database, name, batches)]) as changes:
        added = _add(ctx, changes, struct, to_add)
        changes.append((ChangeKind.CHANGED, CatalogObject("partitions", database, name)))
    return ctx.outcome(f"{added} partition(s) added to '{full}'{existed}", changes)


def _resolved(struct: ttypes.Table, location: str | None) -> str | None:
    """A partition LOCATION as Spark and Hive read it: a relative one lies under the table's."""
    if location is None:
        return None
    return resolved_location(location, struct.sd.location if struct.sd is not None else None, "a partition",
                             f"table {struct.dbName}.{struct.tableName}")


def _matching(ctx: DdlContext, struct: ttypes.Table, specs: tuple[PartitionValues, ...], if_exists: bool) -> list[str]:
    database, name = struct.dbName.lower(), struct.tableName.lower()
    names = ctx.catalog.client.get_partition_names(database, name)
    wanted: list[str] = []
    for spec in specs:
        values = normalized_values(struct, spec, partial=True)
        found = [n for n in names if all(dict(parse_partition_name(n)).get(k) == v for k, v in values.items())]
        if not found and not if_exists:
            shown = ", ".join(f"{k}={v}" for k, v in values.items())
            raise NotFoundError("partition", f"{ctx.catalog.name}.{database}.{name} ({shown})")
        wanted += [n for n in found if n not in wanted]
    return wanted


@table_locked
def drop_partitions(ctx: DdlContext, database: str, name: str, change: DropPartitions) -> DdlOutcome:
    database, name = database.lower(), name.lower()
    struct = _partitioned(ctx, database, name, "DROP PARTITION")
    full = f"{ctx.catalog.name}.{database}.{name}"
    names = _matching(ctx, struct, change.partitions, change.if_exists)
    if not names:
        return ctx.outcome(f"no partition of '{full}' matched; nothing changed")
    located = _object_store_locations(ctx, struct, names)
    with ctx.changing([(database, name)], events=[("DROP_PARTITION", database, name, len(names))]) as changes:
        dropped = ctx.client.drop_partitions(database, name, names, delete_data=True, if_exists=change.if_exists)
        changes.append((ChangeKind.CHANGED, CatalogObject("partitions", database, name)))
    left = [remaining for location in located for remaining in delete_remaining(location, ctx.catalog.storage)]
    if left:
        return ctx.outcome(f"{dropped} partition(s) dropped from '{full}', but files of them remain (e.g. "
                           f"{', '.join(left[:3])}): delete them by hand", changes)
    return ctx.outcome(f"{dropped} partition(s) dropped from '{full}'", changes)


def _object_store_locations(ctx: DdlContext, struct: ttypes.Table, names: list[str]) -> list[str]:
    """The locations of a managed table's partitions ``names`` that lie on a store other than a local disk:
    the catalog deletes their files itself after the drop, with its own credentials (the metastore's
    filesystem may not reach the store, or may lack the rights); a local disk is the metastore's to clean."""
    managed = struct.tableType == "MANAGED_TABLE" and (struct.parameters or {}).get("EXTERNAL", "").upper() != "TRUE"
    if not managed or split_location(table_root(struct.sd.location if struct.sd else "") or "/")[0] == "file":
        return []
    found = []
    for start in range(0, len(names), ctx.partition_batch):
        for partition in ctx.catalog.client.get_partitions_by_names(struct.dbName, struct.tableName,
                                                                   names[start : start + ctx.partition_batch]):
            location = partition.sd.location if partition.sd is not None else None
            if location and split_location(location)[0] != "file":
                found.append(location)
    return found


def _folders(location: str, keys: list[str], storage: StorageResolver) -> dict[str, dict[str, str]]:
    """``k=v/k2=v2`` folders under ``location`` with one level per key (hidden ones skipped), by partition name,
    each with the statistics the metastore would count in it when its partition is added (``numFiles`` and
    ``totalSize`` of the visible files under it): counted from this one listing, they spare the metastore a
    listing of every folder (as Spark's own MSCK spares it)."""
    storage.check_container(location)  # a missing bucket is no empty folder: its partitions must not go
    try:
        filesystem, root = storage.resolve(location)
        entries = filesystem.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    except OSError as error:
        raise storage.error(location, error, "list") from None
    base = root.rstrip("/")
    found: dict[str, list[int]] = {}
    files: list[tuple[list[str], int]] = []
    for entry in entries:
        parts = entry.path[len(base) :].strip("/").split("/")
        if entry.type == pafs.FileType.File:
            files.append((parts, entry.size or 0))
        if entry.type != pafs.FileType.Directory or len(parts) != len(keys) or is_hidden("/".join(parts)):
            continue
        pairs = [part.split("=", 1) for part in parts]
        if all(len(pair) == 2 and pair[0].lower() == key for pair, key in zip(pairs, keys)):
            found["/".join(parts)] = [0, 0]
    for parts, size in files:
        counted = found.get("/".join(parts[: len(keys)])) if len(parts) > len(keys) else None
        if counted is not None and not is_hidden("/".join(parts[len(keys) :])):
            counted[0] += 1
            counted[1] += size
    return {name: {"numFiles": str(count), "totalSize": str(size)} for name, (count, size) in found.items()}


def _vanished(ctx: DdlContext, database: str, name: str, keys: list[str], candidates: list[str]) -> list[str]:
    """Of the partitions with no ``k=v`` folder under the table, those whose own location is gone too (a
    partition may live elsewhere: a LOCATION of its own, or a folder a write swapped in)."""
    gone = []
    for start in range(0, len(candidates), ctx.partition_batch):
        for partition in ctx.catalog.client.get_partitions_by_names(database, name, candidates[start : start + ctx.partition_batch]):
            location = partition.sd.location if partition.sd is not None else None
            if not location or not exists(ctx.catalog.storage, location):
                gone.append(make_partition_name(keys, [None if v == DEFAULT_PARTITION else v for v in partition.values]))
    return sorted(gone)


@table_locked
def recover_partitions(ctx: DdlContext, database: str, name: str, change: RecoverPartitions) -> DdlOutcome:
    database, name = database.lower(), name.lower()
    struct = _partitioned(ctx, database, name, "RECOVER PARTITIONS")
    full = f"{ctx.catalog.name}.{database}.{name}"
    location = struct.sd.location if struct.sd else None
    if not location:
        raise ConfigurationError(f"table '{full}' has no location to look for partition folders in")
    keys = [k.name.lower() for k in struct.partitionKeys]
    folders = _folders(location, keys, ctx.catalog.storage)
    known = set(ctx.catalog.client.get_partition_names(database, name))
    missing = sorted(set(folders) - known) if change.add else []
    vanished = _vanished(ctx, database, name, keys, sorted(known - set(folders))) if change.drop else []
    remove_stale_staging(ctx.catalog, struct, table_root(location))  # what crashed writes left
    to_add = []
    for folder in missing:
        values = tuple((k, v) for k, v in parse_partition_name(folder))
        try:
            spec = PartitionValues(values, f"{location.rstrip('/')}/{folder}")
            to_add.append(partition_struct(struct, PartitionValues(tuple(normalized_values(struct, spec).items()), spec.location),
                                           parameters=folders[folder]))
        except ConfigurationError:
            continue  # a folder whose value does not parse as its key's type is not a partition (Hive skips it too)
    # Spark's own RECOVER PARTITIONS of a data source table records that the metastore now keeps its partitions.
    stamp = partition_provider(struct, tracked=True) if (struct.parameters or {}).get("spark.sql.sources.provider") else {}
    stamp = {k: v for k, v in stamp.items() if (struct.parameters or {}).get(k) != v}
    if not to_add and not vanished and not stamp:
        return ctx.outcome(f"the partitions of '{full}' match its folders; nothing changed")
    batches = -(-len(to_add) // ctx.partition_batch)
    events = [("ADD_PARTITION", database, name, batches)] if to_add else []
    events += [("DROP_PARTITION", database, name, len(vanished))] if vanished else []
    events += [("ALTER_TABLE", database, name, 1)] if stamp else []
    with ctx.changing([(database, name)], events=events) as changes:
        if stamp:
            struct.parameters = {**(struct.parameters or {}), **stamp}
            ctx.client.alter_table(database, name, struct)
        added = _add(ctx, changes, struct, to_add) if to_add else 0  # only folders the metastore lacks
        dropped = ctx.client.drop_partitions(database, name, vanished, delete_data=False, if_exists=True) if vanished else 0
        changes.append((ChangeKind.CHANGED, CatalogObject("partitions", database, name)))
    return ctx.outcome(f"partitions of '{full}' recovered: {added} added" + (f", {dropped} dropped" if change.drop else ""), changes)

