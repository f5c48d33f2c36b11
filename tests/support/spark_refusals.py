"""Statements of Spark's own DDL tests (:mod:`tests.support.spark_ddl_cases` lists the files read) that Spark refuses,
and their read-only statements, for the parity suite (tests/ddl/test_spark_parity.py).

:data:`REFUSED_BY_BOTH`: what Spark refuses there, and a few more statements of the same kind; the catalog refuses
them too, and its error names what is wrong. :data:`SHOWN_BY_BOTH`: SHOW TABLES, SHOW COLUMNS, SHOW TBLPROPERTIES and
DESCRIBE on tables Spark made, answered alike by Spark and the catalog in the columns they share.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.support.spark_ddl_cases import DESCRIBED, PARTITIONED, SHOW_COLUMNS, SHOW_TABLES

__all__ = ["REFUSED_BY_BOTH", "SHOWN_BY_BOTH", "Refused", "Shown"]


@dataclass(frozen=True)
class Refused:
    """``statement`` (after ``setup``) is refused by Spark and by the catalog, whose error says ``reason``."""

    name: str
    setup: tuple[str, ...]
    statement: str
    reason: str


REFUSED_BY_BOTH = [
    # ShowPartitionsSuiteBase ("non-partitioning columns"): issue 40's SHOW PARTITIONS t PARTITION (abcd=2015, xyz=1)
    Refused("show_partitions_of_other_columns", PARTITIONED, "SHOW PARTITIONS {db}.t PARTITION (abcd=2015, xyz=1)",
            r"'abcd', 'xyz' are not partition columns of table '.*\.t' \(its partition columns: p\)"),
    Refused("show_partitions_unpartitioned", ("CREATE TABLE {db}.t (a INT) USING parquet",), "SHOW PARTITIONS {db}.t",
            "is not partitioned"),
    # change-column.sql: a partition column's comment
    Refused("change_partition_column", ("CREATE TABLE {db}.t (a INT, c INT) USING parquet PARTITIONED BY (c)",),
            "ALTER TABLE {db}.t CHANGE COLUMN c c INT COMMENT 'this is column C'", "is a partition column"),
    Refused("add_partition_not_fully_specified", ("CREATE TABLE {db}.t (id bigint, part0 int, part1 string) USING parquet "
                                                  "PARTITIONED BY (part0, part1)",),
            "ALTER TABLE {db}.t ADD PARTITION (part0 = 1)", "needs a value for 'part1'"),
    Refused("csv_nested_column", (), "CREATE TABLE {db}.c (a INT, s STRUCT<x: INT>) USING csv", "CSV holds plain values only"),
    # Spark's type names a Hive table cannot hold, or that Spark refuses
    *(Refused(f"type_{written.split('(')[0].split()[0].lower()}", (), f"CREATE TABLE {{db}}.t (a INT, b {written}) STORED AS PARQUET",
              reason)
      for written, reason in [("TIMESTAMP_NTZ", "TIMESTAMP_NTZ has no Hive type"), ("TIMESTAMP WITHOUT TIME ZONE", "has no Hive type"),
                              ("VOID", "no Hive serde stores it"), ("INTERVAL YEAR TO MONTH", "INTERVAL has no Hive type"),
                              ("VARIANT", "VARIANT has no Hive type"), ("TIME", "TIME has no Hive type"),
                              ("CHAR", "CHAR needs a length"), ("VARCHAR", "VARCHAR needs a length"),
                              ("TIMESTAMP(3)", "precision 6"), ("DECIMAL(39)", "between 1 and 38"), ("CHAR(256)", "between 1 and 255"),
                              ("UNIONTYPE<INT, STRING>", "Spark cannot read a union column"), ("DATETIME", "unknown type")]),
    # create.sql: a column named twice
    Refused("duplicate_column", (), "CREATE TABLE {db}.t (c STRING, c INT) USING parquet", "duplicate column name 'c'"),
    Refused("duplicate_columns", (), "CREATE TABLE {db}.t (c0 STRING, c1 INT, c1 DOUBLE, c0 INT) USING parquet",
            "duplicate column name 'c1'"),
    # AlterTableRenameSuiteBase, DropTableSuiteBase, AlterTableSetSerdeSuite, AlterTable(Un)SetTblPropertiesSuiteBase,
    # DescribeTableSuiteBase, AlterTableDropPartitionSuiteBase: the table does not exist
    *(Refused(f"missing_table_{verb}", (), statement, "does not exist") for verb, statement in [
        ("rename", "ALTER TABLE {db}.does_not_exist RENAME TO {db}.tab2"),
        ("drop", "DROP TABLE {db}.tbl"),
        ("drop_in_missing_database", "DROP TABLE {db}_non_existent_db.tbl"),
        ("set_serde_properties", "ALTER TABLE {db}.does_not_exist SET SERDEPROPERTIES ('x' = 'y')"),
        ("set_properties", "ALTER TABLE {db}.does_not_exist SET TBLPROPERTIES ('k1' = 'v1')"),
        ("unset_properties", "ALTER TABLE {db}.does_not_exist UNSET TBLPROPERTIES ('k1')"),
        ("describe", "DESCRIBE TABLE {db}.table_non_existence"),
        ("drop_partition", "ALTER TABLE {db}.does_not_exist DROP PARTITION (a='4', b='9')")]),
    # AlterTableSetSerdeSuite (v1): a data source table's serde, any partition's serde or serde properties
    *(Refused(f"set_serde_{name}", ("CREATE TABLE {db}.tbl (col1 int, col2 string, a int, b int) USING parquet PARTITIONED BY (a, b)",
                                    "ALTER TABLE {db}.tbl ADD PARTITION (a = '1', b = '2')"), statement, reason)
      for name, statement, reason in [
        ("of_data_source", "ALTER TABLE {db}.tbl SET SERDE 'whatever'", "SET SERDE is not supported for table '.*', a Spark data source"),
        ("with_properties_of_data_source", "ALTER TABLE {db}.tbl SET SERDE 'org.apache.madoop' WITH SERDEPROPERTIES ('k' = 'v', "
         "'kay' = 'vee')", "SET SERDE is not supported"),
        ("of_partition", "ALTER TABLE {db}.tbl PARTITION (a=1, b=2) SET SERDE 'whatever'", "not supported"),
        ("properties_of_partition", "ALTER TABLE {db}.tbl PARTITION (a=1, b=2) SET SERDEPROPERTIES ('k' = 'vvv', 'kay' = 'vee')",
         "not supported")]),
    # AlterTableDropPartitionSuiteBase (and v1's): one of several missing, a partial spec matching none, an empty value
    Refused("drop_partition_one_missing", ("CREATE TABLE {db}.tbl (id bigint, data string) USING HIVE PARTITIONED BY (id)",
                                           "ALTER TABLE {db}.tbl ADD PARTITION (id=1) LOCATION 'loc'"),
            "ALTER TABLE {db}.tbl DROP PARTITION (id=1), PARTITION (id=2)", r"partition '.*\(id=2\)' does not exist"),
    Refused("drop_partition_not_fully_specified", ("CREATE TABLE {db}.tbl (id bigint, part0 int, part1 string) USING parquet "
                                                   "PARTITIONED BY (part0, part1)",),
            "ALTER TABLE {db}.tbl DROP PARTITION (part0 = 1)", "does not exist"),
    *(Refused(f"{verb.lower()}_partition_empty_value", ("CREATE TABLE {db}.tbl (col1 INT, p1 STRING) USING parquet PARTITIONED BY (p1)",),
              f"ALTER TABLE {{db}}.tbl {verb} PARTITION (p1 = '')", "partition value of key 'p1' of .* is empty")
      for verb in ("DROP", "ADD")),
    # CreateNamespaceSuiteBase (and sql/hive's), DropNamespaceSuiteBase (v1's), AlterNamespaceSetPropertiesSuiteBase,
    # AlterNamespaceSetLocationSuiteBase (sql/hive's): empty locations, reserved properties, what exists or does not
    Refused("create_namespace_empty_location", (), "CREATE NAMESPACE {db}_ns LOCATION ''", "is empty"),
    Refused("create_namespace_exists", ("CREATE NAMESPACE {db}_ns",), "CREATE NAMESPACE {db}_ns", "already exists"),
    Refused("create_namespace_two_parts", (), "CREATE NAMESPACE {db}.ns2", "catalog '.*' does not exist"),
    *(Refused(f"{verb.lower()}_namespace_reserved_{key}", (), statement.format(key=key), f"'{key}' is a reserved database property")
      for key in ("location", "owner", "collation")
      for verb, statement in [("CREATE", "CREATE NAMESPACE {{db}}_ns WITH DBPROPERTIES('{key}'='dummyVal')"),
                              ("ALTER", "ALTER NAMESPACE {{db}} SET PROPERTIES ('{key}'='dummyVal')")]),
    Refused("alter_missing_namespace", (), "ALTER DATABASE {db}_not_exist SET PROPERTIES ('d'='d')", "does not exist"),
    Refused("set_missing_namespace_location", (), "ALTER DATABASE {db}_not_exist SET LOCATION 'loc'", "does not exist"),
    Refused("set_namespace_empty_location", (), "ALTER NAMESPACE {db} SET LOCATION ''", "is empty"),
    Refused("set_namespace_location_hive", (), "ALTER DATABASE {db} SET LOCATION '{root}/loc'", "does not support altering a database"),
    Refused("drop_default_namespace", (), "DROP NAMESPACE default", "Can not drop default database"),
    Refused("drop_non_empty_namespace", ("CREATE NAMESPACE {db}_ns", "CREATE TABLE {db}_ns.table (id bigint) USING HIVE"),
            "DROP NAMESPACE {db}_ns", r"is not empty: it has 1 table\(s\) \(table\)"),
    Refused("drop_missing_namespace", (), "DROP DATABASE {db}_unknown", "does not exist"),
    # AlterTableSetTblPropertiesSuiteBase, AlterTableUnsetTblPropertiesSuiteBase: reserved properties (and in OPTIONS,
    # CREATE TABLE LIKE)
    *(Refused(f"{verb}_reserved_{key}", ("CREATE TABLE {db}.tbl (key int) USING parquet",), statement.format(key=key),
              f"'{key}' is a reserved table property")
      for key in ("provider", "location", "owner", "external", "collation", "is_managed_location", "table_type")
      for verb, statement in [("set", "ALTER TABLE {{db}}.tbl SET TBLPROPERTIES ('{key}'='bar')"),
                              ("unset", "ALTER TABLE {{db}}.tbl UNSET TBLPROPERTIES ('{key}')")]),
    *(Refused(f"create_reserved_{key}_in_{clause.lower()}", (), f"CREATE TABLE {{db}}.t (key int) USING parquet {clause} ('{key}'='bar')",
              f"'{key}' is a reserved table property") for key in ("owner", "location") for clause in ("OPTIONS", "TBLPROPERTIES")),
    Refused("create_like_reserved_owner", ("CREATE TABLE {db}.tbl (key int) STORED AS ORC",),
            "CREATE TABLE {db}.t LIKE {db}.tbl TBLPROPERTIES ('owner'='x')", "'owner' is a reserved table property"),
    # empty locations of tables and partitions, refused as Spark refuses them ("Can not create a Path from an empty string")
    *(Refused(f"empty_location_{name}", (*PARTITIONED,), statement, "is empty") for name, statement in [
        ("create_table", "CREATE TABLE {db}.e (a INT) USING parquet LOCATION ''"),
        ("create_hive_table", "CREATE TABLE {db}.e (a INT) STORED AS ORC LOCATION ''"),
        ("set_location", "ALTER TABLE {db}.t SET LOCATION ''"),
        ("add_partition", "ALTER TABLE {db}.t ADD PARTITION (p = 'a') LOCATION ''"),
        ("partition_set_location", "ALTER TABLE {db}.t PARTITION (p = '1') SET LOCATION ''")]),
    # ShowColumnsSuiteBase (and v1's), show_columns.sql; ShowTablesSuiteBase; show-tables.sql
    *(Refused(f"show_columns_{name}", SHOW_COLUMNS, statement, reason) for name, statement, reason in [
        ("of_missing_table", "SHOW COLUMNS IN badtable FROM {db}", "does not exist"),
        ("in_missing_database", "SHOW COLUMNS IN showcolumn1 IN {db}_ns1", "does not exist"),
        ("in_other_database", "SHOW COLUMNS IN {db}.showcolumn1 FROM {db}_baddb", "names two databases"),
        ("in_three_part_database", "SHOW COLUMNS IN showcolumn1 FROM a.b.c", "database name has too many parts")]),
    Refused("show_tables_in_missing_database", (), "SHOW TABLES IN {db}_unknown", "does not exist"),
]


@dataclass(frozen=True)
class Shown:
    """``statements`` (SHOW TABLES, SHOW COLUMNS, SHOW TBLPROPERTIES, DESCRIBE), run in ``{db}`` (the current
    database) after Spark ran ``made_by_spark`` there, answer through the catalog what they answer through Spark,
    for the same tables."""

    name: str
    made_by_spark: tuple[str, ...]
    statements: tuple[str, ...]


SHOWN_BY_BOTH = [
    # show-tables.sql (its SHOW TABLE EXTENDED left out), ShowTablesSuiteBase ("show tables with a pattern")
    Shown("show_tables_inputs", SHOW_TABLES, ("SHOW TABLES", "SHOW TABLES IN {db}", "SHOW TABLES 'show_t*'",
                                               "SHOW TABLES LIKE 'show_t1*|show_t2*'", "SHOW TABLES IN {db} 'show_t*'",
                                               "SHOW TABLES IN {db} LIKE 'show_t*'")),
    Shown("show_tables_suite", ("CREATE TABLE {db}.table (id bigint, data string) USING parquet",
                                "CREATE TABLE {db}.table_name_1a (id bigint, data string) USING parquet",
                                "CREATE TABLE {db}.table_name_2b (id bigint, data string) USING parquet"),
          ("SHOW TABLES FROM {db}", "SHOW TABLES FROM {db} LIKE '*name*'", "SHOW TABLES FROM {db} LIKE 'table_name_1*|table_name_2*'",
           "SHOW TABLES FROM {db} LIKE '*2b'")),
    # show_columns.sql, ShowColumnsSuiteBase ("basic test")
    Shown("show_columns_inputs", (*SHOW_COLUMNS, "CREATE TABLE {db}.tbl(col1 int, col2 string) USING HIVE"), (
        "SHOW COLUMNS IN showcolumn1", "SHOW COLUMNS IN {db}.showcolumn1", "SHOW COLUMNS IN showcolumn1 FROM {db}",
        "SHOW COLUMNS IN showcolumn2 IN {db}", "SHOW COLUMNS IN {db}.showcolumn1 from {DB}", "SHOW COLUMNS FROM {db}.tbl IN {db}",
        "SHOW COLUMNS IN {db}.tbl FROM {db}", "SHOW COLUMNS IN {db}.tbl")),
    # show-tblproperties.sql, and tables whose properties Spark reads apart (options, serde properties, secrets)
    Shown("show_tblproperties_inputs", (
        "CREATE TABLE {db}.tbl (a INT, b STRING, c INT) USING parquet TBLPROPERTIES('p1'='v1', 'p2'='v2')",
        DESCRIBED,
        "CREATE TABLE {db}.h (a INT) COMMENT 'c' PARTITIONED BY (p STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
        "STORED AS TEXTFILE TBLPROPERTIES ('k' = 'v', 'token' = 'x')",
        "CREATE TABLE {db}.x (a INT) STORED AS ORC LOCATION '{root}/x'"), (
        "SHOW TBLPROPERTIES tbl", 'SHOW TBLPROPERTIES tbl("p1")', 'SHOW TBLPROPERTIES tbl("p3")', "SHOW TBLPROPERTIES t",
        "SHOW TBLPROPERTIES t ('password')", "SHOW TBLPROPERTIES t ('option.a')", "SHOW TBLPROPERTIES t ('comment')",
        "SHOW TBLPROPERTIES h", "SHOW TBLPROPERTIES h ('option.field.delim')", "SHOW TBLPROPERTIES x",
        "SHOW TBLPROPERTIES x ('EXTERNAL')")),
    # describe.sql (its DESC EXTENDED/FORMATTED, PARTITION and column forms left out), DescribeTableSuiteBase
    Shown("describe_inputs", (DESCRIBED, "ALTER TABLE {db}.t SET TBLPROPERTIES (e = '3')", "ALTER TABLE {db}.t ADD PARTITION (c='Us', d=1)",
                              "CREATE TABLE {db}.ty (a CHAR(5) COMMENT 'x', b VARCHAR(10), c DECIMAL(10,2), d ARRAY<STRING>, "
                              "e MAP<STRING,INT>, f STRUCT<x: INT COMMENT 'in', y: STRING>, g TIMESTAMP, h DATE, i BINARY, "
                              "j TINYINT, k SMALLINT, l BIGINT, m FLOAT, n DOUBLE, o BOOLEAN) PARTITIONED BY (p STRING) STORED AS ORC"),
          ("DESCRIBE t", "DESC {db}.t", "DESC TABLE t", "DESCRIBE TABLE ty")),
]
"""Spark's read-only statements on tables Spark made: the catalog's answer equals Spark's, in the columns it shares."""
