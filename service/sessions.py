"""The statement session of one request: every statement goes through :meth:`ServiceSession.execute`, which
passes each change through the change gate (:mod:`service.gate`: checked against the request's actor and
audited) and each catalog a statement reads through the actor's read access.

Statements and the REST DDL routes share it (a route builds the statement node its body describes and
executes it here), so one check and one audit line cover both transports, and both run the same handlers.
"""

from __future__ import annotations

from collections.abc import Callable

from hms_catalog.execution import Result, Session
from hms_catalog.execution.ddl_commands import SYNC_DDL_WAITER
from hms_catalog.manager import CatalogManager
from hms_catalog.model import ExternalCatalog
from hms_catalog.sql import ast
from service.access import Access, Principal, required_access, statement_title, target_catalog
from service.actor import Actor
from service.audit import Version
from service.gate import ChangeGate
from service.sync_ddl import SyncDdlTimeoutError, SyncWaiter

__all__ = ["ServiceSession"]


class ServiceSession(Session):
    """A :class:`Session` run on behalf of ``actor``: refusals are ForbiddenErrors (403), changes audited."""

    def __init__(self, manager: CatalogManager, actor: Actor, gate: ChangeGate) -> None:
        super().__init__(manager)
        self.actor = actor
        self.gate = gate

    @property
    def principal(self) -> Principal:
        return self.actor.principal

    def catalog(self, name: str | None = None) -> ExternalCatalog:
        """Every name a statement resolves goes through here: a catalog the actor may not read is refused."""
        found = super().catalog(name)
        self.actor.check(Access.READ, found.name, "the statement")
        return found

    @property
    def sync_waiter(self) -> SyncWaiter | None:
        waiter = self.extras.get(SYNC_DDL_WAITER)
        return waiter if isinstance(waiter, SyncWaiter) else None

    def execute(self, statement: ast.Statement) -> Result:
        return self.execute_checked(statement)

    def execute_checked(self, statement: ast.Statement, precondition: Callable[[], None] | None = None) -> Result:
        """Run ``statement`` if the token allows it; ``precondition`` (an If-Match check) runs after the
        permission check and before the statement, inside the audited block, so its refusal is audited too."""
        need = required_access(statement)
        if need is Access.READ:
            if precondition is not None:
                precondition()
            return super().execute(statement)
        catalog = target_catalog(statement, self.current_catalog)
        title = statement_title(statement)
        version = self._definition_version(catalog) if need is Access.ADMIN else self._catalog_version(catalog)
        with self.gate.admitted(self.actor, catalog, statement.text or title, title, need=need, version=version) as entry:
            if precondition is not None:
                precondition()
            try:
                return super().execute(statement)
            except SyncDdlTimeoutError as error:
                entry.settle("ok", sync_ddl=str(error))  # the change is done; only the wait for followers failed
                raise

    def _catalog_version(self, catalog: str | None) -> Version:
        def version() -> int | None:
            return None if catalog is None else self.manager.catalog(catalog).versions.current

        return version

    def _definition_version(self, catalog: str | None) -> Version:
        def version() -> int | None:
            found = None if catalog is None else self.manager.store.find(catalog)
            return None if found is None else found.version

        return version
