"""The catalog store's first tables: definitions, version counters, change log, event leases, audit trail.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "catalogs",
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("id", sa.String(64), nullable=False, unique=True),
        sa.Column("comment", sa.Text, nullable=False),
        sa.Column("properties", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_table(
        "catalog_counters",
        sa.Column("catalog_id", sa.String(64), primary_key=True),
        sa.Column("current", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "catalog_changes",
        sa.Column("catalog_id", sa.String(64), primary_key=True),
        sa.Column("version", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("object_kind", sa.String(16), nullable=False),
        sa.Column("database_name", sa.String(255), nullable=False),
        sa.Column("table_name", sa.String(255), nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("replica", sa.String(64), nullable=False),
        sa.Column("fence", sa.BigInteger, nullable=True),
        sa.Column("recorded_at", sa.Float, nullable=False),
    )
    op.create_table(
        "event_leases",
        sa.Column("catalog_id", sa.String(64), primary_key=True),
        sa.Column("holder", sa.String(255), nullable=False),
        sa.Column("fence", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("last_event_id", sa.BigInteger, nullable=True),
    )
    op.create_table(
        "audit_trail",
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("recorded_at", sa.Float, nullable=False),
        sa.Column("replica", sa.String(255), nullable=False),
        sa.Column("entry", sa.Text, nullable=False),
    )
    op.create_index("audit_trail_time", "audit_trail", ["recorded_at"])


def downgrade() -> None:
    op.drop_index("audit_trail_time", "audit_trail")
    for table in ("audit_trail", "event_leases", "catalog_changes", "catalog_counters", "catalogs"):
        op.drop_table(table)
