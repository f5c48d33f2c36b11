"""Catalog definitions in the catalog store, with the same interface as the JSON store they replace.

Every change is one transaction; compare-and-set (``If-Match``) is a conditional update (``WHERE version
= expected``), so two replicas altering one catalog at once cannot both win. Lookups read the store each
time (one indexed row): a definition changed through another replica is seen on the next request.

On the first open of a home that still has a ``catalogs.json`` (the store of earlier releases), its
definitions are imported in the same transaction that finds the table empty, and the file is renamed
``catalogs.json.imported`` as a backup.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from hms_catalog.errors import AlreadyExistsError, NotFoundError, VersionMismatchError
from hms_catalog.state.database import StoreDatabase
from hms_catalog.state.schema import CATALOGS, COUNTERS, DEFINITIONS_GENERATION
from hms_catalog.store import CatalogDefinition, CatalogStore, expect_version

__all__ = ["SqlCatalogStore", "IMPORTED_SUFFIX"]

IMPORTED_SUFFIX = ".imported"


class SqlCatalogStore:
    """Catalog definitions in ``database``; ``home`` is where this process keeps its local files."""

    def __init__(self, home: str | os.PathLike[str], database: StoreDatabase) -> None:
        self.home = Path(home).expanduser()
        self.database = database
        self._imported = False

    @property
    def path(self) -> str:
        """Where the definitions are, as it may be shown (no password)."""
        return self.database.describe()

    def list(self) -> list[CatalogDefinition]:
        self._import_once()
        with self.database.reading() as connection:
            rows = connection.execute(select(CATALOGS).order_by(CATALOGS.c.name)).mappings().all()
        return [_definition(row) for row in rows]

    def find(self, name: str) -> CatalogDefinition | None:
        self._import_once()
        with self.database.reading() as connection:
            return _find(connection, name.lower())

    def get(self, name: str) -> CatalogDefinition:
        found = self.find(name)
        if found is None:
            raise NotFoundError("catalog", name.lower())
        return found

    def create(self, definition: CatalogDefinition, *, if_not_exists: bool = False) -> CatalogDefinition | None:
        self._import_once()
        stored = replace(definition, name=definition.name.lower())
        try:
            with self.database.writing() as connection:
                if _find(connection, stored.name) is not None:
                    if if_not_exists:
                        return None
                    raise AlreadyExistsError("catalog", stored.name)
                connection.execute(insert(CATALOGS).values(**_row(stored)))
                _bump_generation(connection)
        except IntegrityError as error:  # another replica created it between our check and our insert
            if if_not_exists:
                return None
            raise AlreadyExistsError("catalog", stored.name) from error
        return stored

    def update(self, name: str, change: Callable[[CatalogDefinition], CatalogDefinition], *,
               expected_version: int | None = None) -> CatalogDefinition:
        key = name.lower()
        with self.database.writing() as connection:
            current = expect_version(_find(connection, key), key, expected_version)
            changed = change(current)
            stored = replace(changed, name=key, id=current.id, version=current.version + 1,
                             created_at=current.created_at, updated_at=time.time())
            _conditional_update(connection, key, current.version, _row(stored))
            _bump_generation(connection)
        return stored

    def rename(self, name: str, new_name: str, *, expected_version: int | None = None) -> CatalogDefinition:
        old, new = name.lower(), new_name.lower()
        try:
            with self.database.writing() as connection:
                current = expect_version(_find(connection, old), old, expected_version)
                if _find(connection, new) is not None:
                    raise AlreadyExistsError("catalog", new)
                stored = replace(current, name=new, version=current.version + 1, updated_at=time.time())
                _conditional_update(connection, old, current.version, _row(stored))
                _bump_generation(connection)
        except IntegrityError as error:
            raise AlreadyExistsError("catalog", new) from error
        return stored

    def drop(self, name: str, *, if_exists: bool = False, expected_version: int | None = None) -> CatalogDefinition | None:
        key = name.lower()
        with self.database.writing() as connection:
            current = _find(connection, key)
            if expected_version is not None:
                expect_version(current, key, expected_version)
            if current is None:
                if if_exists:
                    return None
                raise NotFoundError("catalog", key)
            connection.execute(delete(CATALOGS).where(CATALOGS.c.name == key, CATALOGS.c.version == current.version))
            connection.execute(delete(COUNTERS).where(COUNTERS.c.catalog_id == current.id))
            _bump_generation(connection)
        return current

    def _import_once(self) -> None:
        """Bring the definitions of an earlier release's ``catalogs.json`` in, once, and keep the file as a backup."""
        if self._imported:
            return
        legacy = CatalogStore(self.home)
        if Path(legacy.path).exists():
            with self.database.writing() as connection:
                if connection.execute(select(CATALOGS.c.name).limit(1)).first() is None:
                    for definition in legacy.list():
                        connection.execute(insert(CATALOGS).values(**_row(definition)))
                    _bump_generation(connection)
            os.replace(legacy.path, str(legacy.path) + IMPORTED_SUFFIX)
        self._imported = True


def _bump_generation(connection: Connection) -> None:
    """Count one more change of the definitions (the row is made by migration 0003, so this never inserts)."""
    connection.execute(update(COUNTERS).where(COUNTERS.c.catalog_id == DEFINITIONS_GENERATION)
                       .values(current=COUNTERS.c.current + 1))


def _conditional_update(connection: Connection, name: str, version: int, values: dict[str, Any]) -> None:
    done = connection.execute(update(CATALOGS).where(CATALOGS.c.name == name, CATALOGS.c.version == version).values(**values))
    if done.rowcount != 1:  # changed by another replica since we read it, inside our own transaction's window
        raise VersionMismatchError(f"catalog '{name}' changed while it was being altered: read it again")


def _find(connection: Connection, name: str) -> CatalogDefinition | None:
    row = connection.execute(select(CATALOGS).where(CATALOGS.c.name == name)).mappings().first()
    return None if row is None else _definition(row)


def _row(definition: CatalogDefinition) -> dict[str, Any]:
    return {
        "name": definition.name, "id": definition.id, "comment": definition.comment,
        "properties": json.dumps(dict(definition.properties), sort_keys=True), "version": definition.version,
        "created_at": definition.created_at, "updated_at": definition.updated_at,
    }


def _definition(row: Any) -> CatalogDefinition:
    return CatalogDefinition(
        name=row["name"], properties=json.loads(row["properties"]), comment=row["comment"], id=row["id"],
        version=int(row["version"]), created_at=float(row["created_at"]), updated_at=float(row["updated_at"]),
    )
