"""The audit trail in the store: every replica's audit lines in one place, in the order they were written."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from sqlalchemy import insert, select

from hms_catalog.state.database import StoreDatabase
from hms_catalog.state.schema import AUDIT

__all__ = ["AuditTrail"]


class AuditTrail:
    def __init__(self, database: StoreDatabase, replica: str) -> None:
        self.database = database
        self.replica = replica

    def append(self, entry: Mapping[str, Any]) -> None:
        """Store one audit entry (already masked by the caller)."""
        with self.database.writing() as connection:
            connection.execute(insert(AUDIT).values(recorded_at=time.time(), replica=self.replica,
                                                    entry=json.dumps(dict(entry), ensure_ascii=False, default=str)))

    def newest(self, limit: int = 100) -> list[dict[str, Any]]:
        """The newest ``limit`` entries, oldest first, each with the replica that wrote it."""
        with self.database.reading() as connection:
            rows = connection.execute(select(AUDIT).order_by(AUDIT.c.seq.desc()).limit(limit)).mappings().all()
        return [{**json.loads(row["entry"]), "replica": row["replica"]} for row in reversed(rows)]
