"""Syntax-tree nodes of the catalog DSL: plain frozen values, one class per statement form.

Nodes carry names exactly as written (the executor decides about case) and no behaviour, so they can be
compared in tests, logged, pickled and handed to any executor.  ``text`` keeps the statement's source for
history and messages; it stays out of equality so two spellings of one statement compare equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hms_catalog.sql.expressions import Expression

__all__ = [
    "Statement",
    "TableName",
    "DatabaseName",
    "Properties",
    "CreateCatalog",
    "AlterTableFormat",
    "CreateTableLikePath",
    "DropCatalog",
    "AlterCatalogProperties",
    "RenameCatalog",
    "ShowCatalogs",
    "ShowChanges",
    "ShowCreateCatalog",
    "SwitchCatalog",
    "UseDatabase",
    "ShowDatabases",
    "ShowTables",
    "DescribeTable",
    "RefreshCatalog",
    "RefreshDatabase",
    "RefreshTable",
    "Query",
    "ShowCache",
    "ShowSchemaCache",
    "ShowTableStatus",
    "ShowSplits",
    "ExplainSplits",
]

# Ordered (key, value) pairs as written; a tuple so that nodes stay hashable.
Properties = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class TableName:
    """``[[catalog.]database.]table``; missing parts are resolved against the session later."""

    catalog: str | None
    database: str | None
    table: str


@dataclass(frozen=True)
class DatabaseName:
    """``[catalog.]database``; a missing catalog means the current one."""

    catalog: str | None
    database: str


@dataclass(frozen=True)
class Statement:
    """Base of every statement node.

    ``text`` is keyword-only so it sorts after the fields of every subclass in ``__init__``; subclasses can
    therefore declare required fields and be built positionally.
    """

    text: str = field(default="", compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class CreateCatalog(Statement):
    name: str
    properties: Properties
    comment: str | None = None
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropCatalog(Statement):
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class AlterCatalogProperties(Statement):
    name: str
    properties: Properties


@dataclass(frozen=True)
class AlterTableFormat(Statement):
    """``ALTER TABLE t REFRESH METADATA | PROMOTE | SET FORMAT (...)`` on a filesystem catalog's table."""

    table: TableName
    action: str  # REFRESH METADATA, PROMOTE or SET FORMAT
    properties: Properties = ()


@dataclass(frozen=True)
class CreateTableLikePath(Statement):
    """``CREATE TABLE [IF NOT EXISTS] t LIKE PATH 'uri'``: register a folder of files in a metastore."""

    table: TableName
    path: str
    if_not_exists: bool = False


@dataclass(frozen=True)
class RenameCatalog(Statement):
    name: str
    new_name: str


@dataclass(frozen=True)
class ShowCatalogs(Statement):
    pass


@dataclass(frozen=True)
class ShowCreateCatalog(Statement):
    name: str


@dataclass(frozen=True)
class SwitchCatalog(Statement):
    name: str


@dataclass(frozen=True)
class UseDatabase(Statement):
    target: DatabaseName


@dataclass(frozen=True)
class ShowDatabases(Statement):
    """``SHOW DATABASES|SCHEMAS|NAMESPACES [FROM|IN catalog] [[LIKE] 'pattern']``."""

    catalog: str | None = None
    pattern: str | None = None


@dataclass(frozen=True)
class ShowTables(Statement):
    database: DatabaseName | None = None
    pattern: str | None = None


@dataclass(frozen=True)
class DescribeTable(Statement):
    table: TableName


@dataclass(frozen=True)
class RefreshCatalog(Statement):
    name: str


@dataclass(frozen=True)
class RefreshDatabase(Statement):
    target: DatabaseName


@dataclass(frozen=True)
class RefreshTable(Statement):
    table: TableName


@dataclass(frozen=True)
class ShowCache(Statement):
    catalog: str | None = None


@dataclass(frozen=True)
class ShowChanges(Statement):
    """The catalog's change log after version ``since`` (all retained changes when None)."""

    catalog: str | None = None
    since: int | None = None


@dataclass(frozen=True)
class ShowSchemaCache(Statement):
    catalog: str | None = None


@dataclass(frozen=True)
class ShowTableStatus(Statement):
    database: DatabaseName | None = None
    pattern: str | None = None


@dataclass(frozen=True)
class ShowSplits(Statement):
    """The splits a read of ``table`` would get, after pruning with ``where``."""

    table: TableName
    where: Expression | None = None


@dataclass(frozen=True)
class ExplainSplits(Statement):
    """How the splits of ``table`` are planned: which partitions and files ``where`` keeps, and why."""

    table: TableName
    where: Expression | None = None


@dataclass(frozen=True)
class Query(Statement):
    """A SELECT (or WITH ...) query, kept as text: it runs on Spark, which parses it."""

    sql: str
