"""A counter row that every change of a catalog definition bumps: the definitions' generation.

A process that holds a live catalog reads this row together with the catalog's own counter (one indexed
query per statement) and reads the definition itself only when the generation moved.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_GENERATION = "*definitions"  # hms_catalog.state.schema.DEFINITIONS_GENERATION


def upgrade() -> None:
    counters = sa.table("catalog_counters", sa.column("catalog_id", sa.String), sa.column("current", sa.BigInteger))
    op.bulk_insert(counters, [{"catalog_id": _GENERATION, "current": 0}])


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM catalog_counters WHERE catalog_id = :key").bindparams(key=_GENERATION))
