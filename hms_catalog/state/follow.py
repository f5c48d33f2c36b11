"""A replica's store follower: brings every live catalog's change log up to the store's, a few times a second.

This is how a change made through another replica (or a CLI on the same store) reaches this one: one small
query reads every catalog's newest version, and each live catalog that is behind absorbs the new entries
(dropping what it cached of the objects they name) and wakes its long polls. The same query reads the
definitions' generation: when it moved (and on the first round, so at every start), ``on_definitions`` is
called, which a service uses to follow the events of catalogs defined or altered anywhere on the store.
It also sends changes waiting in an outbox (recorded while the store could not be reached) once the store
is back. ``interval`` bounds how late a change is seen here; the store answering slowly or not at all
delays it and is logged, never fatal.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

from hms_catalog.cache.shared_versions import SharedCatalogVersions
from hms_catalog.errors import HmsCatalogError
from hms_catalog.model.catalog import ExternalCatalog
from hms_catalog.state.journal import ChangeJournal
from hms_catalog.state.schema import DEFINITIONS_GENERATION

__all__ = ["StoreFollower", "FOLLOW_INTERVAL_DEFAULT"]

_log = logging.getLogger(__name__)

FOLLOW_INTERVAL_DEFAULT = 0.1


class StoreFollower:
    """Polls ``journal`` every ``interval`` seconds for the catalogs ``live`` returns."""

    def __init__(self, journal: ChangeJournal, live: Callable[[], Iterable[ExternalCatalog]], *,
                 interval: float = FOLLOW_INTERVAL_DEFAULT, on_definitions: Callable[[], None] | None = None) -> None:
        self.journal = journal
        self.interval = interval
        self._live = live
        self._on_definitions = on_definitions
        self._generation: int | None = None  # the definitions' generation last handed to on_definitions
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.rounds = 0
        self.failures = 0
        self.last_error: str | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="hms-store-follower", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5.0)

    def follow_once(self) -> None:
        """One round: catch every live catalog up with the store."""
        currents = self.journal.currents()
        generation = currents.get(DEFINITIONS_GENERATION, 0)
        if self._on_definitions is not None and generation != self._generation:
            self._on_definitions()  # raises: tried again next round
            self._generation = generation
        for catalog in self._live():
            versions = catalog.versions
            if isinstance(versions, SharedCatalogVersions) and (
                currents.get(versions.catalog_id, 0) > versions.current or versions.pending()
            ):
                versions.flush()
        self.rounds += 1

    def _run(self) -> None:
        while not self._stopping.wait(self.interval):
            try:
                self.follow_once()
                self.last_error = None
            except HmsCatalogError as error:
                self.failures += 1
                if self.last_error != str(error):
                    _log.warning("following the catalog store: %s", error)
                self.last_error = str(error)
            except Exception as error:  # noqa: BLE001 - the thread must outlive any one bad round
                self.failures += 1
                self.last_error = str(error)
                _log.exception("following the catalog store failed")
