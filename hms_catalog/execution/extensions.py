"""Statement handlers that live outside this package register through an entry point.

The planner (and the Spark integration) depend on hms_catalog, never the reverse, so their statements
(SHOW SPLITS, SELECT, ...) cannot be imported from here. Each declares a module in the
``hms_catalog.statements`` entry-point group; loading it runs its ``@register`` decorators.
"""

from __future__ import annotations

import functools
import importlib
import logging
from importlib.metadata import entry_points

__all__ = ["load_extensions", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "hms_catalog.statements"
log = logging.getLogger(__name__)


@functools.cache
def load_extensions() -> tuple[str, ...]:
    """Import every registered statement module once per process; returns the modules loaded.

    The cache is the once-only guard: a second caller gets the first call's answer. Two first calls
    racing import the same modules twice at worst, which Python's import lock makes harmless.
    """
    loaded = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            importlib.import_module(point.value)
        except ImportError as error:
            log.warning("statement extension %s (%s) could not be loaded: %s", point.name, point.value, error)
        else:
            loaded.append(point.value)
    return tuple(loaded)
