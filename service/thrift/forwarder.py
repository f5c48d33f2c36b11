"""Every call the endpoint does not answer itself, sent unchanged to the metastore that owns its object.

One generic path, not one method each (Waggle Dance's federation, without its generated per-method code):
the call's database names say which catalog owns it (:mod:`.arguments`), the names are moved into that
metastore's own, the call goes through the catalog's pooled client (counted, retried over transport
failures, failed over across its URIs, as the catalog's own calls), and the answer's names are moved back.

Transaction and lock ids name no database. The ids a metastore hands out through the endpoint are
remembered with the catalog that issued them, so ``check_lock``, ``unlock``, ``commit_txn`` and heartbeats
reach it; an id that is not remembered goes to the primary, as a client of the primary metastore alone
would. Transaction ids and lock ids are two sequences of a metastore (lock 7 and transaction 7 may be two
catalogs'), so each is remembered as what it is. A call whose names and ids belong to two catalogs
cannot be one metastore's call and is refused.

A call to a catalog whose metastore is known down fails at once, naming the catalog (:mod:`.health`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from thrift.Thrift import TApplicationException

from hms_catalog.client.metastore import MetastoreClient
from hms_catalog.errors import ErrorKind, UnsupportedCallError
from hms_catalog.manager import CatalogManager
from hms_catalog.model import ExternalCatalog
from service.thrift.arguments import argument_names, databases_in, rename_arguments, rename_databases
from service.thrift.errors import EndpointRefusal
from service.thrift.health import CatalogHealth
from service.thrift.names import FederatedNames, Route

__all__ = ["Forwarder"]

# Argument and struct fields holding ids, and which kind of id each holds.
_ID_FIELDS = {"txnid": "txn", "txn_ids": "txn", "txnids": "txn", "txnid_list": "txn", "lockid": "lock"}
_REMEMBERED_IDS = 100_000


class Forwarder:
    def __init__(self, manager: CatalogManager, names: FederatedNames, health: CatalogHealth) -> None:
        self.manager = manager
        self.names = names
        self.health = health
        self._owners: OrderedDict[tuple[str, int], str] = OrderedDict()  # ("txn"|"lock", id) -> catalog
        self._lock = threading.Lock()

    def route_of(self, method: str, args: tuple[Any, ...]) -> Route:
        """The catalog that owns the call (the primary when it names nothing)."""
        found = databases_in(method, args)
        routes = {self.names.route(database, catalog) for database, catalog in found}
        catalogs = {route.catalog for route in routes}
        with self._lock:
            issued = {self._owners[each] for each in _ids_in(method, args) if each in self._owners}
        if len(catalogs | issued) > 1:
            raise EndpointRefusal(
                f"{method} names objects of catalogs {', '.join(sorted(catalogs | issued))} (a transaction or lock "
                "of one metastore used with another's tables): one call goes to one metastore", ErrorKind.UNSUPPORTED)
        if routes:  # the outermost name (an alter's table, not its new struct's database, which a rename changes)
            first, catalog = found[0]
            return self.names.route(first, catalog)
        return Route(next(iter(issued)) if issued else self.names.primary, "")

    def catalog(self, route: Route) -> ExternalCatalog:
        return self.manager.catalog(route.catalog)

    def client_of(self, catalog: ExternalCatalog, method: str) -> MetastoreClient:
        client = catalog.client
        if not isinstance(client, MetastoreClient):
            raise EndpointRefusal(f"catalog '{catalog.name}' serves folders, not a metastore: {method} is answered only "
                                  "for metastore catalogs", ErrorKind.UNSUPPORTED)
        return client

    def call(self, method: str, args: tuple[Any, ...], route: Route | None = None) -> Any:
        """Forward ``method`` to its owner and answer in the client's names."""
        route = route if route is not None else self.route_of(method, args)
        catalog = self.catalog(route)
        client = self.client_of(catalog, method)
        inward = self._inward(route.catalog)
        try:
            with self.health.reaching(route.catalog, catalog):  # which names the catalog of a metastore that failed
                answer = client.pool.call(method, *rename_arguments(method, args, inward, client.metastore_catalog))
        except UnsupportedCallError as error:  # as the metastore answers it, so a client falls back to an older call
            raise TApplicationException(TApplicationException.UNKNOWN_METHOD, f"catalog '{catalog.name}': {error}") from error
        self._remember(method, answer, route.catalog)
        if self.names.is_primary(route.catalog):
            return answer
        return rename_databases(answer, lambda database: self.names.external(route.catalog, database))

    def _inward(self, catalog: str) -> Callable[[str], str]:
        def inward(database: str) -> str:
            routed = self.names.route(database)
            return routed.database if routed.catalog == catalog else self.names.unprefixed(catalog, database.lower())

        return inward

    def _remember(self, method: str, answer: Any, catalog: str) -> None:
        ids: list[tuple[str, int]] = []
        if method == "open_txns" and answer is not None:
            ids = [("txn", each) for each in answer.txn_ids or ()]
        elif method == "lock" and answer is not None and answer.lockid is not None:
            ids = [("lock", answer.lockid)]
        if not ids:
            return
        with self._lock:
            for each in ids:
                self._owners[each] = catalog
                self._owners.move_to_end(each)
            while len(self._owners) > _REMEMBERED_IDS:
                self._owners.popitem(last=False)


def _ids_in(method: str, args: tuple[Any, ...]) -> list[tuple[str, int]]:
    """Transaction and lock ids in the arguments (top-level and one struct deep), each with its kind."""
    found: list[tuple[str, int]] = []

    def take(name: str, value: Any) -> None:
        kind = _ID_FIELDS.get(name.lower())
        if kind is None or value is None:
            return
        if isinstance(value, int) and not isinstance(value, bool):
            found.append((kind, value))
        elif isinstance(value, (list, tuple, set)):
            found.extend((kind, each) for each in value if isinstance(each, int))

    for name, value in zip(argument_names(method), args, strict=False):
        take(name, value)
        if hasattr(value, "thrift_spec"):
            for field in value.thrift_spec:
                if field is not None:
                    take(field[2], getattr(value, field[2], None))
    return found
