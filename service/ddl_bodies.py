"""Request bodies of the DDL routes, each mirroring a statement and turned into the same frozen specs
(:mod:`hms_catalog.ddl.specs`) the SQL parser makes, so a REST call and a statement run one operation.

Names and types are kept as given: the operations check them (a type the type model does not know, a
partition value of the wrong type) and their errors name the object and the reason.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from hms_catalog.ddl import specs
from service.bodies import Body

__all__ = [
    "AddColumnsBody", "AddPartitionsBody", "ChangeColumnBody", "ColumnBody", "DdlAnswer", "NewDatabase", "NewTable",
    "NewTableLike", "PartitionBody", "RecoverBody", "RenameBody", "RenameColumnBody", "ReplaceColumnsBody", "RowFormatBody",
    "SetLocationBody", "SetPropertiesBody", "TableChangeBody", "TableChanges", "DatabaseChange", "UnsetPropertiesBody",
]


def _pairs(values: dict[str, str]) -> specs.Pairs:
    return tuple(values.items())


class DdlAnswer(Body):
    """What a DDL did, in words, and the catalog's version after it."""

    result: str
    version: int


class ColumnBody(Body):
    name: str
    type: str = Field(description="a Hive type: int, decimal(10,2), array<struct<a:int>>, ...")
    comment: str | None = Field(default=None, description="none: no comment; '' is a comment of its own, as Spark keeps it")

    def spec(self) -> specs.ColumnSpec:
        return specs.ColumnSpec(self.name, self.type, self.comment)


def _columns(columns: list[ColumnBody]) -> tuple[specs.ColumnSpec, ...]:
    return tuple(column.spec() for column in columns)


class NewDatabase(Body):
    """``CREATE DATABASE [IF NOT EXISTS] name [COMMENT ..] [LOCATION ..] [WITH DBPROPERTIES (..)]``."""

    name: str
    comment: str | None = None
    location: str | None = None
    properties: dict[str, str] = {}
    if_not_exists: bool = False

    def spec(self) -> specs.DatabaseSpec:
        return specs.DatabaseSpec(self.name, self.comment, self.location, _pairs(self.properties), self.if_not_exists)


class DatabaseChange(Body):
    """``ALTER DATABASE .. SET DBPROPERTIES (..)``."""

    properties: dict[str, str] = Field(min_length=1)


class RowFormatBody(Body):
    """``ROW FORMAT DELIMITED ...`` or ``ROW FORMAT SERDE 'class' [WITH SERDEPROPERTIES (..)]``."""

    serde: str | None = None
    fields_terminated_by: str | None = None
    escaped_by: str | None = None
    collection_items_terminated_by: str | None = None
    map_keys_terminated_by: str | None = None
    lines_terminated_by: str | None = None
    null_defined_as: str | None = None
    serde_properties: dict[str, str] = {}

    def spec(self) -> specs.RowFormatSpec:
        fields = self.model_dump(exclude={"serde_properties"})
        return specs.RowFormatSpec(**fields, serde_properties=_pairs(self.serde_properties))


class NewTable(Body):
    """``CREATE [EXTERNAL] TABLE [IF NOT EXISTS] name (columns) ...``: ``stored_as`` and/or ``row_format`` make
    a Hive table, ``provider`` a Spark data source table (``iceberg``: an Iceberg table)."""

    name: str
    columns: list[ColumnBody]
    partition_columns: list[ColumnBody] = []
    partition_transforms: list[str] = Field(default=[], description="Iceberg's (dt, days(ts), bucket(16, id)), or a "
                                                                    "data source table's partition columns")
    comment: str | None = None
    stored_as: str | None = None
    row_format: RowFormatBody | None = None
    provider: str | None = None
    options: dict[str, str] = {}
    location: str | None = None
    external: bool = False
    properties: dict[str, str] = {}
    if_not_exists: bool = False

    def spec(self, database: str) -> specs.TableSpec:
        return specs.TableSpec(
            database=database, name=self.name, columns=_columns(self.columns), partition_columns=_columns(self.partition_columns),
            partition_transforms=tuple(self.partition_transforms), comment=self.comment, stored_as=self.stored_as,
            row_format=None if self.row_format is None else self.row_format.spec(), provider=self.provider,
            options=_pairs(self.options), location=self.location, external=self.external, properties=_pairs(self.properties),
            if_not_exists=self.if_not_exists,
        )


class NewTableLike(Body):
    """``CREATE [EXTERNAL] TABLE [IF NOT EXISTS] name LIKE [db.]other [LOCATION ..]``."""

    name: str
    like: str = Field(description="the table to copy: 'other' (this database) or 'db.other' (this catalog)")
    location: str | None = None
    external: bool = False
    if_not_exists: bool = False


# ALTER TABLE changes, one object each, told apart by "op" -------------------------------------------


class AddColumnsBody(Body):
    op: Literal["add_columns"]
    columns: list[ColumnBody] = Field(min_length=1)
    cascade: bool = False  # Hive's RESTRICT, the default of Hive's and Spark's own ADD COLUMNS

    def change(self) -> specs.TableChange:
        return specs.AddColumns(_columns(self.columns), self.cascade)


class RenameColumnBody(Body):
    op: Literal["rename_column"]
    old: str
    new: str

    def change(self) -> specs.TableChange:
        return specs.RenameColumn(self.old, self.new)


class ChangeColumnBody(Body):
    """A new name, a wider type and/or a new comment for one column (``new`` defaults to ``old``)."""

    op: Literal["change_column"]
    old: str
    new: str | None = None
    type: str | None = None
    comment: str | None = None

    def change(self) -> specs.TableChange:
        return specs.ChangeColumn(self.old, self.new or self.old, self.type, self.comment)


class ReplaceColumnsBody(Body):
    op: Literal["replace_columns"]
    columns: list[ColumnBody] = Field(min_length=1)

    def change(self) -> specs.TableChange:
        return specs.ReplaceColumns(_columns(self.columns))


class RenameBody(Body):
    """``RENAME TO [database.]name`` within the catalog; later changes of the same request apply to the new name."""

    op: Literal["rename"]
    database: str | None = None
    name: str


class SetPropertiesBody(Body):
    op: Literal["set_properties"]
    properties: dict[str, str] = Field(min_length=1)

    def change(self) -> specs.TableChange:
        return specs.SetTableProperties(_pairs(self.properties))


class UnsetPropertiesBody(Body):
    op: Literal["unset_properties"]
    keys: list[str] = Field(min_length=1)
    if_exists: bool = False

    def change(self) -> specs.TableChange:
        return specs.UnsetTableProperties(tuple(self.keys), self.if_exists)


class SetLocationBody(Body):
    """The table's location, or with ``partition`` (all its keys) one partition's."""

    op: Literal["set_location"]
    location: str
    partition: dict[str, str | None] | None = None

    def change(self) -> specs.TableChange:
        partition = None if self.partition is None else specs.PartitionValues(tuple(self.partition.items()))
        return specs.SetLocation(self.location, partition)


TableChangeBody = Annotated[
    AddColumnsBody | RenameColumnBody | ChangeColumnBody | ReplaceColumnsBody | RenameBody | SetPropertiesBody
    | UnsetPropertiesBody | SetLocationBody,
    Field(discriminator="op"),
]


class TableChanges(Body):
    """Changes applied in order, each its own DDL; the answer is the last one's."""

    changes: list[TableChangeBody] = Field(min_length=1)


# Partitions --------------------------------------------------------------------------------------


class PartitionBody(Body):
    values: dict[str, str | None] = Field(min_length=1, description="every partition key's value (null: NULL)")
    location: str | None = None

    def spec(self) -> specs.PartitionValues:
        return specs.PartitionValues(tuple(self.values.items()), self.location)


class AddPartitionsBody(Body):
    """``ALTER TABLE .. ADD [IF NOT EXISTS] PARTITION (..) [LOCATION ..] ...``: all of them or none."""

    partitions: list[PartitionBody] = Field(min_length=1)
    if_not_exists: bool = False

    def change(self) -> specs.AddPartitions:
        return specs.AddPartitions(tuple(p.spec() for p in self.partitions), self.if_not_exists)


class RecoverBody(Body):
    """``MSCK REPAIR TABLE``: ``add`` the folders the metastore lacks, ``drop`` the partitions whose folder is gone."""

    add: bool = True
    drop: bool = False

    def change(self) -> specs.RecoverPartitions:
        return specs.RecoverPartitions(self.add, self.drop)
