"""Who may do what: the principal a request's token names, what a statement needs, and the refusal.

Three levels: ``read`` runs every read statement, REFRESH and the change feed; ``write`` also changes
(databases, tables, partitions); ``admin`` (the server's own token) changes every catalog and the catalog
definitions themselves. A grant's ``catalogs`` limit both what it reads and what it changes (``*``, the
default, is every catalog). What a statement needs is decided by its node type from explicit lists, and a
type in none of them needs ``write``: a statement added later (a write path, say) is refused to read
tokens until it is classified here, never let through by default.

A :class:`Principal` is the grant one credential carries, whatever front end it came through: a named
token of the REST API and Iceberg REST, or a Kerberos principal of the thrift endpoint (:class:`AccessPolicy`
names the two sources). Every front end decides through :meth:`Principal.check` and :meth:`Principal.may_read`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from enum import Enum

from hms_catalog.errors import ErrorKind, HmsCatalogError
from hms_catalog.sql import ast, ast_ddl

__all__ = ["ADMIN", "Access", "AccessPolicy", "ForbiddenError", "Principal", "required_access", "statement_title", "target_catalog"]


class Access(str, Enum):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"


class ForbiddenError(HmsCatalogError):
    """The request's credential may not do this (403); names the token or principal and what it may do, never a secret."""

    error_kind = ErrorKind.FORBIDDEN

    def __init__(self, message: str, principal: Principal) -> None:
        super().__init__(message)
        self.token = principal.name
        self.access = principal.access.value
        self.catalogs = list(principal.catalogs)


_EVERY = "*"


@dataclass(frozen=True)
class Principal:
    """A credential's name, access and the catalogs it may read and (a write grant) change (``*``: every one).

    ``kind`` says what the name is in refusals: a ``token``'s name, or a Kerberos ``principal``."""

    name: str
    access: Access
    catalogs: tuple[str, ...] = (_EVERY,)
    kind: str = "token"

    def may_read(self, catalog: str) -> bool:
        return self.access is Access.ADMIN or _EVERY in self.catalogs or catalog.lower() in self.catalogs

    def may_change(self, catalog: str) -> bool:
        if self.access is Access.ADMIN:
            return True
        return self.access is Access.WRITE and self.may_read(catalog)

    def limits(self) -> str:
        """What the credential may do, in words, for refusals."""
        if self.access is Access.ADMIN:
            return "everything"
        if not self.catalogs:
            return "do nothing (no entry of the service's tokens file lists it)"
        shown = "every catalog" if _EVERY in self.catalogs else "catalog(s) " + ", ".join(self.catalogs)
        if self.access is Access.READ:
            return f"read {shown}, but change none"
        return f"read and change {shown} (not the catalog definitions)"

    def check(self, need: Access, catalog: str | None, what: str) -> None:
        """Raise ForbiddenError unless this credential may do ``what`` (a statement title) needing ``need`` on
        ``catalog``. With no catalog named or selected, a read passes (the statement itself says so)."""
        if self.access is Access.ADMIN:
            return
        prefix = f"permission denied: {self.kind} '{self.name}' may {self.limits()}"
        if need is Access.READ:
            if catalog is None or self.may_read(catalog):
                return
            raise ForbiddenError(f"{prefix}; {what} reads catalog '{catalog}'", self)
        if need is Access.ADMIN:
            raise ForbiddenError(f"{prefix}; {what} changes catalog definitions, which takes the server's own token", self)
        if self.access is Access.WRITE and (_EVERY in self.catalogs if catalog is None else self.may_change(catalog)):
            return  # with no catalog named or selected, the statement itself says so
        target = f"catalog '{catalog}'" if catalog else "a catalog"
        raise ForbiddenError(f"{prefix}; {what} changes {target}", self)


ADMIN = Principal("admin", Access.ADMIN)


class AccessPolicy(ABC):
    """Who a credential names, with what it may do: the one question every front end asks before deciding
    with :meth:`Principal.check`. Two sources answer it: the named tokens (a bearer header) and the Kerberos
    principals those entries list (a thrift connection's SASL identity). None: the credential gets nothing."""

    @abstractmethod
    def principal(self, credential: str | None) -> Principal | None:
        """The grant ``credential`` carries, or None."""


# Statements that only read, or only drop what is cached (REFRESH): any token runs them, on the catalogs it may read.
_READS: tuple[type[ast.Statement], ...] = (
    ast.ShowCatalogs, ast.ShowCreateCatalog, ast.SwitchCatalog, ast.UseDatabase, ast.ShowDatabases, ast.ShowTables,
    ast.DescribeTable, ast.RefreshCatalog, ast.RefreshDatabase, ast.RefreshTable, ast.ShowCache, ast.ShowSchemaCache,
    ast.ShowChanges, ast.ShowTableStatus, ast.ShowSplits, ast.ExplainSplits, ast.Query,
    ast_ddl.ShowPartitions, ast_ddl.ShowCreateTable, ast_ddl.ShowTblProperties, ast_ddl.ShowColumns, ast_ddl.ShowViews,
    ast_ddl.SetOption,
)
# Statements that change catalog definitions (the home's store): the admin token only.
_DEFINITIONS: tuple[type[ast.Statement], ...] = (ast.CreateCatalog, ast.DropCatalog, ast.AlterCatalogProperties, ast.RenameCatalog)


def required_access(statement: ast.Statement) -> Access:
    """What running ``statement`` takes; unknown statement types take ``write`` (fail closed)."""
    if isinstance(statement, _DEFINITIONS):
        return Access.ADMIN
    if isinstance(statement, ast.AlterTableFormat):
        # REFRESH METADATA detects a folder's format again, as REFRESH reloads; PROMOTE and SET FORMAT keep a choice.
        return Access.READ if statement.action.upper() == "REFRESH METADATA" else Access.WRITE
    if isinstance(statement, _READS):
        return Access.READ
    return Access.WRITE


def target_catalog(statement: ast.Statement, current: str | None) -> str | None:
    """The catalog ``statement`` changes (lower-case): the one its name gives, else the session's current one."""
    if isinstance(statement, (ast.CreateCatalog, ast.DropCatalog, ast.AlterCatalogProperties, ast.RenameCatalog)):
        return statement.name.lower()
    for field in ("table", "target"):
        name = getattr(statement, field, None)
        if isinstance(name, (ast.TableName, ast.DatabaseName)):
            return (name.catalog or current or "").lower() or None
    return current.lower() if current else None


_WORD = re.compile(r"[A-Z][a-z]*")


def statement_title(statement: ast.Statement) -> str:
    """``CREATE TABLE`` for a CreateTable node: how refusals and logs name a statement without its text."""
    if isinstance(statement, ast_ddl.AlterTable):
        return "ALTER TABLE " + " ".join(_WORD.findall(type(statement.change).__name__)).upper()
    return " ".join(_WORD.findall(type(statement).__name__)).upper()
