"""SHOW CACHE, SHOW SCHEMA CACHE and SHOW TABLE STATUS: what the catalog knows and how it knows it."""

from __future__ import annotations

import time

from hms_catalog.execution.browse_commands import like_matcher
from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session, register
from hms_catalog.formats.metadata import TableMetadata
from hms_catalog.sql import ast

__all__ = ["CACHE_COLUMNS", "SCHEMA_CACHE_COLUMNS", "TABLE_STATUS_COLUMNS"]

CACHE_COLUMNS = ("Cache", "Entries", "Capacity", "TtlSeconds", "Hits", "Misses", "Loads", "Evictions", "AvgLoadMs")
SCHEMA_CACHE_COLUMNS = ("Database", "Table", "Format", "Columns", "LoadedAt", "AgeSeconds", "Hits")
TABLE_STATUS_COLUMNS = ("Name", "Format", "FileFormat", "Location", "PartitionKeys", "Reason")


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


@register(ast.ShowCache)
def show_cache(session: Session, statement: ast.ShowCache) -> Result:
    rows = []
    for cache in session.catalog(statement.catalog).caches:
        stats = cache.stats()
        rows.append((
            stats.name, stats.entries, stats.capacity, stats.ttl_seconds, stats.hits, stats.misses,
            stats.loads, stats.evictions, round(stats.average_load_ms, 3),
        ))
    return Result.table(CACHE_COLUMNS, rows)


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
        rows.append((
            metadata.table.tableName.lower(), detection.format.value, detection.file_format, detection.location,
            ",".join(metadata.partition_key_names), detection.reason,
        ))
    return Result.table(TABLE_STATUS_COLUMNS, rows)
