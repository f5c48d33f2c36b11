"""Changes made through the endpoint: forwarded to the owning metastore and made catalog events.

A change passes the service's change gate (:mod:`service.gate`), as every front end's changes do: a line in
the audit log naming the connection's actor (its Kerberos principal or claimed user, and its address), the
actor's grant checked and the catalog's ``thrift.access`` as a ceiling, the object's DDL lock held, the
metastore events it will cause expected (so the event follower does not log them again), the call
forwarded, the caches of the objects dropped in ``finally``, and on success one change-log entry with
source ``thrift``, announced to the home's other processes (long polls and Spark drivers follow the feed).

Which calls change what is read from their names, as the metastore names them (``create_``, ``alter_``,
``drop_``, ``add_``, ...), and their objects from their arguments: the same generic reading the forwarder
routes by.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from thrift.Thrift import TException

from hms_catalog.cache.versions import CatalogObject, ChangeKind, ChangeSource
from service.thrift.arguments import argument_names
from service.thrift.context import Caller, EndpointContext
from service.thrift.names import FederatedNames, Route

__all__ = ["ChangePlan", "is_change", "plan_change", "run_change"]

_CHANGE_PREFIXES = ("create_", "alter_", "drop_", "add_", "append_", "rename_", "exchange_", "truncate_", "update_",
                    "delete_", "set_aggr_stats_for", "markpartitionforevent", "grant_", "revoke_", "seed_", "remove_",
                    "set_", "cm_recycle", "fire_listener_event", "compact")
_NOT_CHANGES = frozenset({"set_ugi", "setmetaconf"})  # a connection's own state, not the metastore's
_TABLE_FIELDS = frozenset({"tbl_name", "tblname", "table_name", "tablename", "name"})


def is_change(method: str) -> bool:
    lowered = method.lower()
    return lowered not in _NOT_CHANGES and lowered.startswith(_CHANGE_PREFIXES)


@dataclass
class ChangePlan:
    """What a forwarded change touches: objects to lock and drop from the caches, events it causes, what to log."""

    objects: list[tuple[str, str]] = field(default_factory=list)
    events: list[tuple[str, str, str, int]] = field(default_factory=list)
    changes: list[tuple[ChangeKind, CatalogObject]] = field(default_factory=list)
    summary: str = ""


def _tables_in(method: str, args: tuple[Any, ...]) -> list[str]:
    """Table names in the arguments: a table argument, or the ``tableName``/``tblName`` of the structs given,
    alone or in a list (``add_partitions`` takes only a list of partitions)."""
    found: list[str] = []
    for name, value in zip(argument_names(method), args, strict=False):
        lowered = name.lower()
        if isinstance(value, str):
            if lowered in _TABLE_FIELDS and not (lowered == "name" and "database" in method.lower()):
                found.append(value.lower())
        else:
            for struct in value if isinstance(value, list) else [value]:
                found.extend(_struct_tables(struct))
    return found


def _struct_tables(value: Any) -> list[str]:
    if not hasattr(value, "thrift_spec") or type(value).__name__ == "Database":
        return []
    found = []
    for spec in value.thrift_spec:
        if spec is not None and spec[2].lower() in _TABLE_FIELDS - {"name"}:
            text = getattr(value, spec[2], None)
            if isinstance(text, str):
                found.append(text.lower())
    inner = getattr(value, "table", None)  # Hive 4's request structs (CreateTableRequest, AlterTableRequest) carry the Table
    if not found and type(inner).__name__ == "Table":
        found.extend(_struct_tables(inner))
    return found


def _count(method: str, args: tuple[Any, ...]) -> int:
    """How many partitions a partition call names (the events it causes one per partition)."""
    for value in args:
        if isinstance(value, list):
            return len(value)
        parts = getattr(value, "parts", None) or getattr(value, "partitions", None)
        if isinstance(parts, list):
            return len(parts)
    return 1


def plan_change(method: str, args: tuple[Any, ...], route: Route, names: FederatedNames | None = None) -> ChangePlan:
    """``names``: how the client's database names map to the catalogs' (a federated table struct's ``dbName``)."""
    lowered = method.lower()
    database = route.database
    tables = _tables_in(method, args)
    table = tables[0] if tables else ""
    plan = ChangePlan(summary=f"thrift {method} {database}{'.' + table if table else ''}".rstrip())
    if "database" in lowered:
        plan.objects = [(database, "")]
        if lowered.startswith("create_"):
            plan.events = [("CREATE_DATABASE", database, "", 1)]
            plan.changes = [(ChangeKind.ADDED, CatalogObject.for_database(database))]
        elif lowered.startswith("drop_"):
            plan.events = [("DROP_DATABASE", database, "", 1)]
            plan.changes = [(ChangeKind.DROPPED, CatalogObject.for_database(database))]
        else:
            plan.events = [("ALTER_DATABASE", database, "", 1)] if lowered.startswith("alter_") else []
            plan.changes = [(ChangeKind.CHANGED, CatalogObject.for_database(database))]
        return plan
    if not table:
        return plan  # functions, roles, grants, tokens: forwarded and audited, nothing the catalog caches
    plan.objects = [(database, table)]
    target = CatalogObject.for_table(database, table)
    if "partition" in lowered:
        plan.changes = [(ChangeKind.CHANGED, CatalogObject("partitions", database, table))]
        if lowered.startswith(("add_partition", "append_partition")) and not _if_not_exists(args):
            plan.events = [("ADD_PARTITION", database, table, 1)]
        elif lowered in ("drop_partition", "drop_partition_with_environment_context", "drop_partition_by_name",
                         "drop_partition_by_name_with_environment_context"):
            plan.events = [("DROP_PARTITION", database, table, 1)]
        elif lowered in ("alter_partition", "alter_partition_with_environment_context", "rename_partition"):
            plan.events = [("ALTER_PARTITION", database, table, 1)]
        elif lowered.startswith("alter_partitions"):
            plan.events = [("ALTER_PARTITION", database, table, _count(method, args))]
        elif lowered == "drop_partitions_req":
            plan.events = _dropped_by_name(args, database, table)
        return plan
    if lowered.startswith("create_table"):
        plan.events = [("CREATE_TABLE", database, table, 1)]
        plan.changes = [(ChangeKind.ADDED, target)]
    elif lowered.startswith("drop_table"):
        plan.events = [("DROP_TABLE", database, table, 1)]
        plan.changes = [(ChangeKind.DROPPED, target)]
    elif lowered.startswith("alter_table"):
        plan.events = [("ALTER_TABLE", database, table, 1)]
        renamed = _renamed_to(args, database, table, route, names)
        if renamed is not None:
            plan.objects.append(renamed)
            plan.changes = [(ChangeKind.DROPPED, target), (ChangeKind.ADDED, CatalogObject.for_table(*renamed))]
        else:
            plan.changes = [(ChangeKind.CHANGED, target)]
    else:
        if lowered == "fire_listener_event":  # a DML's INSERT event, written as the client asks
            plan.events = [("INSERT", database, table, 1)]
        plan.changes = [(ChangeKind.CHANGED, target)]
    return plan


def _if_not_exists(args: tuple[Any, ...]) -> bool:
    """An add that may add nothing writes no event: expecting one would swallow another writer's."""
    return any(getattr(value, "ifNotExists", False) for value in args)


def _dropped_by_name(args: tuple[Any, ...], database: str, table: str) -> list[tuple[str, str, str, int]]:
    """A drop of partitions named one by one causes an event each. Partitions chosen by expression, or named
    with ``ifExists`` (some may be absent), cause a number unknown before the call: nothing is expected then,
    as an expectation no event meets would swallow another writer's event."""
    request = args[0] if args else None
    names = getattr(getattr(request, "parts", None), "names", None)
    if not names or getattr(request, "ifExists", True):
        return []
    return [("DROP_PARTITION", database, table, len(names))]


def _renamed_to(args: tuple[Any, ...], database: str, table: str, route: Route,
                names: FederatedNames | None) -> tuple[str, str] | None:
    """The new name of an altered table, None if it keeps its name. The new struct's ``dbName`` is the client's
    name (``other__db`` for database ``db`` of catalog ``other``), read back into the catalog's own."""
    tables = [getattr(value, "table", None) if type(value).__name__.endswith("Request") else value for value in args]
    new = next((value for value in tables if type(value).__name__ == "Table"), None)
    if new is None or not new.tableName:
        return None
    new_database = (new.dbName or database).lower()
    if names is not None and new.dbName:
        routed = names.route(new.dbName, getattr(new, "catName", None))
        new_database = routed.database if routed.catalog == route.catalog else names.unprefixed(route.catalog, new_database)
    target = (new_database, new.tableName.lower())
    return None if target == (database, table) else target


class _MetastoreAnswer(Exception):
    """Carries the metastore's own exception out through the change's context managers.

    The generated exceptions are immutable, and ``contextlib`` sets ``__traceback__`` on an exception that
    leaves a ``@contextmanager`` block: the metastore's AlreadyExistsException would become a TypeError
    (and the client a MetaException). Wrapped, it passes; it is raised as it came once outside."""

    def __init__(self, answer: TException) -> None:
        super().__init__(f"{type(answer).__name__}: {getattr(answer, 'message', None) or ''}".rstrip(": "))
        self.answer = answer


def run_change(endpoint: EndpointContext, caller: Caller, method: str, args: tuple[Any, ...], route: Route) -> Any:
    """Forward a change to its catalog's metastore as a catalog event, through the change gate."""
    try:
        return _run_change(endpoint, caller, method, args, route)
    except _MetastoreAnswer as wrapped:
        raise wrapped.answer from None


def _run_change(endpoint: EndpointContext, caller: Caller, method: str, args: tuple[Any, ...], route: Route) -> Any:
    catalog = endpoint.catalog(route)
    plan = plan_change(method, args, route, endpoint.names)
    with endpoint.gate.change(endpoint.actor(caller), catalog, plan.summary, f"thrift {method}", plan.objects,
                              events=plan.events, source=ChangeSource.THRIFT) as recorded:
        try:
            answer = endpoint.forwarder.call(method, args, route)
        except TException as error:
            raise _MetastoreAnswer(error) from None
        recorded.extend(plan.changes)
    return answer
