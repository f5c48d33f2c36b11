from __future__ import annotations

import pickle

import pytest

from hms_catalog.errors import SqlSyntaxError
from hms_catalog.sql import (
    AlterCatalogProperties,
    CreateCatalog,
    DatabaseName,
    DescribeTable,
    DropCatalog,
    RefreshCatalog,
    RefreshDatabase,
    RefreshTable,
    RenameCatalog,
    ShowCache,
    ShowCatalogs,
    ShowCreateCatalog,
    ShowDatabases,
    ShowSchemaCache,
    ShowTables,
    ShowTableStatus,
    Statement,
    StatementBuffer,
    StatementSource,
    SwitchCatalog,
    TableName,
    UseDatabase,
    parse,
    parse_statement,
    split_statements,
)

HMS = (("type", "hms"), ("hive.metastore.uris", "thrift://h:9083"))

GOOD: list[tuple[str, Statement]] = [
    # CREATE CATALOG
    (
        "CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='thrift://h:9083')",
        CreateCatalog("hive", HMS),
    ),
    (
        "create catalog if not exists hive comment 'prod' properties ('type' = 'hms', 'hive.metastore.uris' = 'thrift://h:9083')",
        CreateCatalog("hive", HMS, "prod", True),
    ),
    ("CrEaTe CaTaLoG `My Cat` PROPERTIES (\"k\"=\"v\")", CreateCatalog("My Cat", (("k", "v"),))),
    ("CREATE CATALOG c PROPERTIES ('b'='2', 'a'='1')", CreateCatalog("c", (("b", "2"), ("a", "1")))),
    ("CREATE CATALOG c PROPERTIES ('k'='it''s', 'n'='a\\nb')", CreateCatalog("c", (("k", "it's"), ("n", "a\nb")))),
    ("CREATE CATALOG c COMMENT '' PROPERTIES ('k'='')", CreateCatalog("c", (("k", ""),), "")),
    ("CREATE CATALOG `if` PROPERTIES ('k'='v')", CreateCatalog("if", (("k", "v"),))),
    ("CREATE CATALOG comment PROPERTIES ('k'='v')", CreateCatalog("comment", (("k", "v"),))),
    (
        "CREATE CATALOG\n  hive -- the main one\n  COMMENT /* why */ 'x'\n  PROPERTIES (\n    'type'='hms'\n  )",
        CreateCatalog("hive", (("type", "hms"),), "x"),
    ),
    # DROP / ALTER
    ("DROP CATALOG hive", DropCatalog("hive")),
    ("drop catalog IF exists hive", DropCatalog("hive", True)),
    ("DROP CATALOG `a.b`", DropCatalog("a.b")),
    ("ALTER CATALOG hive SET PROPERTIES ('k'='v')", AlterCatalogProperties("hive", (("k", "v"),))),
    ("alter catalog hive set properties ('a'='1','b'='2')", AlterCatalogProperties("hive", (("a", "1"), ("b", "2")))),
    ("ALTER CATALOG hive RENAME hive2", RenameCatalog("hive", "hive2")),
    ("ALTER CATALOG `old name` rename `new name`", RenameCatalog("old name", "new name")),
    # SHOW
    ("SHOW CATALOGS", ShowCatalogs()),
    ("show catalogs", ShowCatalogs()),
    ("SHOW CREATE CATALOG hive", ShowCreateCatalog("hive")),
    ("SHOW DATABASES", ShowDatabases()),
    ("SHOW DATABASES FROM hive", ShowDatabases("hive")),
    ("SHOW TABLES", ShowTables()),
    ("SHOW TABLES FROM db", ShowTables(DatabaseName(None, "db"))),
    ("SHOW TABLES FROM hive.db", ShowTables(DatabaseName("hive", "db"))),
    ("SHOW TABLES LIKE 'ord%'", ShowTables(None, "ord%")),
    ("SHOW TABLES FROM `h`.`d` LIKE \"o*\"", ShowTables(DatabaseName("h", "d"), "o*")),
    ("show tables from Hive . Db like '%'", ShowTables(DatabaseName("Hive", "Db"), "%")),
    ("SHOW TABLES FROM tables", ShowTables(DatabaseName(None, "tables"))),
    # Spark's other spellings: IN for FROM, and the pattern with or without LIKE
    ("SHOW TABLES IN db", ShowTables(DatabaseName(None, "db"))),
    ("SHOW TABLES IN hive.db LIKE 'o*|p*'", ShowTables(DatabaseName("hive", "db"), "o*|p*")),
    ("SHOW TABLES IN db 'o*'", ShowTables(DatabaseName(None, "db"), "o*")),
    ("SHOW TABLES 'o*'", ShowTables(None, "o*")),
    # SWITCH / USE
    ("SWITCH hive", SwitchCatalog("hive")),
    ("switch `Hive Prod`", SwitchCatalog("Hive Prod")),
    ("USE db", UseDatabase(DatabaseName(None, "db"))),
    ("use hive.db", UseDatabase(DatabaseName("hive", "db"))),
    ("USE `a``b`.`c.d`", UseDatabase(DatabaseName("a`b", "c.d"))),
    # DESC
    ("DESC t", DescribeTable(TableName(None, None, "t"))),
    ("DESCRIBE db.t", DescribeTable(TableName(None, "db", "t"))),
    ("describe hive.db.t", DescribeTable(TableName("hive", "db", "t"))),
    ("desc `h`.db.`my table`", DescribeTable(TableName("h", "db", "my table"))),
    ("DESC table", DescribeTable(TableName(None, None, "table"))),
    # Spark's DESC[RIBE] TABLE t (describe.sql); TABLE is the keyword only when a name follows it
    ("DESCRIBE TABLE db.t", DescribeTable(TableName(None, "db", "t"))),
    ("desc table `table`", DescribeTable(TableName(None, None, "table"))),
    ("DESC TABLE table", DescribeTable(TableName(None, None, "table"))),
    # REFRESH
    ("REFRESH CATALOG hive", RefreshCatalog("hive")),
    ("refresh database db", RefreshDatabase(DatabaseName(None, "db"))),
    ("REFRESH DATABASE hive.db", RefreshDatabase(DatabaseName("hive", "db"))),
    ("REFRESH TABLE t", RefreshTable(TableName(None, None, "t"))),
    ("REFRESH TABLE db.t", RefreshTable(TableName(None, "db", "t"))),
    ("SHOW CACHE", ShowCache(None)),
    ("show cache from hive", ShowCache("hive")),
    ("SHOW SCHEMA CACHE", ShowSchemaCache(None)),
    ("SHOW SCHEMA CACHE FROM `my cat`", ShowSchemaCache("my cat")),
    ("SHOW TABLE STATUS", ShowTableStatus(None, None)),
    ("SHOW TABLE STATUS FROM c.db LIKE 'o%'", ShowTableStatus(DatabaseName("c", "db"), "o%")),
    ("show table status like 'x'", ShowTableStatus(None, "x")),
    ("Refresh Table hive.db.t", RefreshTable(TableName("hive", "db", "t"))),
    # blanks, comments, a trailing semicolon
    ("  /* lead */ SHOW -- x\n CATALOGS  ", ShowCatalogs()),
    ("SHOW CATALOGS;", ShowCatalogs()),
    ("SHOW\n\tDATABASES\n\tFROM\n\thive", ShowDatabases("hive")),
]


@pytest.mark.parametrize(("text", "expected"), GOOD)
def test_parse_statement(text: str, expected: Statement) -> None:
    assert parse_statement(text) == expected


@pytest.mark.parametrize(("text", "expected"), GOOD)
def test_parse_one_statement_script(text: str, expected: Statement) -> None:
    assert parse(text) == [expected]


def test_names_keep_the_case_they_were_written_in() -> None:
    statement = parse_statement("DESC Hive.SALES.`Orders`")
    assert statement == DescribeTable(TableName("Hive", "SALES", "Orders"))


def test_text_is_the_stripped_source_without_semicolon_or_comments_around() -> None:
    statements = parse("  -- lead\n SHOW  TABLES /* mid */ FROM db  -- tail\n ;\nSWITCH x")
    assert [s.text for s in statements] == ["SHOW  TABLES /* mid */ FROM db", "SWITCH x"]
    assert parse_statement("SHOW CATALOGS ;").text == "SHOW CATALOGS"


def test_text_does_not_take_part_in_equality_or_repr() -> None:
    a, b = parse("show catalogs; SHOW   CATALOGS")
    assert a == b and hash(a) == hash(b)
    assert a.text != b.text
    assert repr(a) == "ShowCatalogs()"


def test_nodes_are_frozen_hashable_and_picklable() -> None:
    node = parse_statement("CREATE CATALOG c COMMENT 'x' PROPERTIES ('k'='v')")
    with pytest.raises(AttributeError):
        node.name = "d"  # type: ignore[attr-defined]
    assert {node: 1}[node] == 1
    copy = pickle.loads(pickle.dumps(node))
    assert copy == node and copy.text == node.text


def test_several_statements_in_one_input() -> None:
    script = """
    CREATE CATALOG IF NOT EXISTS hive PROPERTIES ('type'='hms', 'k'='a;b');
    SWITCH hive;  USE sales;
    /* a comment; with a semicolon */
    SHOW TABLES LIKE 'o;%';
    DESC orders  -- last one has no semicolon
    """
    assert parse(script) == [
        CreateCatalog("hive", (("type", "hms"), ("k", "a;b")), None, True),
        SwitchCatalog("hive"),
        UseDatabase(DatabaseName(None, "sales")),
        ShowTables(None, "o;%"),
        DescribeTable(TableName(None, None, "orders")),
    ]


def test_parse_of_blank_input_is_empty() -> None:
    assert parse("") == []
    assert parse("  -- nothing\n /* here */ ;; ") == []


BAD: list[tuple[str, int, int, str, str]] = [
    # text, line, column, token, reason
    ("", 1, 1, "<end of input>", "empty statement"),
    ("  -- only a comment", 1, 1, "<end of input>", "empty statement"),
    (
        "CRATE CATALOG x",
        1,
        1,
        "CRATE",
        "unknown statement 'CRATE'; expected one of ALTER, CREATE, DESC, DESCRIBE, DROP, EXPLAIN, MSCK, REFRESH, SET, SHOW, SWITCH, USE",
    ),
    (
        "`SHOW` CATALOGS",
        1,
        1,
        "`SHOW`",
        "unknown statement '`SHOW`'; expected one of ALTER, CREATE, DESC, DESCRIBE, DROP, EXPLAIN, MSCK, REFRESH, SET, SHOW, SWITCH, USE",
    ),
    ("SHOW TABLE", 1, 11, "<end of input>", "expected STATUS after SHOW TABLE"),
    ("SHOW TABLEZ", 1, 6, "TABLEZ", "expected CATALOGS, DATABASES, SCHEMAS, NAMESPACES, TABLES, CREATE, TABLE, CACHE, "
     "CHANGES, SCHEMA, SPLITS, PARTITIONS, TBLPROPERTIES, COLUMNS or VIEWS after SHOW"),
    ("SHOW", 1, 5, "<end of input>", "expected CATALOGS, DATABASES, SCHEMAS, NAMESPACES, TABLES, CREATE, TABLE, CACHE, "
     "CHANGES, SCHEMA, SPLITS, PARTITIONS, TBLPROPERTIES, COLUMNS or VIEWS after SHOW"),
    ("SHOW CREATE hive", 1, 13, "hive", "expected CATALOG or TABLE after SHOW CREATE"),
    ("CREATE VIEW v", 1, 8, "VIEW", "expected CATALOG, DATABASE, SCHEMA, NAMESPACE, TABLE or EXTERNAL after CREATE"),
    ("CREATE TABLE t", 1, 15, "<end of input>", "expected LIKE or '('"),
    ("CREATE TABLE t LIKE 'x'", 1, 21, "'x'", "expected PATH or table name"),
    (
        "ALTER TABLE t",
        1,
        14,
        "<end of input>",
        "expected an ALTER TABLE action: ADD COLUMNS, ADD PARTITION, DROP PARTITION, RENAME COLUMN, RENAME TO, CHANGE COLUMN, "
        "ALTER COLUMN, REPLACE COLUMNS, SET TBLPROPERTIES, UNSET TBLPROPERTIES, SET SERDEPROPERTIES, SET SERDE, SET LOCATION, "
        "PARTITION (..) SET LOCATION, RECOVER PARTITIONS, REFRESH METADATA, PROMOTE or SET FORMAT",
    ),
    ("ALTER TABLE t SET FORMAT", 1, 25, "<end of input>", "expected '('"),
    ("DROP VIEW v", 1, 6, "VIEW", "expected CATALOG, DATABASE, SCHEMA, NAMESPACE or TABLE after DROP"),
    ("REFRESH VIEW v", 1, 9, "VIEW", "expected CATALOG, DATABASE or TABLE after REFRESH"),
    # CREATE CATALOG
    ("CREATE CATALOG hive", 1, 20, "<end of input>", "expected COMMENT or PROPERTIES"),
    ("CREATE CATALOG hive COMMENT 'x'", 1, 32, "<end of input>", "expected PROPERTIES"),
    ("CREATE CATALOG hive ('k'='v')", 1, 21, "(", "expected COMMENT or PROPERTIES"),
    ("CREATE CATALOG", 1, 15, "<end of input>", "expected IF or catalog name"),
    ("CREATE CATALOG IF EXISTS c PROPERTIES ('k'='v')", 1, 19, "EXISTS", "expected NOT"),
    ("CREATE CATALOG IF NOT c PROPERTIES ('k'='v')", 1, 23, "c", "expected EXISTS"),
    ("CREATE CATALOG a.b PROPERTIES ('k'='v')", 1, 16, "a.b", "catalog name must be a single identifier"),
    ("CREATE CATALOG 'c' PROPERTIES ('k'='v')", 1, 16, "'c'", "expected IF or catalog name"),
    ("CREATE CATALOG c PROPERTIES ()", 1, 30, ")", "expected property key (a quoted string)"),
    ("CREATE CATALOG c PROPERTIES", 1, 28, "<end of input>", "expected '('"),
    ("CREATE CATALOG c PROPERTIES (k='v')", 1, 30, "k", "expected property key (a quoted string)"),
    ("CREATE CATALOG c PROPERTIES ('k' 'v')", 1, 34, "'v'", "expected '='"),
    ("CREATE CATALOG c PROPERTIES ('k'=v)", 1, 34, "v", "expected property value (a quoted string)"),
    ("CREATE CATALOG c PROPERTIES ('k'=1)", 1, 34, "1", "expected property value (a quoted string)"),
    ("CREATE CATALOG c PROPERTIES ('k'='v',)", 1, 38, ")", "expected property key (a quoted string)"),
    ("CREATE CATALOG c PROPERTIES ('k'='v'", 1, 37, "<end of input>", "expected ',' or ')'"),
    ("CREATE CATALOG c PROPERTIES ('k'='v' 'j'='w')", 1, 38, "'j'", "expected ',' or ')'"),
    ("CREATE CATALOG c PROPERTIES ('a'='1', 'b'='2', 'a'='3')", 1, 48, "'a'", "duplicate property key 'a'"),
    ("CREATE CATALOG c PROPERTIES ('k'='v') extra", 1, 39, "extra", "expected end of statement"),
    ("CREATE CATALOG c COMMENT PROPERTIES ('k'='v')", 1, 26, "PROPERTIES", "expected comment (a quoted string)"),
    # DROP / ALTER
    ("DROP CATALOG", 1, 13, "<end of input>", "expected IF or catalog name"),
    ("DROP CATALOG IF hive", 1, 17, "hive", "expected EXISTS"),
    ("DROP CATALOG a.b", 1, 14, "a.b", "catalog name must be a single identifier"),
    ("DROP CATALOG hive cascade", 1, 19, "cascade", "expected end of statement"),
    ("ALTER CATALOG hive", 1, 19, "<end of input>", "expected SET or RENAME"),
    ("ALTER CATALOG hive SET ('k'='v')", 1, 24, "(", "expected PROPERTIES"),
    ("ALTER CATALOG hive SET PROPERTIES ()", 1, 36, ")", "expected property key (a quoted string)"),
    ("ALTER CATALOG hive SET PROPERTIES ('k'='1', 'k'='2')", 1, 45, "'k'", "duplicate property key 'k'"),
    ("ALTER CATALOG hive RENAME", 1, 26, "<end of input>", "expected new catalog name"),
    ("ALTER CATALOG hive RENAME TO x", 1, 30, "x", "expected end of statement"),
    ("ALTER CATALOG hive RENAME a.b", 1, 27, "a.b", "new catalog name must be a single identifier"),
    # SHOW / SWITCH / USE
    ("SHOW CATALOGS x", 1, 15, "x", "expected end of statement"),
    ("SHOW CREATE CATALOG", 1, 20, "<end of input>", "expected catalog name"),
    ("SHOW DATABASES FROM", 1, 20, "<end of input>", "expected catalog name"),
    ("SHOW DATABASES FROM a.b", 1, 21, "a.b", "catalog name must be a single identifier"),
    ("SHOW DATABASES IN hive x", 1, 24, "x", "expected LIKE or end of statement"),
    ("SHOW TABLES garbage", 1, 13, "garbage", "expected FROM, IN, LIKE or end of statement"),
    ("SHOW TABLES FROM db garbage", 1, 21, "garbage", "expected LIKE or end of statement"),
    ("SHOW TABLES FROM a.b.c", 1, 18, "a.b.c", "database name has too many parts; expected [catalog.]database"),
    ("SHOW TABLES FROM db.", 1, 21, "<end of input>", "expected identifier after '.' in database name"),
    ("SHOW TABLES LIKE x", 1, 18, "x", "expected pattern (a quoted string)"),
    ("SHOW TABLES LIKE 'x' FROM db", 1, 22, "FROM", "expected end of statement"),
    ("SWITCH", 1, 7, "<end of input>", "expected catalog name"),
    ("SWITCH a.b", 1, 8, "a.b", "catalog name must be a single identifier"),
    ("USE", 1, 4, "<end of input>", "expected database name"),
    ("USE a.b.c", 1, 5, "a.b.c", "database name has too many parts; expected [catalog.]database"),
    ("USE 42", 1, 5, "42", "expected database name"),
    # DESC / REFRESH
    ("DESC", 1, 5, "<end of input>", "expected table name"),
    ("DESC a.b.c.d", 1, 6, "a.b.c.d", "table name has too many parts; expected [[catalog.]database.]table"),
    ("DESCRIBE a . b . c . d", 1, 10, "a . b . c . d", "table name has too many parts; expected [[catalog.]database.]table"),
    ("DESC a..b", 1, 8, ".", "expected identifier after '.' in table name"),
    ("DESC a.'b'", 1, 8, "'b'", "expected identifier after '.' in table name"),
    ("DESC t t", 1, 8, "t", "expected end of statement"),
    ("REFRESH CATALOG a.b", 1, 17, "a.b", "catalog name must be a single identifier"),
    ("REFRESH DATABASE a.b.c", 1, 18, "a.b.c", "database name has too many parts; expected [catalog.]database"),
    ("REFRESH TABLE a.b.c.d", 1, 15, "a.b.c.d", "table name has too many parts; expected [[catalog.]database.]table"),
    # lexical errors surface through the parser
    ("SHOW TABLES LIKE 'abc", 1, 18, "'abc", "unterminated string literal"),
    ("DESC `abc", 1, 6, "`abc", "unterminated quoted identifier"),
    ("SHOW /* x", 1, 6, "/*", "unterminated comment"),
    ("SHOW CATALOGS @", 1, 15, "@", "unexpected character"),
    # one statement only
    ("SHOW CATALOGS; SHOW CATALOGS", 1, 14, ";", "expected end of statement"),
    ("SHOW CATALOGS;;", 1, 14, ";", "expected end of statement"),
    # multi-line positions
    ("SHOW\n  TABLES\n  FROM db\n  LIKE", 4, 7, "<end of input>", "expected pattern (a quoted string)"),
    ("CREATE CATALOG c\nPROPERTIES (\n  'a' = '1',\n  'a' = '2'\n)", 4, 3, "'a'", "duplicate property key 'a'"),
]


@pytest.mark.parametrize(("text", "line", "column", "token", "reason"), BAD)
def test_parse_statement_errors(text: str, line: int, column: int, token: str, reason: str) -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement(text)
    err = info.value
    assert (err.reason, err.line, err.column, err.token) == (reason, line, column, token)
    assert err.excerpt.split("\n")[1] == " " * (column - 1) + "^"


def test_a_version_too_long_for_python_is_a_syntax_error() -> None:
    with pytest.raises(SqlSyntaxError) as info:  # used to be int()'s ValueError
        parse_statement("SHOW CHANGES SINCE " + "9" * 5000)
    assert (info.value.reason, info.value.line, info.value.column) == ("number too long (5000 digits)", 1, 20)


def test_error_message_format() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement("SHOW TABLEZ x")
    assert str(info.value) == (
        "line 1:6: expected CATALOGS, DATABASES, SCHEMAS, NAMESPACES, TABLES, CREATE, TABLE, CACHE, CHANGES, SCHEMA, SPLITS, "
        "PARTITIONS, TBLPROPERTIES, COLUMNS or VIEWS after SHOW near 'TABLEZ'\n"
        "SHOW TABLEZ x\n"
        "     ^"
    )


def test_error_in_second_statement_on_line_three_reports_line_three() -> None:
    script = "SHOW CATALOGS;\n-- now the bad one\nUSE hive.db; SHOW TABLES FROM db garbage;\nSWITCH x"
    with pytest.raises(SqlSyntaxError) as info:
        parse(script)
    err = info.value
    assert (err.line, err.column, err.token) == (3, 34, "garbage")
    assert err.excerpt == "USE hive.db; SHOW TABLES FROM db garbage;\n" + " " * 33 + "^"


def test_error_on_later_line_of_a_multiline_statement() -> None:
    script = "SWITCH hive;\nCREATE CATALOG c\n  PROPERTIES ('k'='v',\n    'k' = 'w');"
    with pytest.raises(SqlSyntaxError) as info:
        parse(script)
    err = info.value
    assert (err.reason, err.line, err.column, err.token) == ("duplicate property key 'k'", 4, 5, "'k'")
    assert err.excerpt == "    'k' = 'w');\n    ^"


def test_unterminated_string_in_a_later_statement() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse("SHOW CATALOGS;\n\nSHOW TABLES LIKE 'abc;\nSHOW CATALOGS;")
    err = info.value
    assert (err.reason, err.line, err.column) == ("unterminated string literal", 3, 18)


def test_unterminated_comment_after_last_statement_is_reported() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse("SHOW CATALOGS;\n/* never closed; SHOW CATALOGS")
    assert (info.value.reason, info.value.line, info.value.column) == ("unterminated comment", 2, 1)


def test_parse_statement_of_a_split_piece_uses_input_coordinates() -> None:
    pieces = split_statements("SHOW CATALOGS;\n   SHOW   TABLEZ")
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement(pieces[1])
    err = info.value
    assert (err.line, err.column, err.token) == (2, 11, "TABLEZ")
    # Without the whole input, the excerpt quotes the statement, caret still under the token.
    assert err.excerpt == "SHOW   TABLEZ\n       ^"


def test_parse_statement_with_explicit_origin() -> None:
    source = StatementSource("DESC a.b.c.d", line=10, column=5)
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement(source)
    assert (info.value.line, info.value.column) == (10, 10)
    assert parse_statement(StatementSource("SWITCH x", 3, 3)) == SwitchCatalog("x")


def test_buffer_then_parse_matches_parse() -> None:
    script = "CREATE CATALOG c PROPERTIES ('a'='x;y');\nSWITCH c;\nSHOW TABLES FROM d LIKE 'o''r;'"
    buffer = StatementBuffer()
    pieces: list[StatementSource] = []
    for ch in script:
        pieces.extend(buffer.feed(ch))
    pieces.extend(buffer.flush())
    assert [parse_statement(p) for p in pieces] == parse(script)
    assert [parse_statement(p).text for p in pieces] == [s.text for s in parse(script)]


def test_first_bad_statement_raises_even_after_good_ones() -> None:
    with pytest.raises(SqlSyntaxError):
        parse("SHOW CATALOGS; SHOW NOTHING; SHOW CATALOGS")
