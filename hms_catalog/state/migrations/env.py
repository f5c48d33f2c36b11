"""Alembic's entry: runs on the connection the store hands over (see hms_catalog.state.database)."""

from __future__ import annotations

from alembic import context

from hms_catalog.state.schema import METADATA

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=METADATA, render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
