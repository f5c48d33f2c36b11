"""One behaviour suite, two stores: every test taking ``database`` runs on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from hms_catalog.state import StoreDatabase, store_location
from tests.support.postgres import PostgresServer


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreDatabase]:
    """A fresh, empty store: a SQLite file, or a schema of its own on the session's PostgreSQL server."""
    if request.param == "sqlite":
        opened = StoreDatabase(store_location(tmp_path / "home"))
        yield opened
        opened.close()
        return
    server: PostgresServer = request.getfixturevalue("postgres")
    schema = f"t{uuid.uuid4().hex[:12]}"
    location = store_location(tmp_path / "home", f"{server.url}?options=-csearch_path%3D{schema}",
                              password_file=server.password_file)
    with location.engine().begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    opened = StoreDatabase(location)
    yield opened
    with location.engine().begin() as connection:
        connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    opened.close()
