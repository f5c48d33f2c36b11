"""The DDL statements' syntax: Spark SQL and HiveQL spellings to the frozen specs the operations take."""

from __future__ import annotations

import pickle

import pytest

from hms_catalog.ddl.specs import (
    AddColumns,
    AddPartitions,
    ChangeColumn,
    ColumnSpec,
    DatabaseSpec,
    DropPartitions,
    PartitionValues,
    RecoverPartitions,
    RenameColumn,
    ReplaceColumns,
    RowFormatSpec,
    SetLocation,
    SetSerdeProperties,
    SetTableProperties,
    TableSpec,
    UnsetTableProperties,
)
from hms_catalog.errors import SqlSyntaxError
from hms_catalog.sql import (
    ColumnRef,
    Comparison,
    DatabaseName,
    Literal,
    Statement,
    TableName,
    parse,
    parse_expression,
    parse_statement,
)
from hms_catalog.sql.ast import AlterTableFormat, CreateTableLikePath
from hms_catalog.sql.ast_ddl import (
    AlterDatabase,
    AlterTable,
    AlterTableRename,
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
from hms_catalog.types import parse_hive_type, to_hive_string

T = TableName(None, None, "t")
ORDERS = TableName("hive", "sales", "orders")


def table(statement: Statement) -> TableSpec:
    assert isinstance(statement, CreateTable)
    return statement.spec


def change(text: str) -> object:
    statement = parse_statement(text)
    assert isinstance(statement, AlterTable) and statement.table == T
    return statement.change


# --- databases -------------------------------------------------------------------------------------

DATABASES: list[tuple[str, Statement]] = [
    ("CREATE DATABASE db", CreateDatabase(DatabaseName(None, "db"), DatabaseSpec("db"))),
    ("create schema if not exists hive.Db", CreateDatabase(DatabaseName("hive", "Db"), DatabaseSpec("Db", if_not_exists=True))),
    (
        "CREATE DATABASE hive.db COMMENT 'c' LOCATION 's3://b/db' WITH DBPROPERTIES ('team' = 'etl', 'a'='1')",
        CreateDatabase(DatabaseName("hive", "db"), DatabaseSpec("db", "c", "s3://b/db", (("team", "etl"), ("a", "1")))),
    ),
    (  # the clauses in any order, Spark's PROPERTIES and its unquoted keys and values
        "CREATE SCHEMA db WITH PROPERTIES (team.name = 'etl', retries 3) LOCATION 'file:///w' COMMENT ''",
        CreateDatabase(DatabaseName(None, "db"), DatabaseSpec("db", "", "file:///w", (("team.name", "etl"), ("retries", "3")))),
    ),
    ("DROP DATABASE db", DropDatabase(DatabaseName(None, "db"))),
    ("DROP SCHEMA IF EXISTS hive.db RESTRICT", DropDatabase(DatabaseName("hive", "db"), True, False)),
    ("drop database hive.db cascade", DropDatabase(DatabaseName("hive", "db"), False, True)),
    ("ALTER DATABASE db SET DBPROPERTIES ('k' = 'v')", AlterDatabase(DatabaseName(None, "db"), (("k", "v"),))),
    ("ALTER SCHEMA hive.db SET PROPERTIES (k = true)", AlterDatabase(DatabaseName("hive", "db"), (("k", "true"),))),
]


@pytest.mark.parametrize(("text", "expected"), DATABASES)
def test_database_statements(text: str, expected: Statement) -> None:
    assert parse_statement(text) == expected


# --- CREATE TABLE ----------------------------------------------------------------------------------

HIVE_TABLE = """
CREATE EXTERNAL TABLE IF NOT EXISTS hive.sales.orders (
  id INT NOT NULL COMMENT 'the key',
  amount DECIMAL(10, 2),
  tags ARRAY<STRING>,
  point STRUCT<x: DOUBLE, label: STRING>
)
COMMENT 'facts'
PARTITIONED BY (dt STRING COMMENT 'day', hr INT)
ROW FORMAT DELIMITED FIELDS TERMINATED BY '\\001' ESCAPED BY '\\\\' COLLECTION ITEMS TERMINATED BY ','
  MAP KEYS TERMINATED BY ':' LINES TERMINATED BY '\\n' NULL DEFINED AS 'NIL'
STORED AS textfile
LOCATION 's3://bucket/orders'
TBLPROPERTIES ('quality' = 'gold')
"""

HIVE_SPEC = TableSpec(
    database="sales",
    name="orders",
    columns=(
        ColumnSpec("id", "int", "the key", nullable=False),
        ColumnSpec("amount", "decimal(10,2)"),
        ColumnSpec("tags", "array<string>"),
        ColumnSpec("point", "struct<x:double,label:string>"),
    ),
    partition_columns=(ColumnSpec("dt", "string", "day"), ColumnSpec("hr", "int")),
    comment="facts",
    stored_as="TEXTFILE",
    row_format=RowFormatSpec(
        fields_terminated_by="\x01", escaped_by="\\", collection_items_terminated_by=",", map_keys_terminated_by=":",
        lines_terminated_by="\n", null_defined_as="NIL",
    ),
    location="s3://bucket/orders",
    external=True,
    properties=(("quality", "gold"),),
    if_not_exists=True,
)


def test_a_hive_table_with_every_clause() -> None:
    statement = parse_statement(HIVE_TABLE)
    assert statement == CreateTable(ORDERS, HIVE_SPEC)
    assert statement.text == HIVE_TABLE.strip()


def test_clauses_after_the_columns_come_in_any_order() -> None:
    reordered = """
    CREATE EXTERNAL TABLE IF NOT EXISTS hive.sales.orders (
      id INT NOT NULL COMMENT 'the key', amount DECIMAL(10, 2), tags ARRAY<STRING>, point STRUCT<x: DOUBLE, label: STRING>)
    TBLPROPERTIES ('quality' = 'gold') LOCATION 's3://bucket/orders' STORED AS textfile
    ROW FORMAT DELIMITED NULL DEFINED AS 'NIL' LINES TERMINATED BY '\\n' MAP KEYS TERMINATED BY ':'
      COLLECTION ITEMS TERMINATED BY ',' FIELDS TERMINATED BY '\\001' ESCAPED BY '\\\\'
    PARTITIONED BY (dt STRING COMMENT 'day', hr INT) COMMENT 'facts'
    """
    assert parse_statement(reordered) == CreateTable(ORDERS, HIVE_SPEC)


def test_the_smallest_create_table() -> None:
    assert parse_statement("create table t (a int)") == CreateTable(T, TableSpec("", "t", (ColumnSpec("a", "int"),)))


@pytest.mark.parametrize(
    ("written", "normalised"),
    [
        ("array<struct<a:int,b:map<string,decimal(10,2)>>>", "array<struct<a:int,b:map<string,decimal(10,2)>>>"),
        ("ARRAY < STRUCT < a : INT, b : MAP < STRING, DECIMAL(10, 2) > > >", "array<struct<a:int,b:map<string,decimal(10,2)>>>"),
        ("STRUCT<x: DOUBLE, label: STRING>", "struct<x:double,label:string>"),
        ("struct<`a b`:int,`c`:string>", "struct<`a b`:int,c:string>"),
        ("struct<a:int COMMENT 'the a'>", "struct<a:int COMMENT 'the a'>"),
        ("varchar(10)", "varchar(10)"),
        ("CHAR(3)", "char(3)"),
        ("decimal(38, 0)", "decimal(38,0)"),
        ("DECIMAL", "decimal(10,0)"),
        ("map<string,array<int>>", "map<string,array<int>>"),
        ("BIGINT", "bigint"),
        ("double precision", "double"),
        # Spark's own spellings, as its grammar (DataTypeAstBuilder) reads them
        ("REAL", "float"), ("BYTE", "tinyint"), ("SHORT", "smallint"), ("LONG", "bigint"), ("INTEGER", "int"),
        ("NUMERIC", "decimal(10,0)"), ("NUMERIC(10)", "decimal(10,0)"), ("NUMERIC(10,1)", "decimal(10,1)"), ("DEC(5, 2)", "decimal(5,2)"),
        ("TIMESTAMP_LTZ", "timestamp"), ("TIMESTAMP_LTZ(6)", "timestamp"), ("TIMESTAMP(6) WITH LOCAL TIME ZONE", "timestamp"),
        ("CHARACTER(3)", "char(3)"), ("STRING COLLATE UTF8_BINARY", "string"), ("STRING COLLATE system.builtin.utf8_binary", "string"),
        ("VARCHAR(4) COLLATE UTF8_BINARY", "varchar(4)"), ("ARRAY<STRING COLLATE UTF8_BINARY>", "array<string>"),
        ("STRUCT<a INT, b SHORT COMMENT 'x'>", "struct<a:int,b:smallint COMMENT 'x'>"), ("STRUCT<>", "struct<>"),
        ("STRUCT<long: LONG, comment: REAL>", "struct<long:bigint,comment:float>"),
    ],
)
def test_column_types_are_kept_in_their_canonical_hive_spelling(written: str, normalised: str) -> None:
    spec = table(parse_statement(f"CREATE TABLE t (c {written} COMMENT 'x', d int)"))
    assert spec.columns == (ColumnSpec("c", normalised, "x"), ColumnSpec("d", "int"))
    assert to_hive_string(parse_hive_type(normalised)) == normalised


def test_not_null_and_comment_in_either_order() -> None:
    spec = table(parse_statement("CREATE TABLE t (a INT COMMENT 'k' NOT NULL, b STRING NOT NULL COMMENT 'j')"))
    assert spec.columns == (ColumnSpec("a", "int", "k", False), ColumnSpec("b", "string", "j", False))


def test_column_names_may_be_words_the_grammar_uses() -> None:
    spec = table(parse_statement("CREATE TABLE t (comment STRING, `location` INT, `my col` DATE) COMMENT 'c'"))
    assert [c.name for c in spec.columns] == ["comment", "location", "my col"]
    assert spec.comment == "c"


def test_iceberg_table_with_partition_transforms() -> None:
    text = ("CREATE TABLE db.events (id BIGINT, ts TIMESTAMP, name STRING, d DATE) USING iceberg PARTITIONED BY "
            "(DAYS(ts), bucket(16, id), truncate(name, 4), years(d), months(d), hours(ts), identity(name), name)")
    spec = table(parse_statement(text))
    assert spec.provider == "iceberg" and spec.partition_columns == ()
    assert spec.partition_transforms == (
        "days(ts)", "bucket(16, id)", "truncate(4, name)", "years(d)", "months(d)", "hours(ts)", "identity(name)", "name",
    )
    assert (spec.database, spec.name) == ("db", "events")


@pytest.mark.parametrize("provider", ["parquet", "orc", "csv", "json", "PARQUET"])
def test_spark_data_source_tables(provider: str) -> None:
    text = f"CREATE TABLE t (id INT, dt STRING) USING {provider} PARTITIONED BY (dt) OPTIONS (header true, 'sep' = ',')"
    spec = table(parse_statement(text))
    assert (spec.provider, spec.partition_transforms, spec.stored_as) == (provider, ("dt",), None)
    assert spec.options == (("header", "true"), ("sep", ","))


def test_stored_as_is_kept_upper_case_and_row_format_serde() -> None:
    text = ("CREATE TABLE t (a int) ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.OpenCSVSerde' "
            "WITH SERDEPROPERTIES ('separatorChar' = ',') stored as sequencefile")
    spec = table(parse_statement(text))
    assert spec.stored_as == "SEQUENCEFILE"
    assert spec.row_format == RowFormatSpec(serde="org.apache.hadoop.hive.serde2.OpenCSVSerde",
                                            serde_properties=(("separatorChar", ","),))
    assert table(parse_statement("CREATE TABLE t (a int) ROW FORMAT DELIMITED")).row_format == RowFormatSpec()
    delimited = table(parse_statement("CREATE TABLE t (a int) ROW FORMAT DELIMITED FIELDS TERMINATED BY '\\u0009' "
                                      "COLLECTION ITEMS TERMINATED BY '\\002' MAP KEYS TERMINATED BY '\\x'"))
    assert delimited.row_format == RowFormatSpec(fields_terminated_by="\t", collection_items_terminated_by="\x02",
                                                 map_keys_terminated_by="\\x")


def test_create_table_like_a_table_and_like_a_path() -> None:
    assert parse_statement("CREATE TABLE t LIKE hive.sales.orders") == CreateTableLike(T, ORDERS)
    assert parse_statement("CREATE EXTERNAL TABLE IF NOT EXISTS t LIKE sales.orders LOCATION 's3://b/t'") == CreateTableLike(
        T, TableName(None, "sales", "orders"), True, "s3://b/t", True)
    assert parse_statement("CREATE TABLE t LIKE PATH 'file:///lake/t'") == CreateTableLikePath(T, "file:///lake/t")
    assert parse_statement("CREATE TABLE IF NOT EXISTS t LIKE path 'file:///x'") == CreateTableLikePath(T, "file:///x", True)
    # A table called path is still a table, where what follows can only follow a table name.
    assert parse_statement("CREATE TABLE t LIKE path") == CreateTableLike(T, TableName(None, None, "path"))
    assert parse_statement("CREATE TABLE t LIKE path.x LOCATION 'y'") == CreateTableLike(T, TableName(None, "path", "x"), location="y")
    # Spark's and Hive's clauses after LIKE, in any order.
    like = parse_statement("CREATE TABLE t LIKE sales.orders TBLPROPERTIES ('k' = 'v') STORED AS ORC LOCATION 'z'")
    assert isinstance(like, CreateTableLike) and like.location == "z" and like.storage is not None
    assert (like.storage.stored_as, like.storage.properties, like.storage.location) == ("ORC", (("k", "v"),), "z")
    using = parse_statement("CREATE TABLE t LIKE o USING parquet ROW FORMAT DELIMITED FIELDS TERMINATED BY ','")
    assert isinstance(using, CreateTableLike) and using.storage is not None and using.storage.provider == "parquet"
    assert using.storage.row_format is not None and using.storage.row_format.fields_terminated_by == ","


@pytest.mark.parametrize("text", ["CREATE NAMESPACE IF NOT EXISTS n COMMENT 'c' LOCATION 'l' WITH PROPERTIES ('a' = '1')",
                                  "CREATE NAMESPACE hive.n WITH DBPROPERTIES (a = 1)", "DROP NAMESPACE IF EXISTS n CASCADE",
                                  "DROP NAMESPACE n RESTRICT", "ALTER NAMESPACE n SET PROPERTIES ('a' = '2')",
                                  "ALTER NAMESPACE n SET DBPROPERTIES ('a' = '2')", "ALTER NAMESPACE n SET LOCATION 'x'",
                                  "SHOW NAMESPACES", "SHOW NAMESPACES IN hive LIKE 'a*'", "SHOW SCHEMAS 'a*|b'",
                                  "SHOW DATABASES FROM hive"])
def test_spark_namespace_statements_are_database_statements(text: str) -> None:
    assert parse_statement(text) == parse_statement(text.replace("NAMESPACES", "DATABASES").replace("NAMESPACE", "DATABASE"))


def test_bucketed_and_skewed_tables_are_refused_saying_so() -> None:
    for text in ("CREATE TABLE t (a int) USING parquet CLUSTERED BY (a) INTO 4 BUCKETS",
                 "CREATE TABLE t (a int) SKEWED BY (a) ON (1) STORED AS ORC", "ALTER TABLE t SET FILEFORMAT ORC",
                 "ALTER TABLE t PARTITION (p = 1) SET SERDEPROPERTIES ('k' = 'v')",
                 "ALTER TABLE t PARTITION (p = 1) RENAME TO PARTITION (p = 2)"):
        with pytest.raises(SqlSyntaxError, match="is not supported by this catalog"):
            parse_statement(text)


def test_drop_table() -> None:
    assert parse_statement("DROP TABLE t") == DropTable(T)
    assert parse_statement("drop table if exists hive.sales.orders purge") == DropTable(ORDERS, True, True)


def test_show_create_table_output_parses_back() -> None:
    # The shape hms_catalog.ddl.show writes: names quoted only when needed, Hive type strings, a comment line.
    text = (
        "CREATE EXTERNAL TABLE hive.sales.copy (\n"
        "  id int COMMENT 'k',\n  amount decimal(10,2),\n  m map<string,array<int>>,\n  `odd name` struct<`a b`:int>\n)\n"
        "COMMENT 'the original'\nPARTITIONED BY (\n  dt string)\n"
        "-- stored with input format x, output format y, serde z\n"
        "ROW FORMAT DELIMITED FIELDS TERMINATED BY '|' NULL DEFINED AS 'it\\'s'\nSTORED AS TEXTFILE\n"
        "LOCATION 'file:///tmp/copy'\nTBLPROPERTIES ('a' = '1', 'b' = 'x\\\\y')"
    )
    spec = table(parse_statement(text))
    assert [c.type for c in spec.columns] == ["int", "decimal(10,2)", "map<string,array<int>>", "struct<`a b`:int>"]
    assert spec.row_format == RowFormatSpec(fields_terminated_by="|", null_defined_as="it's")
    assert spec.properties == (("a", "1"), ("b", "x\\y"))


# --- ALTER TABLE -----------------------------------------------------------------------------------

ALTERS: list[tuple[str, object]] = [
    ("ALTER TABLE t ADD COLUMNS (note STRING COMMENT 'new', n DECIMAL(5, 1))",
     AddColumns((ColumnSpec("note", "string", "new"), ColumnSpec("n", "decimal(5,1)")))),
    ("ALTER TABLE t ADD COLUMNS (x INT) CASCADE", AddColumns((ColumnSpec("x", "int"),), True)),
    ("ALTER TABLE t ADD COLUMNS (x INT) RESTRICT", AddColumns((ColumnSpec("x", "int"),), False)),
    ("ALTER TABLE t ADD COLUMN x ARRAY<INT>, y STRING", AddColumns((ColumnSpec("x", "array<int>"), ColumnSpec("y", "string")))),
    ("ALTER TABLE t RENAME COLUMN a TO b", RenameColumn("a", "b")),
    ("ALTER TABLE t CHANGE COLUMN small small BIGINT", ChangeColumn("small", "small", "bigint")),
    ("ALTER TABLE t CHANGE a b DECIMAL(12,2) COMMENT 'c' RESTRICT", ChangeColumn("a", "b", "decimal(12,2)", "c", False)),
    ("ALTER TABLE t CHANGE COLUMN a `type` INT CASCADE", ChangeColumn("a", "type", "int", cascade=True)),
    ("ALTER TABLE t CHANGE a b INT COMMENT 'c' FIRST", ChangeColumn("a", "b", "int", "c", first=True)),
    ("ALTER TABLE t CHANGE COLUMN a a BIGINT AFTER c RESTRICT", ChangeColumn("a", "a", "bigint", after="c")),
    ("ALTER TABLE t REPLACE COLUMNS (a INT) CASCADE", ReplaceColumns((ColumnSpec("a", "int"),), cascade=True)),
    ("ALTER TABLE t SET SERDEPROPERTIES ('field.delim' = '|')", SetSerdeProperties((("field.delim", "|"),))),
    ("ALTER TABLE t SET SERDE 'x.Serde' WITH SERDEPROPERTIES (k = 'v')", SetSerdeProperties((("k", "v"),), "x.Serde")),
    ("ALTER TABLE t SET SERDE 'x.Serde'", SetSerdeProperties((), "x.Serde")),
    ("ALTER TABLE t CHANGE COLUMN a TYPE BIGINT", ChangeColumn("a", "a", "bigint")),
    ("ALTER TABLE t CHANGE a COMMENT 'why'", ChangeColumn("a", "a", None, "why")),
    ("ALTER TABLE t ALTER COLUMN a TYPE STRUCT<x: DOUBLE>", ChangeColumn("a", "a", "struct<x:double>")),
    ("ALTER TABLE t ALTER a COMMENT 'why'", ChangeColumn("a", "a", None, "why")),
    ("ALTER TABLE t REPLACE COLUMNS (a INT, b STRING)", ReplaceColumns((ColumnSpec("a", "int"), ColumnSpec("b", "string")))),
    ("ALTER TABLE t SET TBLPROPERTIES ('quality' = 'gold', owner.team = 'bi')",
     SetTableProperties((("quality", "gold"), ("owner.team", "bi")))),
    ("ALTER TABLE t UNSET TBLPROPERTIES ('quality')", UnsetTableProperties(("quality",))),
    ("ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('a', b.c)", UnsetTableProperties(("a", "b.c"), True)),
    ("ALTER TABLE t SET LOCATION 's3://b/t'", SetLocation("s3://b/t")),
    ("ALTER TABLE t PARTITION (dt='2024-01-01', hr=5) SET LOCATION 's3://b/p'",
     SetLocation("s3://b/p", PartitionValues((("dt", "2024-01-01"), ("hr", "5"))))),
    ("ALTER TABLE t ADD PARTITION (d='50%/x', h=2) PARTITION (d='a', h=02) LOCATION 'file:///p' PARTITION (d=NULL, h=-1)",
     AddPartitions((PartitionValues((("d", "50%/x"), ("h", "2"))), PartitionValues((("d", "a"), ("h", "2")), "file:///p"),
                    PartitionValues((("d", None), ("h", "-1")))))),
    ("ALTER TABLE t ADD IF NOT EXISTS PARTITION (p=1), PARTITION (p=2)",
     AddPartitions((PartitionValues((("p", "1"),)), PartitionValues((("p", "2"),))), True)),
    ("ALTER TABLE t ADD PARTITION (dt = DATE '2024-01-01', ok = true)",
     AddPartitions((PartitionValues((("dt", "2024-01-01"), ("ok", "true"))),))),
    ("ALTER TABLE t DROP PARTITION (d='a')", DropPartitions((PartitionValues((("d", "a"),)),))),
    ("ALTER TABLE t DROP IF EXISTS PARTITION (d='a', h=1), PARTITION (d='b') PURGE",
     DropPartitions((PartitionValues((("d", "a"), ("h", "1"))), PartitionValues((("d", "b"),))), True, True)),
    ("ALTER TABLE t RECOVER PARTITIONS", RecoverPartitions()),
    ("MSCK REPAIR TABLE t", RecoverPartitions(add=True, drop=False)),
    ("msck repair table t add partitions", RecoverPartitions(add=True, drop=False)),
    ("MSCK REPAIR TABLE t DROP PARTITIONS", RecoverPartitions(add=False, drop=True)),
    ("MSCK REPAIR TABLE t SYNC PARTITIONS", RecoverPartitions(add=True, drop=True)),
]


@pytest.mark.parametrize(("text", "expected"), ALTERS)
def test_alter_table_actions(text: str, expected: object) -> None:
    assert change(text) == expected


def test_rename_to_takes_one_two_or_three_parts() -> None:
    assert parse_statement("ALTER TABLE t RENAME TO t2") == AlterTableRename(T, TableName(None, None, "t2"))
    assert parse_statement("ALTER TABLE hive.sales.orders RENAME TO sales.o2") == AlterTableRename(ORDERS, TableName(None, "sales", "o2"))
    assert parse_statement("ALTER TABLE t RENAME TO hive.sales.o2") == AlterTableRename(T, TableName("hive", "sales", "o2"))


def test_the_filesystem_actions_still_parse() -> None:
    assert parse_statement("ALTER TABLE t REFRESH METADATA") == AlterTableFormat(T, "REFRESH METADATA")
    assert parse_statement("ALTER TABLE t PROMOTE") == AlterTableFormat(T, "PROMOTE")
    assert parse_statement("ALTER TABLE t SET FORMAT ('format'='parquet')") == AlterTableFormat(T, "SET FORMAT", (("format", "parquet"),))


# --- SHOW and SET ----------------------------------------------------------------------------------

SHOWS: list[tuple[str, Statement]] = [
    ("SHOW PARTITIONS t", ShowPartitions(T)),
    ("SHOW PARTITIONS FROM hive.sales.orders", ShowPartitions(ORDERS)),
    ("show partitions in t partition (d='a', h=NULL)", ShowPartitions(T, (("d", "a"), ("h", None)))),
    ("SHOW PARTITIONS t WHERE h > 2", ShowPartitions(T, (), Comparison(">", ColumnRef("h"), Literal(2)))),
    ("SHOW PARTITIONS t PARTITION (d='a') WHERE h > 2", ShowPartitions(T, (("d", "a"),), Comparison(">", ColumnRef("h"), Literal(2)))),
    ("SHOW CREATE TABLE hive.sales.orders", ShowCreateTable(ORDERS)),
    ("SHOW TBLPROPERTIES t", ShowTblProperties(T)),
    # Spark's SHOW COLUMNS and SHOW VIEWS, with FROM or IN
    ("SHOW COLUMNS IN t", ShowColumns(T)),
    ("SHOW COLUMNS FROM orders IN hive.sales", ShowColumns(ORDERS)),
    ("SHOW COLUMNS IN sales.orders FROM hive.sales", ShowColumns(ORDERS)),
    ("SHOW VIEWS", ShowViews()),
    ("SHOW VIEWS IN hive.sales LIKE 'v*|w*'", ShowViews(DatabaseName("hive", "sales"), "v*|w*")),
    ("SHOW VIEWS FROM sales 'v*'", ShowViews(DatabaseName(None, "sales"), "v*")),
    ("SHOW TBLPROPERTIES t ('quality')", ShowTblProperties(T, "quality")),
    ("SHOW TBLPROPERTIES t (spark.sql.sources.provider)", ShowTblProperties(T, "spark.sql.sources.provider")),
    ("SET sync_ddl = true", SetOption("sync_ddl", "true")),
    ("set SYNC_DDL=FALSE", SetOption("SYNC_DDL", "FALSE")),
    ("SET sync_ddl", SetOption("sync_ddl")),
    ("SET spark.sql.shuffle.partitions = 200", SetOption("spark.sql.shuffle.partitions", "200")),
    ("SET x.y = -1.5", SetOption("x.y", "-1.5")),
    ("SET x = 'a b'", SetOption("x", "a b")),
    ("SET spark.sql.catalog.x = org.apache.iceberg.spark.SparkCatalog",
     SetOption("spark.sql.catalog.x", "org.apache.iceberg.spark.SparkCatalog")),
]


@pytest.mark.parametrize(("text", "expected"), SHOWS)
def test_show_and_set(text: str, expected: Statement) -> None:
    assert parse_statement(text) == expected


def test_set_is_told_apart_from_the_set_actions_and_from_a_column_named_set() -> None:
    assert parse_statement("ALTER TABLE t SET LOCATION 'x'") == AlterTable(T, SetLocation("x"))
    assert parse_statement("ALTER CATALOG c SET PROPERTIES ('k'='v')") != SetOption("PROPERTIES")
    assert parse_expression("set = 1") == Comparison("=", ColumnRef("set"), Literal(1))
    assert parse("SET sync_ddl = true; SHOW CATALOGS; SET sync_ddl")[2] == SetOption("sync_ddl")


def test_nodes_are_hashable_and_picklable() -> None:
    for text in (HIVE_TABLE, ALTERS[-10][0], "SHOW PARTITIONS t WHERE h > 2"):
        node = parse_statement(text)
        assert {node: 1}[node] == 1
        assert pickle.loads(pickle.dumps(node)) == node


# --- errors ----------------------------------------------------------------------------------------

ACTIONS = ("ADD COLUMNS, ADD PARTITION, DROP PARTITION, RENAME COLUMN, RENAME TO, CHANGE COLUMN, ALTER COLUMN, REPLACE COLUMNS, "
           "SET TBLPROPERTIES, UNSET TBLPROPERTIES, SET SERDEPROPERTIES, SET SERDE, SET LOCATION, PARTITION (..) SET LOCATION, "
           "RECOVER PARTITIONS, "
           "REFRESH METADATA, PROMOTE or SET FORMAT")

BAD: list[tuple[str, int, int, str, str]] = [
    # types
    ("CREATE TABLE t (a inte)", 1, 19, "inte", "invalid type for column 'a': unknown type 'inte'"),
    ("CREATE TABLE t (a INT, b LONGER)", 1, 26, "LONGER", "invalid type for column 'b': unknown type 'LONGER'"),
    ("CREATE TABLE t (a array<int, b string)", 1, 28, ",", "invalid type for column 'a': expected '>' to close ARRAY<..> but found ,"),
    ("CREATE TABLE t (a array<int)", 1, 28, ")", "invalid type for column 'a': expected '>' to close ARRAY<..> but found )"),
    ("CREATE TABLE t (a char(300))", 1, 24, "300",
     "invalid type for column 'a': CHAR length must be between 1 and 255 (Hive's limit) but was 300"),
    ("CREATE TABLE t (a)", 1, 18, ")", "expected type of column 'a'"),
    ("ALTER TABLE t CHANGE a b struct<x int", 1, 38, "<end of input>",
     "invalid type for column 'b': expected ',' or '>' to close STRUCT<..> but found <end of input>"),
    # types Spark's grammar reads and a Hive table cannot hold, or that Spark refuses: refused saying why
    ("CREATE TABLE t (a CHAR)", 1, 19, "CHAR", "invalid type for column 'a': CHAR needs a length, e.g. CHAR(10)"),
    ("CREATE TABLE t (a TIMESTAMP(3))", 1, 29, "3",
     "invalid type for column 'a': TIMESTAMP(3): Spark's and Hive's timestamps have precision 6 (microseconds) only"),
    ("CREATE TABLE t (a STRUCT<x INT NOT NULL>)", 1, 32, "NOT", "invalid type for column 'a': NOT NULL on struct field 'x' is not "
     "supported: a Hive type does not say whether a field may be null, so it would not be kept"),
    ("CREATE TABLE t (a STRUCT<x: INT, X: INT>)", 1, 34, "X", "invalid type for column 'a': duplicate field name 'X' in STRUCT<..>"),
    ("CREATE TABLE t (a STRING COLLATE UTF8_LCASE)", 1, 34, "UTF8_LCASE", "invalid type for column 'a': STRING COLLATE UTF8_LCASE: "
     "only the default collation UTF8_BINARY is supported; another lives only in Spark's own schema record, and Hive, Trino and "
     "this catalog's readers would compare and sort the column's values as plain strings"),
    ("CREATE TABLE t (a STRING COLLATE BUILTIN.UTF8_BINARY)", 1, 34, "BUILTIN", "invalid type for column 'a': collation "
     "BUILTIN.UTF8_BINARY: Spark names the default collation UTF8_BINARY or SYSTEM.BUILTIN.UTF8_BINARY"),
    *((f"CREATE TABLE t (a {written})", 1, 19, written.split("<")[0].split(" ")[0], f"invalid type for column 'a': {reason}")
      for written, reason in [
          ("TIMESTAMP_NTZ", "TIMESTAMP_NTZ has no Hive type: a Hive table cannot hold it (Spark refuses it in Hive tables, and keeps "
           "a data source table with it in a layout of its own that Hive and this catalog's readers cannot read); use TIMESTAMP"),
          ("INTERVAL YEAR TO MONTH", "INTERVAL has no Hive type: a Hive table cannot hold it (Spark refuses it in Hive tables, and "
           "keeps a data source table with it in a layout of its own that Hive and this catalog's readers cannot read)"),
          ("VOID", "VOID (a column that holds only NULL) is refused by Spark in Hive tables: no Hive serde stores it"),
          ("uniontype<int,string>", "UNIONTYPE is Hive's, and Spark cannot read a union column"),
      ]),
    ("ALTER TABLE t ALTER COLUMN a TYPE", 1, 34, "<end of input>", "expected type of column 'a'"),
    # parentheses
    ("CREATE TABLE t (a int", 1, 22, "<end of input>", "expected NOT NULL, COMMENT, ',' or ')'"),
    ("CREATE TABLE t (a int STORED AS ORC", 1, 23, "STORED", "expected NOT NULL, COMMENT, ',' or ')'"),
    ("CREATE TABLE t a int", 1, 16, "a", "expected LIKE or '('"),
    ("CREATE TABLE t (a int) PARTITIONED BY (dt string", 1, 49, "<end of input>", "expected NOT NULL, COMMENT, ',' or ')'"),
    ("ALTER TABLE t ADD PARTITION (p=1", 1, 33, "<end of input>", "expected ',' or ')'"),
    # duplicates and empties
    ("CREATE TABLE t (a int) COMMENT 'x' STORED AS ORC COMMENT 'y'", 1, 50, "COMMENT", "duplicate COMMENT clause"),
    ("CREATE TABLE t (a int) LOCATION 'x' LOCATION 'y'", 1, 37, "LOCATION", "duplicate LOCATION clause"),
    ("CREATE TABLE t (a int) PARTITIONED BY (b) PARTITIONED BY (c)", 1, 43, "PARTITIONED", "duplicate PARTITIONED BY clause"),
    ("CREATE DATABASE d COMMENT 'x' COMMENT 'y'", 1, 31, "COMMENT", "duplicate COMMENT clause"),
    ("CREATE TABLE t (a INT NOT NULL NOT NULL)", 1, 32, "NOT", "duplicate NOT NULL clause"),
    ("CREATE TABLE t (a int, A string)", 1, 24, "A", "duplicate column name 'A'"),
    ("ALTER TABLE t REPLACE COLUMNS (a int, a int)", 1, 39, "a", "duplicate column name 'a'"),
    ("CREATE TABLE t ()", 1, 17, ")", "empty column list; expected a column name"),
    ("ALTER TABLE t ADD COLUMNS ()", 1, 28, ")", "empty column list; expected a column name"),
    ("CREATE TABLE t (a int,)", 1, 23, ")", "expected column name"),
    ("CREATE TABLE t (a int) TBLPROPERTIES ('k'='1', k = '2')", 1, 48, "k", "duplicate property key 'k'"),
    ("CREATE DATABASE d WITH DBPROPERTIES ()", 1, 38, ")", "expected property key (a quoted string or a name)"),
    ("ALTER TABLE t UNSET TBLPROPERTIES ('a', 'a')", 1, 41, "'a'", "duplicate property key 'a'"),
    ("ALTER TABLE t ADD PARTITION (p=1, P=2)", 1, 35, "P", "duplicate partition column 'P'"),
    ("ALTER TABLE t ADD PARTITION (p=1) PARTITION (p=1)", 1, 35, "PARTITION", "duplicate partition in ADD PARTITION"),
    # partitioning
    ("CREATE TABLE t (a int) PARTITIONED BY (a string)", 1, 40, "a",
     "partition column 'a' is also a data column; a Hive table lists it once, in PARTITIONED BY"),
    ("CREATE TABLE t (a int) PARTITIONED BY (a, dt string)", 1, 43, "dt",
     "PARTITIONED BY lists either typed columns (dt STRING) or column names and transforms (dt, days(ts)), not both"),
    ("CREATE TABLE t (a int) PARTITIONED BY (weeks(a))", 1, 40, "weeks",
     "unknown partition transform 'weeks'; expected identity, years, months, days, hours, bucket or truncate"),
    ("CREATE TABLE t (a int) PARTITIONED BY (bucket(a))", 1, 40, "bucket", "bucket() takes a width and a column, e.g. bucket(16, id)"),
    ("CREATE TABLE t (a int) PARTITIONED BY (days(a, b))", 1, 40, "days", "days() takes one column, e.g. days(ts)"),
    ("CREATE TABLE t (a int) PARTITIONED BY ()", 1, 40, ")", "empty PARTITIONED BY list; expected a column name"),
    ("CREATE TABLE t (a int) PARTITIONED BY (a, a)", 1, 43, "a", "duplicate partitioning 'a'"),
    # clauses
    ("CREATE TABLE t (a int) STORED AS PARQUET garbage", 1, 42, "garbage",
     "expected COMMENT, PARTITIONED BY, ROW FORMAT, USING, OPTIONS, LOCATION, TBLPROPERTIES or end of statement"),
    ("CREATE TABLE t (a int) STORED parquet", 1, 31, "parquet", "expected AS"),
    ("CREATE TABLE t (a int) STORED AS INPUTFORMAT 'a' OUTPUTFORMAT 'b'", 1, 34, "INPUTFORMAT",
     "STORED AS INPUTFORMAT .. OUTPUTFORMAT .. is not supported; name a storage format (STORED AS PARQUET, ORC, TEXTFILE, "
     "AVRO, ...) or use ROW FORMAT SERDE"),
    ("CREATE TABLE t (a int) ROW FORMAT DELIMITED FIELDS TERMINATED ','", 1, 63, "','", "expected BY"),
    ("CREATE TABLE t (a int) ROW FORMAT JSON", 1, 35, "JSON", "expected SERDE or DELIMITED"),
    ("CREATE TABLE t (a int) OPTIONS (k = v)", 1, 37, "v", "expected property value (a quoted string, a number, true or false)"),
    ("CREATE TABLE t LIKE PATH x", 1, 26, "x", "expected path (a quoted URI, such as 'file:///data/lake/raw/events')"),
    ("CREATE DATABASE d WITH ('k'='v')", 1, 24, "(", "expected DBPROPERTIES or PROPERTIES"),
    ("DROP DATABASE d PURGE", 1, 17, "PURGE", "expected CASCADE, RESTRICT or end of statement"),
    ("ALTER DATABASE d SET OWNER 'x'", 1, 22, "OWNER", "expected LOCATION, DBPROPERTIES or PROPERTIES"),
    ("DROP TABLE t CASCADE", 1, 14, "CASCADE", "expected PURGE or end of statement"),
    # ALTER TABLE actions
    ("ALTER TABLE t FROB x", 1, 15, "FROB", f"expected an ALTER TABLE action: {ACTIONS}"),
    ("ALTER TABLE t\n  DROP COLUMN x", 2, 8, "COLUMN", "expected IF or PARTITION"),
    ("ALTER TABLE t ADD x int", 1, 19, "x", "expected COLUMNS, COLUMN, IF or PARTITION"),
    ("ALTER TABLE t SET SERDE", 1, 24, "<end of input>", "expected serde class (a quoted string)"),
    ("ALTER TABLE t SET OWNER x", 1, 19, "OWNER", "expected TBLPROPERTIES, LOCATION, SERDEPROPERTIES, SERDE or FORMAT"),
    ("ALTER TABLE t ALTER COLUMN a SET NOT NULL", 1, 30, "SET", "expected TYPE or COMMENT"),
    ("ALTER TABLE t RENAME t2", 1, 22, "t2", "expected COLUMN or TO"),
    ("ALTER TABLE t RENAME TO a.b.c.d", 1, 25, "a.b.c.d", "new table name has too many parts; expected [[catalog.]database.]table"),
    ("ALTER TABLE t DROP PARTITION (a < 1)", 1, 33, "<", "expected '='"),
    ("ALTER TABLE t DROP PARTITION (a = 1) PARTITION (a = 2)", 1, 38, "PARTITION", "expected ',', PURGE or end of statement"),
    ("ALTER TABLE t ADD PARTITION (a = x)", 1, 34, "x", "expected partition value (a quoted string, a number or NULL)"),
    ("ALTER TABLE t PARTITION (a = 1) LOCATION 'x'", 1, 33, "LOCATION", "expected SET"),
    ("MSCK REPAIR TABLE t FIX PARTITIONS", 1, 21, "FIX", "expected ADD, DROP, SYNC or end of statement"),
    ("MSCK TABLE t", 1, 6, "TABLE", "expected REPAIR after MSCK"),
    # SHOW / SET
    ("SHOW PARTITIONS", 1, 16, "<end of input>", "expected FROM, IN or table name"),
    ("SHOW PARTITIONS t WHERE", 1, 24, "<end of input>", "expected an expression after WHERE"),
    ("SHOW COLUMNS t", 1, 14, "t", "expected FROM or IN"),
    ("SHOW COLUMNS IN sales.t IN other", 1, 28, "other",
     "SHOW COLUMNS names two databases: 'sales' with the table and 'other' after it"),
    ("SHOW TBLPROPERTIES t ()", 1, 23, ")", "expected property key (a quoted string or a name)"),
    ("SHOW CREATE VIEW v", 1, 13, "VIEW", "expected CATALOG or TABLE after SHOW CREATE"),
    ("SET", 1, 4, "<end of input>", "expected option name"),
    ("SET x =", 1, 8, "<end of input>", "expected option value (a word, a number, true, false or a quoted string)"),
    ("SET x = 1 2", 1, 11, "2", "expected end of statement"),
    # positions on later lines
    ("CREATE TABLE t (\n  id INT,\n  amount DECIMAL(10,2\n) STORED AS ORC", 4, 3, "STORED", "expected NOT NULL, COMMENT, ',' or ')'"),
    ("CREATE TABLE t (\n  id INT,\n  tags ARRAY<STRNG>\n)", 3, 14, "STRNG", "invalid type for column 'tags': unknown type 'STRNG'"),
    ("CREATE TABLE t (id INT)\nSTORED AS ORC\nSTORED AS PARQUET", 3, 1, "STORED", "duplicate STORED AS clause"),
]


@pytest.mark.parametrize(("text", "line", "column", "token", "reason"), BAD)
def test_syntax_errors(text: str, line: int, column: int, token: str, reason: str) -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement(text)
    err = info.value
    assert (err.reason, err.line, err.column, err.token) == (reason, line, column, token)
    assert err.excerpt.split("\n")[1] == " " * (column - 1) + "^"


def test_a_bad_type_in_a_script_points_into_the_whole_input() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse("SHOW CATALOGS;\nCREATE TABLE t (\n  a INT,\n  b MAP<STRING INT>\n);")
    err = info.value
    assert (err.line, err.column, err.token) == (4, 16, "INT")
    assert str(err).startswith("line 4:16: invalid type for column 'b': ")
    assert err.excerpt == "  b MAP<STRING INT>\n               ^"
