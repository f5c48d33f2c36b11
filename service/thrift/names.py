"""How the catalogs of one home appear as the databases of one metastore (Waggle Dance's prefixed mode).

The primary catalog keeps its database names; every other catalog's databases are ``<catalog>__<database>``.
Hive 3 and later clients may name a metastore catalog instead, as a request's ``catName`` or as the
``@catalog#database`` form of a database argument (``MetaStoreUtils.prependCatalogToDbName``); a name equal
to one of the home's catalogs reaches that catalog directly, and Hive's default catalog name (``hive``)
means the primary. Names are lower-cased, as the metastore stores them.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["SEPARATOR", "FederatedNames", "Route", "hive_pattern"]

SEPARATOR = "__"
_CATALOG_MARKER = "@"
_CATALOG_SEPARATOR = "#"
_EMPTY_DATABASE = "!"  # Hive's DB_EMPTY_MARKER: a catalog named with no database
HIVE_DEFAULT_CATALOG = "hive"
# Every call routes by the catalogs' names; reading them from the store once a second, not once a call, makes
# a catalog created or dropped a second late to the endpoint and keeps the store out of every warm answer.
NAMES_SECONDS = 1.0


@dataclass(frozen=True)
class Route:
    """The catalog of the home that owns a name, and the database's name in that catalog's metastore."""

    catalog: str
    database: str


class FederatedNames:
    """``catalogs``: the names of the catalogs served (read at each call: catalogs come and go)."""

    def __init__(self, primary: str, catalogs: Callable[[], Iterable[str]], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.primary = primary.lower()
        self._catalogs = catalogs
        self._clock = clock
        self._lock = threading.Lock()
        self._known: tuple[float, list[str]] | None = None

    def catalogs(self) -> list[str]:
        """The primary first, then the others by name."""
        now = self._clock()
        with self._lock:
            if self._known is not None and now - self._known[0] < NAMES_SECONDS:
                return self._known[1]
        names = {name.lower() for name in self._catalogs()}
        ordered = ([self.primary] if self.primary in names else []) + sorted(names - {self.primary})
        with self._lock:
            self._known = (now, ordered)
        return ordered

    def route(self, database: str | None, catalog: str | None = None) -> Route:
        """Whose ``database`` (as a client names it) is; ``catalog``: the request's catName, if any."""
        name = (database or "").lower()
        if name.startswith(_CATALOG_MARKER) and _CATALOG_SEPARATOR in name:
            catalog, name = name[1:].split(_CATALOG_SEPARATOR, 1)
            name = "" if name == _EMPTY_DATABASE else name
        if catalog:
            chosen = catalog.lower()
            if chosen != self.primary and chosen in self.catalogs():
                return Route(chosen, self.unprefixed(chosen, name))
            if chosen != HIVE_DEFAULT_CATALOG and chosen != self.primary:
                return Route(self.primary, name)  # a catalog of the primary's own metastore: passed on unchanged
        prefix, separator, rest = name.partition(SEPARATOR)
        if separator and rest and prefix != self.primary and prefix in self.catalogs():
            return Route(prefix, rest)
        return Route(self.primary, name)

    def unprefixed(self, catalog: str, database: str) -> str:
        """A database named through a catName may still carry the catalog's prefix."""
        prefix = catalog + SEPARATOR
        return database[len(prefix):] if database.startswith(prefix) else database

    def external(self, catalog: str, database: str) -> str:
        """The name clients see for ``database`` of ``catalog``."""
        catalog, database = catalog.lower(), database.lower()
        return database if catalog == self.primary else f"{catalog}{SEPARATOR}{database}"

    def is_primary(self, catalog: str) -> bool:
        return catalog.lower() == self.primary


def hive_pattern(pattern: str | None) -> re.Pattern[str]:
    """The metastore's name patterns (``get_databases``, ``get_tables``): alternatives split at ``|``, each a
    regular expression in which ``*`` stands for ``.*``, matched whole and case-insensitively, as Hive's
    ``ObjectStore`` reads them. One that is not a valid expression is matched literally."""
    if pattern is None or pattern.strip() in ("", "*"):
        return re.compile(".*", re.DOTALL)
    alternatives = []
    for part in pattern.strip().split("|"):
        expression = part.replace("*", ".*")
        try:
            re.compile(expression)
        except re.error:
            expression = re.escape(part).replace(r"\*", ".*")
        alternatives.append(expression)
    return re.compile("(?:" + "|".join(alternatives) + ")", re.IGNORECASE | re.DOTALL)
