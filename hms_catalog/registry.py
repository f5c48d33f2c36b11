"""The process's live catalog managers: one per home, shared by every entry point.

A CLI session, :func:`hms_catalog.open_session`, ``attach_catalogs`` and the ``hms`` data source all
reach catalogs by home directory. Were each to build its own :class:`CatalogManager`, each would hold
its own pools and caches, and a ``REFRESH TABLE`` run in one would leave the others reading the old
file listing for a whole TTL. The registry makes them share one manager, hence one live catalog per
definition, per process.

This is the package's only process-wide mutable state (house rule 3): the registry itself is injected
wherever a caller wants its own (tests, a server holding several), and the process's registry is read
through a read-only view. A forked child starts with an empty registry: pooled sockets and follower
threads do not survive a fork, and sharing a socket with the parent would interleave their frames.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from hms_catalog.errors import ConfigurationError
from hms_catalog.manager import CatalogManager
from hms_catalog.state import SharedState, open_definitions
from hms_catalog.store import default_home

__all__ = ["ManagerRegistry", "home_key", "live_managers", "shared_manager", "adopt_manager"]

ManagerFactory = Callable[[Path], CatalogManager]


def home_key(home: str | os.PathLike[str] | None) -> Path:
    """The registry's key for ``home``: absolute and resolved, so ``~/h``, ``h/`` and ``./h`` meet."""
    return Path(home if home is not None else default_home()).expanduser().resolve()


def _new_manager(home: Path) -> CatalogManager:
    """A manager on the home's store, sharing versions and change log with every other process on it (a
    service, another CLI): each sees the others' changes at its next statement."""
    definitions = open_definitions(home)
    return CatalogManager(definitions, shared=SharedState(definitions))


class ManagerRegistry:
    """Catalog managers by home; the first request for a home makes its manager, later ones share it."""

    def __init__(self, factory: ManagerFactory = _new_manager) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._managers: dict[Path, CatalogManager] = {}

    @property
    def managers(self) -> Mapping[Path, CatalogManager]:
        """A read-only view of the live managers, by resolved home."""
        return MappingProxyType(self._managers)

    def manager(self, home: str | os.PathLike[str] | None = None) -> CatalogManager:
        """The manager of ``home`` (default as the CLI's ``--home``), made on first request."""
        key = home_key(home)
        with self._lock:
            found = self._managers.get(key)
            if found is None:
                found = self._managers[key] = self._factory(key)
            return found

    def adopt(self, manager: CatalogManager) -> CatalogManager:
        """Make ``manager`` the one its home's entry points share, unless another is live there already.

        Raises ConfigurationError when a different manager already serves that home: two managers would
        hold two sets of caches, which is the incoherence this registry exists to prevent.
        """
        key = home_key(manager.store.home)
        with self._lock:
            found = self._managers.setdefault(key, manager)
        if found is not manager:
            raise ConfigurationError(
                f"another catalog manager is already live for home {key} in this process; "
                "open sessions with hms_catalog.open_session(home) so that every entry point shares it"
            )
        return manager

    def close(self) -> None:
        """Close every live catalog; the managers stay usable and reconnect on their next use."""
        with self._lock:
            managers = list(self._managers.values())
        for manager in managers:
            manager.close()

    def _forget_all(self) -> None:
        """Drop every manager without closing it (a forked child must not touch the parent's sockets)."""
        self._lock = threading.Lock()
        self._managers = {}


_PROCESS = ManagerRegistry()
os.register_at_fork(after_in_child=_PROCESS._forget_all)


def shared_manager(home: str | os.PathLike[str] | None = None) -> CatalogManager:
    """This process's manager for ``home``: the one every entry point of the process uses."""
    return _PROCESS.manager(home)


def adopt_manager(manager: CatalogManager) -> CatalogManager:
    """Share ``manager`` as this process's manager for its home (see :meth:`ManagerRegistry.adopt`)."""
    return _PROCESS.adopt(manager)


def live_managers() -> Mapping[Path, CatalogManager]:
    """A read-only view of this process's managers, by resolved home."""
    return _PROCESS.managers
