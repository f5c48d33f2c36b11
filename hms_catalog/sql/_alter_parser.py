"""Parse functions of ALTER TABLE (one reader per action, found by the action's first word) and MSCK REPAIR.

Both Hive's and Spark's spellings are read: Hive's ``CHANGE [COLUMN] a b type`` as well as Spark's
``ALTER|CHANGE [COLUMN] a TYPE type`` / ``COMMENT 'c'`` (a bare TYPE after the column is Spark's action, as
Spark decides; a column renamed to ``type`` is written backquoted), ``ADD COLUMNS (..)`` as well as
``ADD COLUMN a int``.  A filesystem catalog's own actions (REFRESH METADATA, PROMOTE, SET FORMAT) live here
too, so one table lists every action an error may offer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from hms_catalog.ddl.specs import (
    AddColumns,
    AddPartitions,
    ChangeColumn,
    DropPartitions,
    PartitionValues,
    RecoverPartitions,
    RenameColumn,
    ReplaceColumns,
    SetLocation,
    SetSerdeProperties,
    SetTableProperties,
    UnsetTableProperties,
)
from hms_catalog.sql._clauses import (
    if_exists,
    if_not_exists,
    keyword,
    partition_spec,
    properties,
    property_keys,
    property_list,
    table_name,
)
from hms_catalog.sql._columns import column_list, column_name, column_sequence, column_type
from hms_catalog.sql._cursor import Cursor, alternatives
from hms_catalog.sql.ast import AlterTableFormat, Statement, TableName
from hms_catalog.sql.ast_ddl import AlterTable, AlterTableRename
from hms_catalog.sql.tokens import TokenType

__all__ = ["alter_table", "msck_repair_table"]

_COMMENT = "comment (a quoted string)"
_LOCATION = "location (a quoted URI)"

# How an unknown action's error lists what is allowed, in the order a reader scans it.
_ACTION_NAMES = (
    "ADD COLUMNS", "ADD PARTITION", "DROP PARTITION", "RENAME COLUMN", "RENAME TO", "CHANGE COLUMN", "ALTER COLUMN",
    "REPLACE COLUMNS", "SET TBLPROPERTIES", "UNSET TBLPROPERTIES", "SET SERDEPROPERTIES", "SET SERDE", "SET LOCATION",
    "PARTITION (..) SET LOCATION", "RECOVER PARTITIONS", "REFRESH METADATA", "PROMOTE", "SET FORMAT",
)


def alter_table(cur: Cursor) -> Statement:
    name = table_name(cur)
    token = cur.peek()
    word = keyword(token)
    action = _ACTIONS.get(word) if word is not None else None
    if action is None:
        raise cur.error(f"expected an ALTER TABLE action: {alternatives(list(_ACTION_NAMES))}", token)
    cur.advance()
    return action(cur, name)


def msck_repair_table(cur: Cursor) -> Statement:
    """``MSCK REPAIR TABLE t [ADD|DROP|SYNC PARTITIONS]``: add only unless told otherwise, as Hive."""
    name = table_name(cur)
    for word, add, drop in (("ADD", True, False), ("DROP", False, True), ("SYNC", True, True)):
        if cur.match_keyword(word):
            cur.expect_keyword("PARTITIONS")
            return AlterTable(name, RecoverPartitions(add, drop))
    return AlterTable(name, RecoverPartitions())


def _cascade(cur: Cursor) -> bool:
    """Hive's ``[CASCADE|RESTRICT]`` after a column change; RESTRICT (the table's columns only) unless CASCADE, as
    Hive's and Spark's own DDL default. Spark reads old partitions with the table's columns either way."""
    if cur.match_keyword("CASCADE"):
        return True
    cur.match_keyword("RESTRICT")
    return False


def _add(cur: Cursor, table: TableName) -> Statement:
    if cur.match_keyword("COLUMNS") or cur.match_keyword("COLUMN"):
        columns = column_list(cur) if cur.peek().type is TokenType.LPAREN else column_sequence(cur)
        return AlterTable(table, AddColumns(columns, _cascade(cur)))
    exists_ok = if_not_exists(cur)
    cur.expect_keyword("PARTITION")
    seen: set[frozenset[tuple[str, str | None]]] = set()  # a statement may add tens of thousands: no pairwise check
    partitions = [_located_partition(cur, seen)]
    while True:
        if cur.match_symbol(TokenType.COMMA):  # Hive and Spark write none; the DROP PARTITION habit is harmless
            cur.expect_keyword("PARTITION")
        elif not cur.match_keyword("PARTITION"):
            return AlterTable(table, AddPartitions(tuple(partitions), exists_ok))
        partitions.append(_located_partition(cur, seen))


def _located_partition(cur: Cursor, seen: set[frozenset[tuple[str, str | None]]]) -> PartitionValues:
    """A ``PARTITION`` keyword just read, then ``(k = v, ..) [LOCATION 'uri']``; ``seen`` holds the earlier ones."""
    start = cur.previous() or cur.peek()
    values = partition_spec(cur)
    folded = _folded(values)
    if folded in seen:
        raise cur.error("duplicate partition in ADD PARTITION", start)
    seen.add(folded)
    return PartitionValues(values, cur.expect_string(_LOCATION) if cur.match_keyword("LOCATION") else None)


def _folded(values: tuple[tuple[str, str | None], ...]) -> frozenset[tuple[str, str | None]]:
    return frozenset((key.lower(), value) for key, value in values)


def _drop(cur: Cursor, table: TableName) -> Statement:
    missing_ok = if_exists(cur)
    cur.expect_keyword("PARTITION")
    partitions = [PartitionValues(partition_spec(cur))]
    while cur.match_symbol(TokenType.COMMA):
        cur.expect_keyword("PARTITION")
        partitions.append(PartitionValues(partition_spec(cur)))
    return AlterTable(table, DropPartitions(tuple(partitions), missing_ok, cur.match_keyword("PURGE")))


def _rename(cur: Cursor, table: TableName) -> Statement:
    if cur.match_keyword("COLUMN"):
        old = column_name(cur)
        cur.expect_keyword("TO")
        return AlterTable(table, RenameColumn(old, column_name(cur, "new column name")))
    cur.expect_keyword("TO")
    return AlterTableRename(table, table_name(cur, "new table name"))


def _change(cur: Cursor, table: TableName) -> Statement:
    """Hive's ``CHANGE [COLUMN] old new type [COMMENT 'c'] [CASCADE|RESTRICT]``, or Spark's actions."""
    cur.match_keyword("COLUMN")
    old = column_name(cur)
    token = cur.peek()
    if token.is_keyword("TYPE") or (token.is_keyword("COMMENT") and cur.peek(1).type is TokenType.STRING):
        return _column_action(cur, table, old)
    new = column_name(cur, "new column name")
    kind = column_type(cur, new)
    comment = cur.expect_string(_COMMENT) if cur.match_keyword("COMMENT") else None
    first = cur.match_keyword("FIRST")
    after = column_name(cur, "column to place it after") if not first and cur.match_keyword("AFTER") else None
    return AlterTable(table, ChangeColumn(old, new, kind, comment, _cascade(cur), first, after))


def _alter(cur: Cursor, table: TableName) -> Statement:
    cur.match_keyword("COLUMN")
    return _column_action(cur, table, column_name(cur))


def _column_action(cur: Cursor, table: TableName, column: str) -> Statement:
    """Spark's ``TYPE type`` or ``COMMENT 'c'`` for one column."""
    if cur.match_keyword("TYPE"):
        return AlterTable(table, ChangeColumn(column, column, column_type(cur, column)))
    cur.expect_keyword("COMMENT")
    return AlterTable(table, ChangeColumn(column, column, comment=cur.expect_string(_COMMENT)))


def _replace(cur: Cursor, table: TableName) -> Statement:
    cur.expect_keyword("COLUMNS")
    columns = column_list(cur)
    return AlterTable(table, ReplaceColumns(columns, _cascade(cur)))


def _set(cur: Cursor, table: TableName) -> Statement:
    if cur.match_keyword("TBLPROPERTIES"):
        return AlterTable(table, SetTableProperties(property_list(cur)))
    if cur.match_keyword("LOCATION"):
        return AlterTable(table, SetLocation(cur.expect_string(_LOCATION)))
    if cur.match_keyword("SERDEPROPERTIES"):
        return AlterTable(table, SetSerdeProperties(property_list(cur)))
    if cur.match_keyword("SERDE"):
        serde = cur.expect_string("serde class (a quoted string)")
        serde_properties: tuple[tuple[str, str], ...] = ()
        if cur.match_keyword("WITH"):
            cur.expect_keyword("SERDEPROPERTIES")
            serde_properties = property_list(cur)
        return AlterTable(table, SetSerdeProperties(serde_properties, serde))
    if cur.peek().is_keyword("FILEFORMAT"):
        raise cur.error("SET FILEFORMAT is not supported by this catalog (files already written would not match); "
                        "create a new table STORED AS the format and copy the rows", cur.peek())
    cur.expect_keyword("FORMAT")
    return AlterTableFormat(table, "SET FORMAT", properties(cur))


def _unset(cur: Cursor, table: TableName) -> Statement:
    cur.expect_keyword("TBLPROPERTIES")
    missing_ok = if_exists(cur)
    return AlterTable(table, UnsetTableProperties(property_keys(cur), missing_ok))


def _partition(cur: Cursor, table: TableName) -> Statement:
    values = partition_spec(cur)
    if cur.peek().is_keyword("RENAME") or (cur.peek().is_keyword("SET") and not cur.peek(1).is_keyword("LOCATION")):
        token = cur.peek()
        raise cur.error(f"ALTER TABLE .. PARTITION (..) {token.value.upper()} {cur.peek(1).value.upper()} is not supported by this "
                        "catalog; of a partition, only SET LOCATION is", token)
    cur.expect_keyword("SET")
    cur.expect_keyword("LOCATION")
    return AlterTable(table, SetLocation(cur.expect_string(_LOCATION), PartitionValues(values)))


def _recover(cur: Cursor, table: TableName) -> Statement:
    cur.expect_keyword("PARTITIONS")
    return AlterTable(table, RecoverPartitions())


def _refresh(cur: Cursor, table: TableName) -> Statement:
    cur.expect_keyword("METADATA")
    return AlterTableFormat(table, "REFRESH METADATA")


def _promote(cur: Cursor, table: TableName) -> Statement:
    return AlterTableFormat(table, "PROMOTE")


_Action = Callable[[Cursor, TableName], Statement]

_ACTIONS: Mapping[str, _Action] = MappingProxyType({
    "ADD": _add, "DROP": _drop, "RENAME": _rename, "CHANGE": _change, "ALTER": _alter, "REPLACE": _replace, "SET": _set,
    "UNSET": _unset, "PARTITION": _partition, "RECOVER": _recover, "REFRESH": _refresh, "PROMOTE": _promote,
})
