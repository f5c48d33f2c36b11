"""SHOW CACHE, SHOW SCHEMA CACHE, SHOW TABLE STATUS and SHOW CHANGES: what the catalog knows, how it
knows it, and what changed."""

from __future__ import annotations

import time

from hms_catalog.cache.budget import format_size
from hms_catalog.execution.browse_commands import like_matcher
from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session, register
from hms_catalog.formats.metadata import TableMetadata
from hms_catalog.manager import EventFollowing
from hms_catalog.sql import ast

__all__ = ["CACHE_COLUMNS", "SCHEMA_CACHE_COLUMNS", "TABLE_STATUS_COLUMNS", "CHANGES_COLUMNS"]

CACHE_COLUMNS = ("Cache", "Entries", "Capacity", "TtlSeconds", "Hits", "Misses", "Loads", "Evictions", "AvgLoadMs", "Bytes",
                 "MemoryEvictions")
SCHEMA_CACHE_COLUMNS = ("Database", "Table", "Format", "Columns", "LoadedAt", "AgeSeconds", "Hits")
TABLE_STATUS_COLUMNS = ("Name", "Format", "FileFormat", "Location", "PartitionKeys", "Reason", "Version")
CHANGES_COLUMNS = ("Version", "Kind", "Object", "Source")


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


@register(ast.ShowCache)
def show_cache(session: Session, statement: ast.ShowCache) -> Result:
    """Each cache's figures; ``Bytes`` is what it holds as measured for the memory budget, ``MemoryEvictions``
    how many of its ``Evictions`` kept the budget. The message says the budget and what every catalog holds."""
    rows = []
    caches = session.catalog(statement.catalog).caches
    for cache in caches:
        stats = cache.stats()
        rows.append((
            stats.name, stats.entries, stats.capacity, stats.ttl_seconds, stats.hits, stats.misses,
            stats.loads, stats.evictions, round(stats.average_load_ms, 3), stats.bytes, stats.memory_evictions,
        ))
    budget = caches.budget
    message = "" if budget is None else (f"cache memory: {format_size(budget.held)} held by every catalog's caches, "
                                         f"of a budget of {format_size(budget.limit)}")
    return Result.table(CACHE_COLUMNS, rows, message)


@register(ast.ShowSchemaCache)
def show_schema_cache(session: Session, statement: ast.ShowSchemaCache) -> Result:
    now = time.time()
    rows = []
    for (database, table), entry in sorted(session.catalog(statement.catalog).caches.schema.entries()):
        metadata: TableMetadata = entry.value
        columns = len(metadata.schema.columns) if metadata.schema_loaded else None
        rows.append((
            database, table, metadata.detection.format.value, columns, _iso(entry.loaded_at),
            round(now - entry.loaded_at, 1), entry.hits,
        ))
    return Result.table(SCHEMA_CACHE_COLUMNS, rows)


@register(ast.ShowTableStatus)
def show_table_status(session: Session, statement: ast.ShowTableStatus) -> Result:
    database = session.database(statement.database)
    names = database.table_names()
    if statement.pattern is not None:
        matcher = like_matcher(statement.pattern)
        names = tuple(name for name in names if matcher.fullmatch(name))
    rows = []
    for metadata in database.tables_metadata(names):
        detection = metadata.detection
        name = metadata.table.tableName.lower()
        rows.append((
            name, detection.format.value, detection.file_format, detection.location,
            ",".join(metadata.partition_key_names), detection.reason, database.table_version(name),
        ))
    return Result.table(TABLE_STATUS_COLUMNS, rows)


@register(ast.ShowChanges)
def show_changes(session: Session, statement: ast.ShowChanges) -> Result:
    """The change log after a version, with the versions a caller needs to know whether it fell behind."""
    catalog = session.catalog(statement.catalog)
    since = statement.since or 0
    log = catalog.versions.changes(since)
    rows = [(change.version, change.kind.value, str(change.object), change.source.value) for change in log.changes]
    notes = [f"current version {log.current}", f"oldest retained version {log.oldest}"]
    if log.truncated:
        notes.append(f"changes after version {since} were dropped from the log (it keeps "
                     f"{catalog.versions.capacity}): REFRESH what you depend on")
    follower = catalog.follower
    if follower is not None and session.manager.events is EventFollowing.OFF:
        notes.append("metastore events are followed by a service on this home, not by this one-shot run")
    elif follower is None:
        notes.append("metastore events are not followed (hive.enable_hms_events_incremental_sync is false)")
    else:
        status = follower.status()
        notes.append(
            f"following metastore events: last event {status.last_event_id}, {status.applied} applied, "
            f"{status.superseded} superseded, {status.full_invalidations} full invalidations"
            if status.last_event_id is not None else "metastore events are followed from the catalog's first use"
        )
    return Result.table(CHANGES_COLUMNS, rows, message="; ".join(notes))
