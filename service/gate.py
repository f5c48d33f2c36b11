"""The change gate: the one way a change asked of the service goes, through every front end.

Statements and the REST routes, writes' jobs, Iceberg REST and the thrift endpoint all pass here, so a
change is decided, audited and made a catalog event the same way whoever asks:

1. one audit line, written whatever happens: ``ok``, ``refused`` or ``error: ...``, with the actor (its
   credential's name, front end, address and claimed user) and the catalog's version before and after;
2. the access policy's decision on the actor's grant (:meth:`service.access.Principal.check`), and for the
   thrift endpoint the catalog's ``thrift.access`` as a ceiling over any grant;
3. for a change the front end makes itself (:meth:`ChangeGate.change`), the catalog's change context: the
   objects' DDL locks, the metastore events it will cause expected (withdrawn if it fails), the caches
   dropped in ``finally``, the change recorded as a version with the front end's source and announced to the
   home's other processes. Statements and writes' commits open that context in the core, from
   :meth:`ChangeGate.context`, inside :meth:`ChangeGate.admitted`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from hms_catalog.cache.versions import ChangeSource
from hms_catalog.ddl.context import DdlContext, RecordedChanges
from hms_catalog.errors import NotFoundError
from hms_catalog.manager import CatalogManager
from hms_catalog.model import ExternalCatalog
from hms_catalog.properties import THRIFT_ACCESS
from service.access import Access, ForbiddenError
from service.actor import Actor, FrontEnd
from service.audit import AuditEntry, AuditLog, Version

__all__ = ["ChangeGate"]


class ChangeGate:
    def __init__(self, manager: CatalogManager, audit: AuditLog) -> None:
        self.manager = manager
        self.audit = audit

    def context(self, catalog: ExternalCatalog) -> DdlContext:
        """The change context of ``catalog``, announcing to this home's other processes."""
        return DdlContext(catalog, self.manager.announcer(catalog))

    @contextlib.contextmanager
    def admitted(self, actor: Actor, catalog: str | None, statement: str, what: str, *, need: Access = Access.WRITE,
                 version: Version | None = None) -> Iterator[AuditEntry]:
        """The audit line of a change and the decision on it: the block runs only if ``actor`` may do ``what``
        (a statement's title, for refusals) needing ``need`` on ``catalog``; ``statement`` is what the audit
        line shows. ``version`` reads the version the line records (default: the catalog's)."""
        shown = catalog.lower() if catalog else catalog
        with self.audit.recording(actor.name, shown, statement, version or self._version(shown)) as entry:
            entry.extra.update(actor.audit_fields())
            actor.check(need, shown, what)
            if actor.front_end is FrontEnd.THRIFT and need is not Access.READ and shown is not None:
                self._thrift_ceiling(actor, shown, what)
            yield entry

    @contextlib.contextmanager
    def change(self, actor: Actor, catalog: ExternalCatalog, statement: str, what: str,
               objects: Sequence[tuple[str, str]], *, events: Sequence[tuple[str, str, str, int]] = (),
               source: ChangeSource) -> Iterator[RecordedChanges]:
        """A change the front end makes itself, as one catalog event: admitted, then the block runs in the
        catalog's change context over ``objects`` (database, table) expecting ``events``; what it appends to
        the yielded list is recorded as ``source``."""
        with (self.admitted(actor, catalog.name, statement, what, version=lambda: catalog.versions.current),
              self.context(catalog).changing(objects, events=events, source=source) as changes):
            yield changes

    def _version(self, catalog: str | None) -> Version:
        def version() -> int | None:
            return None if catalog is None else self.manager.catalog(catalog).versions.current

        return version

    def _thrift_ceiling(self, actor: Actor, catalog: str, what: str) -> None:
        """A catalog that does not grant thrift writes refuses every change through thrift, whoever asks."""
        try:
            writable = self.manager.catalog(catalog).config.thrift_writable
        except NotFoundError:
            return  # the change itself says the catalog is not there
        if not writable:
            raise ForbiddenError(
                f"catalog '{catalog}' is read-only through the thrift endpoint ({what} refused); grant writes with "
                f"ALTER CATALOG {catalog} SET PROPERTIES ('{THRIFT_ACCESS}'='write')", actor.principal)
