"""Parse functions of the DDL on databases and tables, the SHOW statements that read them back, and SET.

Spark SQL and HiveQL spellings are both read (``SCHEMA``/``DATABASE``, ``DBPROPERTIES``/``PROPERTIES``),
since that is what PySpark and Hive users type.  The clauses after a CREATE TABLE's column list come in any
order, each at most once, as Spark reads them.  Each function is called with its statement's leading
keywords consumed and returns a node of :mod:`hms_catalog.sql.ast_ddl` (or ``ast``) around a spec of
:mod:`hms_catalog.ddl.specs`; the spec's ``database``/``name`` are the name as written, which the executor
replaces once it has resolved that name against the session.
"""

from __future__ import annotations

import re

from hms_catalog.ddl.specs import ColumnSpec, DatabaseSpec, RowFormatSpec, TableSpec
from hms_catalog.sql._clauses import (
    Clause,
    database_name,
    if_exists,
    if_not_exists,
    keyword,
    partition_spec,
    property_list,
    read_clauses,
    table_name,
)
from hms_catalog.sql._columns import column_list, partitioned_by
from hms_catalog.sql._cursor import NAMES, Cursor, dotted_name
from hms_catalog.sql._expression_parser import expression
from hms_catalog.sql.ast import CreateTableLikePath, Properties, Statement, TableName
from hms_catalog.sql.ast_ddl import (
    AlterDatabase,
    CreateDatabase,
    CreateTable,
    CreateTableLike,
    DropDatabase,
    DropTable,
    SetOption,
    ShowColumns,
    ShowCreateTable,
    ShowPartitions,
    ShowTblProperties,
    ShowViews,
)
from hms_catalog.sql.tokens import TokenType

__all__ = [
    "create_database", "drop_database", "alter_database", "create_table", "create_external_table", "drop_table",
    "show_partitions", "show_create_table", "show_tblproperties", "show_columns", "show_views", "set_option",
]

_COMMENT = "comment (a quoted string)"
_LOCATION = "location (a quoted URI)"
# Option names are dotted words (spark.sql.shuffle.partitions); far fewer parts than this.
_MAX_OPTION_PARTS = 64

# Hive's and Spark's string escapes beyond this language's own, as Hive users write delimiters: '\001', '\u0001'.
_HIVE_ESCAPE = re.compile(r"\\(?:([0-3][0-7]{2})|u([0-9A-Fa-f]{4}))")

# --- databases -------------------------------------------------------------------------------------


class _DatabaseClauses:
    def __init__(self) -> None:
        self.comment: str | None = None
        self.location: str | None = None
        self.properties: Properties = ()

    def clauses(self) -> dict[str, Clause]:
        return {
            "COMMENT": Clause("COMMENT", self._comment),
            "LOCATION": Clause("LOCATION", self._location),
            "WITH": Clause("WITH DBPROPERTIES", self._properties),
        }

    def _comment(self, cur: Cursor) -> None:
        self.comment = cur.expect_string(_COMMENT)

    def _location(self, cur: Cursor) -> None:
        self.location = cur.expect_string(_LOCATION)

    def _properties(self, cur: Cursor) -> None:
        if not cur.match_keyword("DBPROPERTIES"):
            cur.expect_keyword("PROPERTIES")
        self.properties = property_list(cur)


def create_database(cur: Cursor) -> Statement:
    exists_ok = if_not_exists(cur)
    target = database_name(cur)
    found = _DatabaseClauses()
    read_clauses(cur, found.clauses())
    spec = DatabaseSpec(target.database, found.comment, found.location, found.properties, exists_ok)
    return CreateDatabase(target, spec)


def drop_database(cur: Cursor) -> Statement:
    missing_ok = if_exists(cur)
    target = database_name(cur)
    cascade = cur.match_keyword("CASCADE")
    if not cascade:
        cur.match_keyword("RESTRICT")
    return DropDatabase(target, missing_ok, cascade)


def alter_database(cur: Cursor) -> Statement:
    target = database_name(cur)
    cur.expect_keyword("SET")
    if cur.match_keyword("LOCATION"):
        return AlterDatabase(target, location=cur.expect_string(_LOCATION))
    if not cur.match_keyword("DBPROPERTIES"):
        cur.expect_keyword("PROPERTIES")
    return AlterDatabase(target, property_list(cur))


# --- tables ----------------------------------------------------------------------------------------


def create_table(cur: Cursor, *, external: bool = False) -> Statement:
    """``CREATE TABLE`` in its three shapes: ``LIKE PATH 'uri'``, ``LIKE other`` and a column list."""
    exists_ok = if_not_exists(cur)
    name = table_name(cur)
    if cur.match_keyword("LIKE"):
        # ``LIKE path`` may copy a table called path: PATH is the keyword unless only a table name fits what follows.
        after = cur.peek(1)
        if cur.peek().is_keyword("PATH") and not (after.type in (TokenType.DOT, TokenType.EOF, TokenType.SEMICOLON)
                                                  or after.is_keyword("LOCATION")):
            cur.advance()  # LIKE PATH registers files that stay where they are: EXTERNAL says nothing more
            path = cur.expect_string("path (a quoted URI, such as 'file:///data/lake/raw/events')")
            return CreateTableLikePath(name, path, exists_ok)
        cur.tried("PATH")
        source = table_name(cur)
        found = _TableClauses(())
        like_clauses = {word: clause for word, clause in found.clauses().items()
                        if word in ("USING", "ROW", "STORED", "LOCATION", "TBLPROPERTIES")}
        read_clauses(cur, like_clauses)
        named = (found.provider, found.stored_as, found.row_format) != (None, None, None) or found.properties
        storage = found.spec(name, external=external, if_not_exists=exists_ok) if named else None
        return CreateTableLike(name, source, exists_ok, found.location, external, storage)
    columns = column_list(cur)
    found = _TableClauses(columns)
    read_clauses(cur, found.clauses())
    _refuse_buckets(cur)
    return CreateTable(name, found.spec(name, external=external, if_not_exists=exists_ok))


def _refuse_buckets(cur: Cursor) -> None:
    """Bucketed and skewed tables are refused, saying so: writes here would not lay their files out as the buckets
    promise, and a table without them would not be the table Spark's or Hive's DDL makes."""
    token = cur.peek()
    if token.is_keyword("CLUSTERED") or token.is_keyword("SKEWED"):
        raise cur.error(f"{token.value.upper()} BY (bucketed or skewed tables) is not supported by this catalog; "
                        "create the table without it, or through Spark or Hive", token)


def create_external_table(cur: Cursor) -> Statement:
    return create_table(cur, external=True)


class _TableClauses:
    """What the clauses after a CREATE TABLE's column list say."""

    def __init__(self, columns: tuple[ColumnSpec, ...]) -> None:
        self.columns = columns
        self.partition_columns: tuple[ColumnSpec, ...] = ()
        self.partition_transforms: tuple[str, ...] = ()
        self.comment: str | None = None
        self.stored_as: str | None = None
        self.row_format: RowFormatSpec | None = None
        self.provider: str | None = None
        self.options: Properties = ()
        self.location: str | None = None
        self.properties: Properties = ()

    def clauses(self) -> dict[str, Clause]:
        return {
            "COMMENT": Clause("COMMENT", self._comment),
            "PARTITIONED": Clause("PARTITIONED BY", self._partitioned),
            "ROW": Clause("ROW FORMAT", self._row_format),
            "STORED": Clause("STORED AS", self._stored_as),
            "USING": Clause("USING", self._using),
            "OPTIONS": Clause("OPTIONS", self._options),
            "LOCATION": Clause("LOCATION", self._location),
            "TBLPROPERTIES": Clause("TBLPROPERTIES", self._properties),
        }

    def spec(self, name: TableName, *, external: bool, if_not_exists: bool) -> TableSpec:
        return TableSpec(
            database=name.database or "", name=name.table, columns=self.columns,
            partition_columns=self.partition_columns, partition_transforms=self.partition_transforms,
            comment=self.comment, stored_as=self.stored_as, row_format=self.row_format, provider=self.provider,
            options=self.options, location=self.location, external=external, properties=self.properties,
            if_not_exists=if_not_exists,
        )

    def _comment(self, cur: Cursor) -> None:
        self.comment = cur.expect_string(_COMMENT)

    def _partitioned(self, cur: Cursor) -> None:
        self.partition_columns, self.partition_transforms = partitioned_by(cur, self.columns)

    def _row_format(self, cur: Cursor) -> None:
        cur.expect_keyword("FORMAT")
        if cur.match_keyword("SERDE"):
            serde = cur.expect_string("serde class (a quoted string)")
            serde_properties: Properties = ()
            if cur.match_keyword("WITH"):
                cur.expect_keyword("SERDEPROPERTIES")
                serde_properties = property_list(cur)
            self.row_format = RowFormatSpec(serde=serde, serde_properties=serde_properties)
            return
        cur.expect_keyword("DELIMITED")
        delimiters = _Delimiters()
        read_clauses(cur, delimiters.clauses())
        self.row_format = delimiters.spec()

    def _stored_as(self, cur: Cursor) -> None:
        cur.expect_keyword("AS")
        token = cur.peek()
        if token.is_keyword("INPUTFORMAT"):
            raise cur.error("STORED AS INPUTFORMAT .. OUTPUTFORMAT .. is not supported; name a storage format "
                            "(STORED AS PARQUET, ORC, TEXTFILE, AVRO, ...) or use ROW FORMAT SERDE", token)
        if token.type is not TokenType.IDENTIFIER:
            raise cur.expected("storage format (PARQUET, ORC, TEXTFILE, AVRO, ...)")
        self.stored_as = cur.advance().value.upper()

    def _using(self, cur: Cursor) -> None:
        self.provider = ".".join(dotted_name(cur, "data source (parquet, orc, csv, json, iceberg, ...)", _MAX_OPTION_PARTS,
                                             "provider"))

    def _options(self, cur: Cursor) -> None:
        self.options = property_list(cur)

    def _location(self, cur: Cursor) -> None:
        self.location = cur.expect_string(_LOCATION)

    def _properties(self, cur: Cursor) -> None:
        self.properties = property_list(cur)


class _Delimiters:
    """``ROW FORMAT DELIMITED``'s clauses; Hive fixes their order, we take any (each once), as for the rest."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def clauses(self) -> dict[str, Clause]:
        return {
            "FIELDS": Clause("FIELDS TERMINATED BY", self._fields),
            "COLLECTION": Clause("COLLECTION ITEMS TERMINATED BY", self._collection_items),
            "MAP": Clause("MAP KEYS TERMINATED BY", self._map_keys),
            "LINES": Clause("LINES TERMINATED BY", self._lines),
            "NULL": Clause("NULL DEFINED AS", self._null),
        }

    def spec(self) -> RowFormatSpec:
        given = self.values.get
        return RowFormatSpec(
            fields_terminated_by=given("fields_terminated_by"), escaped_by=given("escaped_by"),
            collection_items_terminated_by=given("collection_items_terminated_by"),
            map_keys_terminated_by=given("map_keys_terminated_by"), lines_terminated_by=given("lines_terminated_by"),
            null_defined_as=given("null_defined_as"),
        )

    def _delimiter(self, cur: Cursor, field: str) -> None:
        """The delimiter with Hive's octal and unicode escapes decoded (this language's tokenizer keeps them as
        written), so ``'\\001'`` is the character Hive's own DDL would store."""
        written = cur.expect_string("delimiter (a quoted string)")
        self.values[field] = _HIVE_ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 8 if m.group(1) else 16)), written)

    def _terminated_by(self, cur: Cursor, field: str) -> None:
        cur.expect_keyword("TERMINATED")
        cur.expect_keyword("BY")
        self._delimiter(cur, field)

    def _fields(self, cur: Cursor) -> None:
        self._terminated_by(cur, "fields_terminated_by")
        if cur.match_keyword("ESCAPED"):
            cur.expect_keyword("BY")
            self._delimiter(cur, "escaped_by")

    def _collection_items(self, cur: Cursor) -> None:
        cur.expect_keyword("ITEMS")
        self._terminated_by(cur, "collection_items_terminated_by")

    def _map_keys(self, cur: Cursor) -> None:
        cur.expect_keyword("KEYS")
        self._terminated_by(cur, "map_keys_terminated_by")

    def _lines(self, cur: Cursor) -> None:
        self._terminated_by(cur, "lines_terminated_by")

    def _null(self, cur: Cursor) -> None:
        cur.expect_keyword("DEFINED")
        cur.expect_keyword("AS")
        self._delimiter(cur, "null_defined_as")


def drop_table(cur: Cursor) -> Statement:
    missing_ok = if_exists(cur)
    name = table_name(cur)
    return DropTable(name, missing_ok, cur.match_keyword("PURGE"))


# --- reading back ----------------------------------------------------------------------------------


def show_partitions(cur: Cursor) -> Statement:
    if not cur.match_keyword("FROM"):
        cur.match_keyword("IN")
    name = table_name(cur)
    partition = partition_spec(cur) if cur.match_keyword("PARTITION") else ()
    where = expression(cur) if cur.match_keyword("WHERE") else None
    return ShowPartitions(name, partition, where)


def _from_or_in(cur: Cursor) -> bool:
    return cur.match_keyword("FROM") or cur.match_keyword("IN")


def show_columns(cur: Cursor) -> Statement:
    """Spark's ``FROM|IN t [FROM|IN [cat.]db]``; a database named both ways must be the same one, as Spark requires."""
    if not _from_or_in(cur):
        raise cur.expected("FROM")  # the message lists FROM and IN, which were looked for
    name = table_name(cur)
    if not _from_or_in(cur):
        return ShowColumns(name)
    token = cur.peek()
    database = database_name(cur)
    catalogs = {c.lower() for c in (name.catalog, database.catalog) if c is not None}
    if len(catalogs) > 1 or (name.database is not None and name.database.lower() != database.database.lower()):
        raise cur.error(f"SHOW COLUMNS names two databases: '{'.'.join(p for p in (name.catalog, name.database) if p)}' with the "
                        f"table and '{'.'.join(p for p in (database.catalog, database.database) if p)}' after it", token)
    return ShowColumns(TableName(database.catalog or name.catalog, database.database, name.table))


def show_views(cur: Cursor) -> Statement:
    """Spark's ``[FROM|IN [cat.]db] [[LIKE] 'pattern']``."""
    database = database_name(cur) if _from_or_in(cur) else None
    if cur.match_keyword("LIKE") or cur.peek().type is TokenType.STRING:
        return ShowViews(database, cur.expect_string("pattern (a quoted string)"))
    return ShowViews(database)


def show_create_table(cur: Cursor) -> Statement:
    return ShowCreateTable(table_name(cur))


def show_tblproperties(cur: Cursor) -> Statement:
    name = table_name(cur)
    if not cur.match_symbol(TokenType.LPAREN):
        return ShowTblProperties(name)
    token = cur.peek()
    if token.type is TokenType.STRING:
        key = cur.advance().value
    elif token.type in NAMES:
        key = ".".join(dotted_name(cur, "property key", _MAX_OPTION_PARTS, "key"))
    else:
        raise cur.expected("property key (a quoted string or a name)")
    cur.expect_symbol(TokenType.RPAREN)
    return ShowTblProperties(name, key)


# --- session options -------------------------------------------------------------------------------


def set_option(cur: Cursor) -> Statement:
    """``SET key = value`` (a word, dotted name, number, boolean or quoted string, kept as text); ``SET key``."""
    key = ".".join(dotted_name(cur, "option name", _MAX_OPTION_PARTS, "name"))
    if not cur.match_symbol(TokenType.EQ):
        return SetOption(key)
    token = cur.peek()
    if token.type is TokenType.STRING:
        return SetOption(key, cur.advance().value)
    if token.type is TokenType.NUMBER:
        return SetOption(key, cur.advance().raw)
    if token.type is TokenType.MINUS and cur.peek(1).type is TokenType.NUMBER:
        cur.advance()
        return SetOption(key, "-" + cur.advance().raw)
    if keyword(token) is not None:
        return SetOption(key, ".".join(dotted_name(cur, "option value", _MAX_OPTION_PARTS, "value")))
    raise cur.expected("option value (a word, a number, true, false or a quoted string)")
