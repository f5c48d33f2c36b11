"""The metastore calls that change it, as a protocol beside the read calls, and their thrift implementation.

DDL operations are typed against :class:`MetastoreWrites`, so no handler checks client classes: a
filesystem catalog's client does not implement it, and an operation on such a catalog says so. Each call
is one thrift call through the pool (counted, retried only where the pool retries: a write the metastore
answered is never sent twice). The metastore's refusals keep their message and become the project's
errors: AlreadyExistsError, NotFoundError, or MetastoreError with the metastore's own words (an
``InvalidOperationException`` such as "Database ... is not empty").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.versions import CallForm
from hms_catalog.errors import AlreadyExistsError, MetastoreError, NotFoundError, UnsupportedCallError

__all__ = ["DROP_BATCH", "MetastoreWrites", "MetastoreWriteCalls"]

DROP_BATCH = 100  # partition names per drop_partitions_req (see MetastoreWriteCalls.drop_partitions)
_DO_NOT_UPDATE_STATS = "DO_NOT_UPDATE_STATS"  # Hive's StatsSetupConst: keep the statistics a call carries


@runtime_checkable
class MetastoreWrites(Protocol):
    def create_database(self, database: ttypes.Database) -> None: ...
    def alter_database(self, name: str, database: ttypes.Database, *, before: ttypes.Database | None = None) -> None: ...
    def drop_database(self, name: str, *, delete_data: bool, cascade: bool) -> None: ...
    def create_table(self, table: ttypes.Table) -> None: ...
    def alter_table(self, database: str, table: str, new: ttypes.Table, *, cascade: bool = False,
                    keep_statistics: bool = False) -> None: ...
    def drop_table(self, database: str, table: str, *, delete_data: bool = False) -> None: ...
    def add_partitions(self, partitions: list[ttypes.Partition], *, if_not_exists: bool = False) -> int: ...
    def alter_partitions(self, database: str, table: str, partitions: list[ttypes.Partition], *,
                         keep_statistics: bool = False) -> None: ...
    def drop_partitions(self, database: str, table: str, names: list[str], *, delete_data: bool,
                        if_exists: bool) -> int: ...


_DATABASE_FIELDS = {"description": "comment", "locationUri": "location"}  # what alter_database may keep as it was


def _field(database: ttypes.Database, field: str) -> str:
    """A database's comment or location, no comment and an empty one alike (the metastore answers either)."""
    return getattr(database, field) or ""


class MetastoreWriteCalls:
    """The write calls of :class:`~hms_catalog.client.MetastoreClient` (mixed into it)."""

    metastore_catalog: str | None

    def _db(self, database: str) -> str:  # pragma: no cover - the client's own
        raise NotImplementedError

    def _call(self, method: str, *args: Any, missing: tuple[str, str] | None = None) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _ask(self, *forms: CallForm, missing: tuple[str, str] | None = None, label: str | None = None) -> Any:  # pragma: no cover
        raise NotImplementedError

    def create_database(self, database: ttypes.Database) -> None:
        if self.metastore_catalog is not None:
            database.catalogName = self.metastore_catalog
        try:
            self._call("create_database", database)
        except MetastoreError as error:
            if isinstance(error.__cause__, ttypes.AlreadyExistsException):
                raise AlreadyExistsError("database", database.name) from error
            raise

    def alter_database(self, name: str, database: ttypes.Database, *, before: ttypes.Database | None = None) -> None:
        """Replace ``name``'s definition. A metastore that keeps a field as it was (Hive 2.3 changes a database's
        parameters, never its comment) is undone and refused, naming the field: a change is never answered as
        made when the metastore kept the old value. ``before``: the definition the caller read and made
        ``database`` from, which is then not read again."""
        if before is None:
            before = self._call("get_database", self._db(name), missing=("database", name))
        self._call("alter_database", self._db(name), database, missing=("database", name))
        asked = {label: _field(database, field) for field, label in _DATABASE_FIELDS.items()
                 if _field(database, field) != _field(before, field)}
        if not asked:
            return
        after = self._call("get_database", self._db(name), missing=("database", name))
        kept = [label for field, label in _DATABASE_FIELDS.items() if label in asked and _field(after, field) != asked[label]]
        if kept:
            self._call("alter_database", self._db(name), before, missing=("database", name))  # nothing half-made
            was = " and ".join(f"{label} {getattr(before, field)!r}" for field, label in _DATABASE_FIELDS.items() if label in kept)
            raise UnsupportedCallError(f"the metastore does not support altering a database's {' or '.join(kept)}: its "
                                       f"alter_database kept the {was} of database '{name}', so nothing was changed")

    def drop_database(self, name: str, *, delete_data: bool, cascade: bool) -> None:
        self._call("drop_database", self._db(name), delete_data, cascade, missing=("database", name))

    def create_table(self, table: ttypes.Table) -> None:
        """Register ``table``; AlreadyExistsError when its name is taken, NotFoundError without its database."""
        name = f"{table.dbName}.{table.tableName}"
        if self.metastore_catalog is not None:
            table.catName = self.metastore_catalog
        try:
            self._call("create_table", table, missing=("database", table.dbName))
        except MetastoreError as error:
            if isinstance(error.__cause__, ttypes.AlreadyExistsException):
                raise AlreadyExistsError("table", name) from error
            if isinstance(error.__cause__, ttypes.InvalidObjectException) and "database" in str(error).lower():
                raise NotFoundError("database", table.dbName, str(error.__cause__.message or "")) from error
            raise

    def alter_table(self, database: str, table: str, new: ttypes.Table, *, cascade: bool = False,
                    keep_statistics: bool = False) -> None:
        """Replace ``database.table``'s definition (a rename when ``new`` has another name); with ``cascade``
        the metastore also gives every partition the new columns, as Hive's ``ALTER TABLE ... CASCADE``;
        with ``keep_statistics`` it keeps the statistics ``new`` carries instead of counting the files."""
        properties = {"CASCADE": "true"} if cascade else {}
        if keep_statistics:
            properties[_DO_NOT_UPDATE_STATS] = "true"
        context = ttypes.EnvironmentContext(properties=properties)
        name = f"{new.dbName}.{new.tableName}"
        try:
            self._call("alter_table_with_environment_context", self._db(database), table, new, context,
                       missing=("table", f"{database}.{table}"))
        except MetastoreError as error:
            if isinstance(error.__cause__, ttypes.InvalidOperationException) and "already exists" in str(error):
                raise AlreadyExistsError("table", name) from error
            raise

    def drop_table(self, database: str, table: str, *, delete_data: bool = False) -> None:
        """Unregister ``database.table``; its files go too only with ``delete_data`` (and a managed table)."""
        self._call("drop_table", self._db(database), table, delete_data, missing=("table", f"{database}.{table}"))

    def add_partitions(self, partitions: list[ttypes.Partition], *, if_not_exists: bool = False) -> int:
        """Register ``partitions`` of one table in one call; how many were added (with ``if_not_exists``,
        existing ones are skipped and not counted). Only then does the metastore send the added partitions
        back (to be counted): otherwise all were added or none, and a thousand partitions are not sent back."""
        if not partitions:
            return 0
        first = partitions[0]
        request = ttypes.AddPartitionsRequest(dbName=first.dbName, tblName=first.tableName, parts=partitions,
                                              ifNotExists=if_not_exists, needResult=if_not_exists, catName=self.metastore_catalog)
        try:
            result = self._ask(
                CallForm("add_partitions_req", (request,),
                         lambda answer: len(answer.partitions or []) if if_not_exists else len(partitions)),
                missing=("table", f"{first.dbName}.{first.tableName}"),
            )
        except MetastoreError as error:
            if isinstance(error.__cause__, ttypes.AlreadyExistsException):
                raise AlreadyExistsError("partition", str(error.__cause__.message or "")) from error
            raise
        return int(result)

    def alter_partitions(self, database: str, table: str, partitions: list[ttypes.Partition], *,
                         keep_statistics: bool = False) -> None:
        """Replace the partitions' definitions in one call. The metastore counts a changed partition's files
        again unless ``keep_statistics`` (a write that knows them exactly, and moves appended files in after)."""
        if not partitions:
            return
        if keep_statistics:
            context = ttypes.EnvironmentContext(properties={_DO_NOT_UPDATE_STATS: "true"})
            self._call("alter_partitions_with_environment_context", self._db(database), table, partitions, context,
                       missing=("table", f"{database}.{table}"))
        else:
            self._call("alter_partitions", self._db(database), table, partitions, missing=("table", f"{database}.{table}"))

    def drop_partitions(self, database: str, table: str, names: Sequence[str], *, delete_data: bool, if_exists: bool) -> int:
        """Drop the partitions named ``k=v/k2=v2``, :data:`DROP_BATCH` per call; how many were dropped.

        The server turns the names of one call into one query of nested ORs: a thousand of them overflow
        the stack of a Derby-backed metastore, so a call names at most a hundred."""
        dropped = 0
        for start in range(0, len(names), DROP_BATCH):
            request = ttypes.DropPartitionsRequest(
                dbName=database, tblName=table, parts=ttypes.RequestPartsSpec(names=list(names[start : start + DROP_BATCH])),
                deleteData=delete_data, ifExists=if_exists, needResult=True, catName=self.metastore_catalog)
            dropped += int(self._ask(CallForm("drop_partitions_req", (request,), lambda answer: len(answer.partitions or [])),
                                     missing=("table", f"{database}.{table}")))
        return dropped
