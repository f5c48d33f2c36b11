"""The named tokens of the service in the store: what ``serve --tokens`` set, for every replica.

Only a SHA-256 digest of each token is stored: the store (a database others administer, its backups) never
holds a credential. A request's token is hashed once and its digest compared with every stored one.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import delete, insert, select

from hms_catalog.state.database import StoreDatabase
from hms_catalog.state.schema import TOKENS

__all__ = ["StoredToken", "TokenStore", "token_digest"]


def token_digest(token: str | bytes) -> str:
    return hashlib.sha256(token.encode("utf-8") if isinstance(token, str) else token).hexdigest()


@dataclass(frozen=True)
class StoredToken:
    name: str
    digest: str
    access: str
    catalogs: tuple[str, ...]


class TokenStore:
    def __init__(self, database: StoreDatabase) -> None:
        self.database = database

    def replace(self, tokens: Sequence[StoredToken]) -> None:
        """Make ``tokens`` the named tokens of every replica, in one transaction."""
        now = time.time()
        with self.database.writing() as connection:
            connection.execute(delete(TOKENS))
            if tokens:
                connection.execute(insert(TOKENS), [
                    {"name": t.name, "digest": t.digest, "access": t.access, "catalogs": json.dumps(list(t.catalogs)),
                     "updated_at": now} for t in tokens])

    def list(self) -> list[StoredToken]:
        with self.database.reading() as connection:
            rows = connection.execute(select(TOKENS).order_by(TOKENS.c.name)).mappings().all()
        return [StoredToken(row["name"], row["digest"], row["access"], tuple(json.loads(row["catalogs"]))) for row in rows]
