"""What a DDL asks for, as frozen values: what the SQL parser, the REST bodies and Spark's ``createTable`` /
``alterTable`` all become before anything reaches a metastore.

Names are kept as given (the operations lower-case them as the metastore does); types are Hive type
strings, checked by the type model when the operation runs. A spec says nothing of how it is carried out.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ColumnSpec", "RowFormatSpec", "TableSpec", "DatabaseSpec", "PartitionValues", "TableChange",
    "AddColumns", "RenameColumn", "ChangeColumn", "ReplaceColumns", "RenameTable", "SetTableProperties",
    "UnsetTableProperties", "SetSerdeProperties", "SetLocation", "AddPartitions", "DropPartitions", "RecoverPartitions", "Pairs",
]

Pairs = tuple[tuple[str, str], ...]  # ordered (key, value) pairs, hashable


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    type: str  # a Hive type string: int, decimal(10,2), array<struct<a:int>>, ...
    comment: str | None = None  # None: no comment; '' is a comment of its own, which Spark keeps as given
    nullable: bool = True  # False for Spark's ``NOT NULL``; Hive columns are always nullable


@dataclass(frozen=True)
class RowFormatSpec:
    """``ROW FORMAT DELIMITED ...`` or ``ROW FORMAT SERDE 'class' [WITH SERDEPROPERTIES (...)]``."""

    serde: str | None = None
    fields_terminated_by: str | None = None
    escaped_by: str | None = None
    collection_items_terminated_by: str | None = None
    map_keys_terminated_by: str | None = None
    lines_terminated_by: str | None = None
    null_defined_as: str | None = None
    serde_properties: Pairs = ()


@dataclass(frozen=True)
class TableSpec:
    """A table to create.

    Storage: ``stored_as`` (Hive's names: PARQUET, ORC, TEXTFILE, AVRO, ...) and/or ``row_format`` make a
    Hive table; ``provider`` (``USING parquet|orc|csv|json``) a Spark data source table, ``iceberg`` an
    Iceberg table. ``partition_columns`` are Hive's partition keys (typed, after the data columns);
    ``partition_transforms`` Iceberg's partition fields (``col``, ``days(ts)``, ``bucket(16, id)``) or, for
    a Spark data source table, the names of data columns to partition by.
    """

    database: str
    name: str
    columns: tuple[ColumnSpec, ...]
    partition_columns: tuple[ColumnSpec, ...] = ()
    partition_transforms: tuple[str, ...] = ()
    comment: str | None = None
    stored_as: str | None = None
    row_format: RowFormatSpec | None = None
    provider: str | None = None
    options: Pairs = ()
    location: str | None = None
    external: bool = False
    properties: Pairs = ()
    if_not_exists: bool = False


@dataclass(frozen=True)
class DatabaseSpec:
    name: str
    comment: str | None = None
    location: str | None = None
    properties: Pairs = ()
    if_not_exists: bool = False


@dataclass(frozen=True)
class PartitionValues:
    """One partition by its key values (``(('dt', '2024-01-01'), ('hr', '5'))``), and where it lives when given."""

    values: tuple[tuple[str, str | None], ...]
    location: str | None = None


@dataclass(frozen=True)
class TableChange:
    """One change of an ALTER TABLE; the subclasses say which."""


@dataclass(frozen=True)
class AddColumns(TableChange):
    columns: tuple[ColumnSpec, ...]
    cascade: bool = False  # Hive's CASCADE: existing partitions get the columns too (RESTRICT, the default: not)


@dataclass(frozen=True)
class RenameColumn(TableChange):
    old: str
    new: str


@dataclass(frozen=True)
class ChangeColumn(TableChange):
    """``CHANGE [COLUMN] old new type [COMMENT ..] [FIRST|AFTER c]``: a rename, a widening of the type, a new
    comment, a new place among the columns."""

    old: str
    new: str
    type: str | None = None
    comment: str | None = None
    cascade: bool = False  # Hive's CASCADE: existing partitions get the change too (RESTRICT, the default: not)
    first: bool = False
    after: str | None = None


@dataclass(frozen=True)
class ReplaceColumns(TableChange):
    columns: tuple[ColumnSpec, ...]
    cascade: bool = False  # Hive's CASCADE: existing partitions get the columns too (RESTRICT, the default: not)


@dataclass(frozen=True)
class RenameTable(TableChange):
    database: str | None  # None: the same database
    name: str


@dataclass(frozen=True)
class SetTableProperties(TableChange):
    properties: Pairs


@dataclass(frozen=True)
class UnsetTableProperties(TableChange):
    keys: tuple[str, ...]
    if_exists: bool = False


@dataclass(frozen=True)
class SetSerdeProperties(TableChange):
    """``SET SERDEPROPERTIES (..)`` or ``SET SERDE 'class' [WITH SERDEPROPERTIES (..)]``: merged into the table's."""

    properties: Pairs
    serde: str | None = None


@dataclass(frozen=True)
class SetLocation(TableChange):
    location: str
    partition: PartitionValues | None = None


@dataclass(frozen=True)
class AddPartitions(TableChange):
    partitions: tuple[PartitionValues, ...]
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropPartitions(TableChange):
    partitions: tuple[PartitionValues, ...]  # each may be partial: every partition it matches
    if_exists: bool = False
    purge: bool = False


@dataclass(frozen=True)
class RecoverPartitions(TableChange):
    """``ALTER TABLE .. RECOVER PARTITIONS`` / ``MSCK REPAIR TABLE [ADD|DROP|SYNC PARTITIONS]``."""

    add: bool = True
    drop: bool = False
