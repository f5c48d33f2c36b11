"""CREATE / DROP / ALTER / SHOW of catalogs: statements about definitions, never about the metastore."""

from __future__ import annotations

from datetime import UTC, datetime

from hms_catalog.errors import NotFoundError
from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session, register
from hms_catalog.properties import mask_properties
from hms_catalog.sql import ast
from hms_catalog.store import CatalogDefinition

__all__ = ["show_create_text", "SHOW_CATALOGS_COLUMNS"]

SHOW_CATALOGS_COLUMNS = ("CatalogName", "Type", "Comment", "CatalogId", "Version", "IsCurrent", "CreateTime", "LastUpdateTime")


def _time(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def show_create_text(definition: CatalogDefinition) -> str:
    """The CREATE CATALOG statement that makes ``definition`` again, with secrets masked."""
    lines = [f"CREATE CATALOG `{definition.name}`"]
    if definition.comment:
        lines.append(f"COMMENT {_quote(definition.comment)}")
    masked = mask_properties(definition.properties)
    pairs = [f"  {_quote(key)} = {_quote(masked[key])}" for key in sorted(masked)]
    lines.append("PROPERTIES (\n" + ",\n".join(pairs) + "\n)")
    return "\n".join(lines)


@register(ast.CreateCatalog)
def create_catalog(session: Session, statement: ast.CreateCatalog) -> Result:
    stored = session.manager.create(
        statement.name, dict(statement.properties), comment=statement.comment or "", if_not_exists=statement.if_not_exists
    )
    if stored is None:
        return Result.done(f"catalog '{statement.name.lower()}' exists already; nothing changed")
    return Result.done(f"catalog '{stored.name}' created")


@register(ast.DropCatalog)
def drop_catalog(session: Session, statement: ast.DropCatalog) -> Result:
    dropped = session.manager.drop(statement.name, if_exists=statement.if_exists)
    if dropped is None:
        return Result.done(f"catalog '{statement.name.lower()}' does not exist; nothing changed")
    if session.current_catalog == dropped.name:
        session.set_position(None, None)
    return Result.done(f"catalog '{dropped.name}' dropped")


@register(ast.AlterCatalogProperties)
def alter_catalog(session: Session, statement: ast.AlterCatalogProperties) -> Result:
    stored = session.manager.alter_properties(statement.name, dict(statement.properties))
    return Result.done(f"catalog '{stored.name}' altered (version {stored.version})")


@register(ast.RenameCatalog)
def rename_catalog(session: Session, statement: ast.RenameCatalog) -> Result:
    stored = session.manager.rename(statement.name, statement.new_name)
    if session.current_catalog == statement.name.lower():
        session.set_position(stored.name, session.current_database)
    return Result.done(f"catalog '{statement.name.lower()}' renamed to '{stored.name}'")


@register(ast.ShowCatalogs)
def show_catalogs(session: Session, statement: ast.ShowCatalogs) -> Result:
    rows = [
        (
            d.name, d.type, d.comment, d.id, d.version, d.name == session.current_catalog,
            _time(d.created_at), _time(d.updated_at),
        )
        for d in session.manager.definitions()
    ]
    return Result.table(SHOW_CATALOGS_COLUMNS, rows)


@register(ast.ShowCreateCatalog)
def show_create_catalog(session: Session, statement: ast.ShowCreateCatalog) -> Result:
    definition = session.manager.store.get(statement.name)
    return Result.table(("Catalog", "CreateCatalog"), [(definition.name, show_create_text(definition))])


@register(ast.SwitchCatalog)
def switch_catalog(session: Session, statement: ast.SwitchCatalog) -> Result:
    definition = session.manager.store.find(statement.name)
    if definition is None:
        raise NotFoundError("catalog", statement.name.lower())
    session.set_position(definition.name, None)
    return Result.done(f"switched to catalog '{definition.name}'")
