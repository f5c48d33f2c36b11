"""Syntax-tree nodes of the DDL statements: names as written (resolved against the session later) around the
DDL specs the operations take (:mod:`hms_catalog.ddl.specs`).

A spec's own ``database`` and ``name`` are placeholders filled from the resolved name when the statement
runs; everything else in it is as the statement says.
"""

from __future__ import annotations

from dataclasses import dataclass

from hms_catalog.ddl.specs import DatabaseSpec, TableChange, TableSpec
from hms_catalog.sql.ast import DatabaseName, Properties, Statement, TableName
from hms_catalog.sql.expressions import Expression

__all__ = [
    "CreateDatabase", "DropDatabase", "AlterDatabase", "CreateTable", "CreateTableLike", "DropTable", "AlterTable",
    "AlterTableRename", "ShowPartitions", "ShowCreateTable", "ShowTblProperties", "ShowColumns", "ShowViews", "SetOption",
    "DDL_STATEMENTS",
]


@dataclass(frozen=True)
class CreateDatabase(Statement):
    """``CREATE DATABASE|SCHEMA|NAMESPACE [IF NOT EXISTS] [cat.]db [COMMENT ..] [LOCATION ..] [WITH DBPROPERTIES (..)]``."""

    target: DatabaseName
    spec: DatabaseSpec


@dataclass(frozen=True)
class DropDatabase(Statement):
    """``DROP DATABASE|SCHEMA|NAMESPACE [IF EXISTS] [cat.]db [RESTRICT|CASCADE]``."""

    target: DatabaseName
    if_exists: bool = False
    cascade: bool = False


@dataclass(frozen=True)
class AlterDatabase(Statement):
    """``ALTER DATABASE|SCHEMA|NAMESPACE [cat.]db SET DBPROPERTIES|PROPERTIES (..) | SET LOCATION 'uri'``."""

    target: DatabaseName
    properties: Properties = ()
    location: str | None = None


@dataclass(frozen=True)
class CreateTable(Statement):
    """``CREATE [EXTERNAL] TABLE [IF NOT EXISTS] [[cat.]db.]t (columns) ...``."""

    table: TableName
    spec: TableSpec


@dataclass(frozen=True)
class CreateTableLike(Statement):
    """``CREATE [EXTERNAL] TABLE [IF NOT EXISTS] t LIKE [[cat.]db.]other [USING ..] [ROW FORMAT ..] [STORED AS ..]
    [LOCATION 'uri'] [TBLPROPERTIES (..)]`` (a table, not a path): ``storage`` holds the clauses given, in a
    spec whose columns are empty."""

    table: TableName
    source: TableName
    if_not_exists: bool = False
    location: str | None = None
    external: bool = False
    storage: TableSpec | None = None


@dataclass(frozen=True)
class DropTable(Statement):
    """``DROP TABLE [IF EXISTS] [[cat.]db.]t [PURGE]``."""

    table: TableName
    if_exists: bool = False
    purge: bool = False


@dataclass(frozen=True)
class AlterTable(Statement):
    """``ALTER TABLE t <change>`` and ``MSCK REPAIR TABLE t [ADD|DROP|SYNC PARTITIONS]`` (a RecoverPartitions)."""

    table: TableName
    change: TableChange


@dataclass(frozen=True)
class AlterTableRename(Statement):
    """``ALTER TABLE t RENAME TO t2 | db.t2 | cat.db.t2`` (the same catalog only)."""

    table: TableName
    new: TableName


@dataclass(frozen=True)
class ShowPartitions(Statement):
    """``SHOW PARTITIONS [FROM|IN] t [PARTITION (k='v', ..)] [WHERE predicate]``."""

    table: TableName
    partition: tuple[tuple[str, str | None], ...] = ()
    where: Expression | None = None


@dataclass(frozen=True)
class ShowCreateTable(Statement):
    table: TableName


@dataclass(frozen=True)
class ShowTblProperties(Statement):
    """``SHOW TBLPROPERTIES t [('key')]``."""

    table: TableName
    key: str | None = None


@dataclass(frozen=True)
class ShowColumns(Statement):
    """``SHOW COLUMNS FROM|IN t [FROM|IN [cat.]db]`` (Spark's: the database may be named apart from the table)."""

    table: TableName


@dataclass(frozen=True)
class ShowViews(Statement):
    """``SHOW VIEWS [FROM|IN [cat.]db] [[LIKE] 'pattern']``."""

    database: DatabaseName | None = None
    pattern: str | None = None


@dataclass(frozen=True)
class SetOption(Statement):
    """``SET key = value`` for the session (``SET sync_ddl = true``); ``SET key`` shows it."""

    key: str
    value: str | None = None


DDL_STATEMENTS: tuple[type[Statement], ...] = (
    CreateDatabase, DropDatabase, AlterDatabase, CreateTable, CreateTableLike, DropTable, AlterTable, AlterTableRename,
)
