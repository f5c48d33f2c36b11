"""The catalog store's tables, declared once with SQLAlchemy Core (the migrations create the same ones).

- ``catalogs``: the definitions (what CREATE CATALOG said), one row per catalog, with the version that
  compare-and-set (``If-Match``) checks.
- ``catalog_counters``: each catalog's newest change-log version. Allocating a version updates this row,
  so two replicas recording at once are serialised by its row lock and commit in version order: a reader
  that asks for versions above the last one it saw never skips one committed late.
  One more row, ``DEFINITIONS_GENERATION``, counts the changes of every catalog definition: a process reads
  it with a catalog's own row (one indexed query) and re-reads the definition only when it moved.
- ``catalog_changes``: the change log, bounded per catalog, with the replica that recorded each change
  and, for a metastore event, the lease number (fencing token) under which it was recorded.
- ``event_leases``: which replica follows which catalog's metastore events, until when, under which lease
  number, and the last event id applied (where the next holder resumes).
- ``audit_trail``: one row per change asked of a service, refused and failed ones included.
- ``service_tokens``: the named tokens every replica accepts, as SHA-256 digests (never the tokens).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Float, Index, Integer, MetaData, String, Table, Text

__all__ = ["METADATA", "AUDIT", "CATALOGS", "CHANGES", "COUNTERS", "DEFINITIONS_GENERATION", "LEASES", "TOKENS"]

METADATA = MetaData()

CATALOGS = Table(
    "catalogs", METADATA,
    Column("name", String(255), primary_key=True),
    Column("id", String(64), nullable=False, unique=True),
    Column("comment", Text, nullable=False, default=""),
    Column("properties", Text, nullable=False),  # a JSON object of strings
    Column("version", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)

COUNTERS = Table(
    "catalog_counters", METADATA,
    Column("catalog_id", String(64), primary_key=True),
    Column("current", BigInteger, nullable=False),
)

# The counter row of the definitions' generation (no catalog id has this shape: ids are hex).
DEFINITIONS_GENERATION = "*definitions"

CHANGES = Table(
    "catalog_changes", METADATA,
    Column("catalog_id", String(64), primary_key=True),
    Column("version", BigInteger, primary_key=True, autoincrement=False),
    Column("kind", String(16), nullable=False),
    Column("object_kind", String(16), nullable=False),
    Column("database_name", String(255), nullable=False, default=""),
    Column("table_name", String(255), nullable=False, default=""),
    Column("detail", Text, nullable=False, default=""),
    Column("source", String(16), nullable=False),
    Column("replica", String(64), nullable=False),
    Column("fence", BigInteger, nullable=True),
    Column("recorded_at", Float, nullable=False),
)

LEASES = Table(
    "event_leases", METADATA,
    Column("catalog_id", String(64), primary_key=True),
    Column("holder", String(255), nullable=False),
    Column("fence", BigInteger, nullable=False),
    Column("expires_at", Float, nullable=False),
    Column("last_event_id", BigInteger, nullable=True),
)

AUDIT = Table(
    "audit_trail", METADATA,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("recorded_at", Float, nullable=False),
    Column("replica", String(255), nullable=False),
    Column("entry", Text, nullable=False),  # the JSON line the audit log writes
    Index("audit_trail_time", "recorded_at"),
)


TOKENS = Table(
    "service_tokens", METADATA,
    Column("name", String(64), primary_key=True),
    Column("digest", String(64), nullable=False, unique=True),
    Column("access", String(16), nullable=False),
    Column("catalogs", Text, nullable=False),  # a JSON list of names, or ["*"]
    Column("updated_at", Float, nullable=False),
)
