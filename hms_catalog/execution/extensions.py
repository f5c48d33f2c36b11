"""Statement handlers that live outside this package register through an entry point.

The planner (and the Spark integration) depend on hms_catalog, never the reverse, so their statements
(SHOW SPLITS, SELECT, ...) cannot be imported from here. Each declares a module in the
``hms_catalog.statements`` entry-point group; loading it runs its ``@register`` decorators.
"""

from __future__ import annotations

import importlib
import logging
import threading
from importlib.metadata import entry_points

__all__ = ["load_extensions", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "hms_catalog.statements"
log = logging.getLogger(__name__)
_loaded = False
_lock = threading.Lock()


def load_extensions() -> None:
    """Import every registered statement module once per process."""
    global _loaded
    with _lock:
        if _loaded:
            return
        for point in entry_points(group=ENTRY_POINT_GROUP):
            try:
                importlib.import_module(point.value)
            except ImportError as error:
                log.warning("statement extension %s (%s) could not be loaded: %s", point.name, point.value, error)
        _loaded = True
