"""DDL cases taken from Spark's own tests, read as Spark wrote them, for the parity suite (tests/ddl/test_spark_parity.py).

Each case is the statements of one of Spark's SQL test inputs (``sql/core/src/test/resources/sql-tests/inputs``) or
DDL command suites (``sql/core/src/test/scala/org/apache/spark/sql/execution/command``), with its table names put in a
database of the case's own (``{db}``, ``{db}_ns`` for a second one) and its paths under the side's folder (``{root}``);
statements the catalog does not run (views, temporary views, SET, INSERT, CACHE, TRUNCATE, RENAME PARTITION) are left
out. A command suite runs with ``USING parquet`` (its v1 in-memory variant, ``defaultUsing``) and ``USING HIVE`` (its
Hive variant). The statements of those tests that Spark refuses, and their read-only statements, are in
:mod:`tests.support.spark_refusals`.

Read for this (apache/spark): ``sql-tests/inputs`` show-create-table.sql, change-column.sql, show-tables.sql,
show-tblproperties.sql, show_columns.sql, describe.sql, describe-table-after-alter-table.sql, create.sql; the command
suites (base, ``v1/`` and ``sql/hive/.../command/``) AlterTableAddPartition, AlterTableSetLocation, ShowPartitions,
AlterTableRename, AlterTableRenamePartition, TruncateTable, DropTable, ShowTables, CreateNamespace, DropNamespace,
AlterNamespaceSetProperties, AlterNamespaceSetLocation, AlterTableAddColumns, AlterTableDropPartition,
AlterTableSetSerde, AlterTableSetTblProperties, AlterTableUnsetTblProperties, ShowColumns, DescribeTable.
"""

from __future__ import annotations

from tests.support.ddl_parity import Case

__all__ = ["SPARK_CASES", "SPARK_TYPES", "USINGS", "DESCRIBED", "SHOW_TABLES", "SHOW_COLUMNS", "PARTITIONED"]

SPARK_TYPES = ("a BYTE, b SHORT, c INTEGER, d LONG, e DEC(5,2), f DECIMAL, g TIMESTAMP_LTZ, h TIMESTAMP(6) WITH LOCAL TIME ZONE, "
               "i CHARACTER(3), j VARCHAR(4), k BOOLEAN, l BINARY, m DATE, n DOUBLE, o STRUCT<x INT, y REAL COMMENT 'inner'>, "
               "p ARRAY<LONG>, q MAP<STRING, SHORT>, r STRUCT<>, s REAL, t NUMERIC, u NUMERIC(10), v NUMERIC(10,1), w TINYINT, "
               "x SMALLINT, y BIGINT, z FLOAT")
"""Every type name of Spark's grammar (DataTypeAstBuilder) that a Hive table can hold, in Spark's spellings."""

USINGS = ("USING parquet", "USING HIVE")
"""A command suite's ``defaultUsing``: its v1 in-memory variant's and its Hive variant's."""


def _suffix(using: str) -> str:
    return using.split()[-1].lower()


_CONVERSIONS = ("part0 = -1, part1 = 0, part2 = 1, part3 = 2, part4 = 3.14, part5 = 3.14, part6 = 'abc', part7 = true, "
                "part8 = '2020-11-23', part9 = '2020-11-23 22:13:10.123456'")

DESCRIBED = ("CREATE TABLE {db}.t (a STRING, b INT, c STRING, d STRING) USING parquet "
             "OPTIONS (a '1', b '2', password 'password') "
             "PARTITIONED BY (c, d) CLUSTERED BY (a) SORTED BY (b ASC) INTO 2 BUCKETS "
             "COMMENT 'table_comment' "
             "TBLPROPERTIES (t 'test', password 'password')")
"""describe.sql's table: bucketed, so made by Spark (the catalog refuses CLUSTERED BY)."""

SHOW_TABLES = ("CREATE TABLE {db}.show_t1(a String, b Int, c String, d String) USING parquet PARTITIONED BY (c, d)",
               "ALTER TABLE {db}.show_t1 ADD PARTITION (c='Us', d=1)",
               "CREATE TABLE {db}.show_t2(b String, d Int) USING parquet")
"""show-tables.sql's tables."""
PARTITIONED = ("CREATE TABLE {db}.t (a INT) PARTITIONED BY (p STRING) STORED AS PARQUET", "ALTER TABLE {db}.t ADD PARTITION (p = '1')")
"""A partitioned Hive table with one partition."""

SHOW_COLUMNS = ("CREATE TABLE {db}.showcolumn1 (col1 int, `col 2` int)",
                "CREATE TABLE {db}.showcolumn2 (price int, qty int) partitioned by (year int, month int)")
"""show_columns.sql's tables (no USING: data source tables, as Spark 4 makes them)."""

SPARK_CASES = [
    # Spark's type names, as its grammar reads them (issue 40: REAL and NUMERIC were refused)
    Case("spark_type_names", (f"CREATE TABLE {{db}}.t ({SPARK_TYPES}) USING parquet",
                              f"CREATE TABLE {{db}}.h ({SPARK_TYPES}) STORED AS PARQUET",
                              f"CREATE TABLE {{db}}.o ({SPARK_TYPES}) USING orc",
                              "CREATE TABLE {db}.c (a REAL, b NUMERIC(10,1), c LONG, d CHARACTER(2)) USING csv")),
    # show-create-table.sql
    Case("show_create_table_inputs", (
        "CREATE TABLE {db}.tbl (a INT, b STRING, c INT) USING parquet",
        "CREATE TABLE {db}.tbl2 (a INT, b STRING, c INT) USING parquet OPTIONS ('a' 1, 'password' = 'password')",
        "CREATE TABLE {db}.tbl3 (a INT, b STRING, c INT) USING parquet OPTIONS ('path' '{root}/path/to/table')",
        "CREATE TABLE {db}.tbl4 (a INT, b STRING, c INT) USING parquet LOCATION '{root}/path/to/table4'",
        "CREATE TABLE {db}.tbl5 (a INT, b STRING, c INT) USING parquet PARTITIONED BY (a)",
        "CREATE TABLE {db}.tbl6 (a INT, b STRING, c INT) USING parquet COMMENT 'This is a comment'",
        "CREATE TABLE {db}.tbl7 (a INT, b STRING, c INT) USING parquet TBLPROPERTIES ('a' = '1', 'password' = 'password')",
        "CREATE TABLE {db}.tbl8 (a REAL, b NUMERIC, c NUMERIC(10), d NUMERIC(10,1)) USING parquet")),
    # change-column.sql (the comment changes Spark runs; c's COMMENT '' is a comment of its own, kept as '')
    Case("change_column_inputs", (
        "CREATE TABLE {db}.test_change(a INT, b STRING, c INT) using parquet",
        "ALTER TABLE {db}.test_change CHANGE a a INT COMMENT 'this is column a'",
        "ALTER TABLE {db}.test_change CHANGE b b STRING COMMENT '#*02?`'",
        "ALTER TABLE {db}.test_change CHANGE c c INT COMMENT ''",
        "ALTER TABLE {db}.test_change CHANGE a a INT COMMENT 'this is column a'",
        "ALTER TABLE {db}.test_change CHANGE a A INT COMMENT 'this is column A'",
        "CREATE TABLE {db}.partition_table(a INT, b STRING, c INT, d STRING) USING parquet PARTITIONED BY (c, d)")),
    Case("empty_comments", ("CREATE TABLE {db}.t (a INT COMMENT '', b INT) USING parquet",
                            "ALTER TABLE {db}.t ADD COLUMNS (c INT COMMENT '')",
                            "ALTER TABLE {db}.t CHANGE b b INT COMMENT ''",
                            "CREATE TABLE {db}.h (a INT COMMENT 'x', b INT) PARTITIONED BY (p STRING COMMENT '') STORED AS TEXTFILE",
                            "ALTER TABLE {db}.h CHANGE a a INT COMMENT ''"), connector=True),
    # AlterTableAddPartitionSuiteBase (v1: USING parquet; its Hive variant: USING HIVE)
    *(Case(f"add_partition_suite_{using.split()[-1].lower()}", (
        f"CREATE TABLE {{db}}.tbl (id bigint, data string) {using} PARTITIONED BY (id)",
        "ALTER TABLE {db}.tbl ADD PARTITION (id=1) LOCATION 'loc'",
        "ALTER TABLE {db}.tbl ADD IF NOT EXISTS PARTITION (id=1) LOCATION 'loc'",
        "ALTER TABLE {db}.tbl ADD PARTITION (id=2) LOCATION 'loc' PARTITION (id=3) LOCATION 'loc1'",
        "ALTER TABLE {db}.tbl ADD PARTITION (ID=4) LOCATION 'loc1'",
        f"CREATE TABLE {{db}}.mp (id bigint, a int, b string) {using} PARTITIONED BY (a, b)",
        "ALTER TABLE {db}.mp ADD PARTITION (a=2, b='abc')",
        f"CREATE TABLE {{db}}.conv (id int, part0 tinyint, part1 smallint, part2 int, part3 bigint, part4 float, part5 double, "
        f"part6 string, part7 boolean, part8 date, part9 timestamp) {using} "
        "PARTITIONED BY (part0, part1, part2, part3, part4, part5, part6, part7, part8, part9)",
        f"ALTER TABLE {{db}}.conv ADD PARTITION ({_CONVERSIONS})",
        f"ALTER TABLE {{db}}.conv DROP PARTITION ({_CONVERSIONS})",
        f"CREATE TABLE {{db}}.typed (name STRING, part DATE) {using} PARTITIONED BY (part)",
        "ALTER TABLE {db}.typed ADD PARTITION(part = date'2020-01-01')",
        f"CREATE TABLE {{db}}.nul (c int, p int) {using} PARTITIONED BY (p)",
        "ALTER TABLE {db}.nul ADD PARTITION (p=null)",
        "ALTER TABLE {db}.nul DROP PARTITION (p=null)")) for using in ("USING parquet", "USING HIVE")),
    Case("add_partition_number_as_string", ("CREATE TABLE {db}.t (name STRING, age INT) USING PARQUET PARTITIONED BY (dt STRING)",
                                            "ALTER TABLE {db}.t ADD PARTITION(dt = 08)",
                                            "ALTER TABLE {db}.t ADD PARTITION(dt = '09')")),
    # AlterTableSetLocationSuiteBase, and relative locations (issue 40: a partition's SET LOCATION stored 'loc2' as given)
    Case("relative_locations", ("CREATE TABLE {db}.t (a INT) PARTITIONED BY (p STRING) STORED AS PARQUET",
                                "ALTER TABLE {db}.t ADD PARTITION (p = '1')",
                                "ALTER TABLE {db}.t PARTITION (p = '1') SET LOCATION 'loc2'",
                                "ALTER TABLE {db}.t SET LOCATION 'tloc'",
                                "CREATE TABLE {db}.s (a INT) USING parquet LOCATION 'srel'",
                                "CREATE TABLE {db}.h (a INT) STORED AS ORC LOCATION 'hrel'",
                                "ALTER TABLE {db}.s SET LOCATION 'srel2'",
                                "CREATE DATABASE {db}_x LOCATION '{db}_xfolder'")),
    Case("set_location_suite", ("CREATE TABLE {db}.tbl (id INT, data STRING) USING parquet PARTITIONED BY (id)",
                                "ALTER TABLE {db}.tbl ADD PARTITION (id=1)",
                                "ALTER TABLE {db}.tbl SET LOCATION '{root}/new_loc'",
                                "ALTER TABLE {db}.tbl PARTITION (id = 1) SET LOCATION '{root}/new_part_loc'")),
    # the provider as written (issue 40: USING PARQUET was stored as parquet)
    Case("provider_as_written", ("CREATE TABLE {db}.t (a INT) USING PARQUET",
                                 "CREATE TABLE {db}.o (a INT, p STRING) USING ORC PARTITIONED BY (p)",
                                 "ALTER TABLE {db}.o ADD PARTITION (p='x')",
                                 "ALTER TABLE {db}.o SET TBLPROPERTIES ('k'='v')"), connector=True),
    Case("using_hive_file_format", ("CREATE TABLE {db}.t (a INT, b STRING) USING hive OPTIONS (fileFormat 'parquet')",
                                    "CREATE TABLE {db}.o (a INT, p STRING) USING hive OPTIONS (fileFormat 'orc') PARTITIONED BY (p)")),
    # AlterTableRenameSuiteBase (and v1's): in a namespace, the destination's namespace omitted (the source's), a
    # partitioned table (SPARK-37963), names as written (SPARK-38587), the current namespace (USE)
    *(Case(f"rename_suite_{_suffix(using)}", (
        f"CREATE TABLE {{db}}.src_tbl (c0 INT) {using}",
        "ALTER TABLE {db}.src_tbl RENAME TO {db}.dst_tbl",
        f"CREATE TABLE {{db}}.src_tbl2 (c0 INT) {using}",
        "ALTER TABLE {db}.src_tbl2 RENAME TO dst_tbl2",
        f"CREATE TABLE {{db}}.src_tbl3 (i int, j int) {using} partitioned by (j)",
        "ALTER TABLE {db}.src_tbl3 RENAME TO {db}.dst_tbl3",
        f"CREATE TABLE {{db}}.CaseUpperCaseLower_Old (i int) {using}",
        "ALTER TABLE {db}.CaseUpperCaseLower_Old RENAME TO {db}.CaseUpperCaseLower",
        f"CREATE TABLE {{db}}.src_tbl4 (c0 INT) {using}",
        "USE {db}",
        "ALTER TABLE src_tbl4 RENAME TO dst_tbl4",
        "USE default")) for using in USINGS),
    # DropTableSuiteBase: basic, IF EXISTS twice, IF EXISTS in a database that does not exist
    *(Case(f"drop_table_suite_{_suffix(using)}", (
        f"CREATE TABLE {{db}}.tbl (c int) {using}",
        "DROP TABLE {db}.tbl",
        f"CREATE TABLE {{db}}.tbl (c int) {using}",
        "DROP TABLE IF EXISTS {db}.tbl",
        "DROP TABLE IF EXISTS {db}.tbl",
        "DROP TABLE IF EXISTS {db}_non_existent_db.tbl")) for using in USINGS),
    # CreateNamespaceSuiteBase, DropNamespaceSuiteBase (and v1's), AlterNamespaceSetPropertiesSuiteBase
    Case("namespace_suites", (
        "CREATE NAMESPACE {db}_ns",
        "CREATE NAMESPACE IF NOT EXISTS {db}_ns",
        "DROP NAMESPACE {db}_ns",
        "CREATE NAMESPACE {db}_ns LOCATION '{root}/ns_location'",
        "DROP NAMESPACE {db}_ns",
        "DROP NAMESPACE IF EXISTS {db}_unknown",
        "CREATE NAMESPACE {db}_ns",
        "CREATE TABLE {db}_ns.table (id bigint) USING HIVE",
        "DROP TABLE {db}_ns.table",
        "CREATE TABLE {db}_ns.table (id bigint) USING parquet",
        "DROP NAMESPACE {db}_ns CASCADE",
        "CREATE NAMESPACE {db}_ns",
        "USE {db}_ns",
        "DROP NAMESPACE {db}_ns",
        "USE default",
        "CREATE NAMESPACE {db}_AAA",
        "CREATE NAMESPACE {db}_bbb",
        "DROP NAMESPACE {db}_aaa",
        "DROP NAMESPACE {db}_bbb",
        "CREATE NAMESPACE {db}_ns",
        "ALTER NAMESPACE {db}_ns SET PROPERTIES ('a'='a', 'b'='b', 'c'='c')",
        "ALTER DATABASE {db}_ns SET PROPERTIES ('d'='d')",
        "DROP NAMESPACE {db}_ns",
        "CREATE NAMESPACE {db}_ns WITH PROPERTIES ('a'='a','b'='b','c'='c')",
        "ALTER NAMESPACE {db}_ns SET PROPERTIES ('a'='b', 'b'='a')")),
    # AlterTableDropPartitionSuiteBase (and v1's): one, several, multi-part, case-insensitive keys, IF EXISTS with one
    # missing, null, PURGE
    *(Case(f"drop_partition_suite_{_suffix(using)}", (
        f"CREATE TABLE {{db}}.tbl (id bigint, data string) {using} PARTITIONED BY (id)",
        "ALTER TABLE {db}.tbl ADD PARTITION (id=1) LOCATION 'loc'",
        "ALTER TABLE {db}.tbl DROP PARTITION (id = 1)",
        "ALTER TABLE {db}.tbl ADD PARTITION (id=1) LOCATION 'loc'",
        "ALTER TABLE {db}.tbl DROP IF EXISTS PARTITION (id = 1)",
        "ALTER TABLE {db}.tbl ADD PARTITION (id=1) LOCATION 'loc' PARTITION (id=2) LOCATION 'loc1'",
        "ALTER TABLE {db}.tbl DROP PARTITION (id = 1), PARTITION (id = 2)",
        "ALTER TABLE {db}.tbl ADD PARTITION (id=1) LOCATION 'loc' PARTITION (id=2) LOCATION 'loc1'",
        "ALTER TABLE {db}.tbl DROP IF EXISTS PARTITION (id = 1), PARTITION (id = 2)",
        "ALTER TABLE {db}.tbl ADD PARTITION (ID=1) LOCATION 'loc1'",
        "ALTER TABLE {db}.tbl DROP PARTITION (id = 1)",
        "ALTER TABLE {db}.tbl ADD PARTITION (id=1) LOCATION 'loc'",
        "ALTER TABLE {db}.tbl DROP IF EXISTS PARTITION (id=1), PARTITION (id=2)",
        "ALTER TABLE {db}.tbl ADD PARTITION (id = 1)",
        "ALTER TABLE {db}.tbl DROP PARTITION (id = 1) PURGE",
        f"CREATE TABLE {{db}}.mp (id bigint, a int, b string) {using} PARTITIONED BY (a, b)",
        "ALTER TABLE {db}.mp ADD PARTITION (a = 2, b = 'abc')",
        "ALTER TABLE {db}.mp DROP PARTITION (a = 2, b = 'abc')",
        "ALTER TABLE {db}.mp ADD PARTITION (a = 2, b = 'abc')",
        "ALTER TABLE {db}.mp DROP IF EXISTS PARTITION (a = 2, b = 'abc')",
        f"CREATE TABLE {{db}}.nul (col1 INT, p1 STRING) {using} PARTITIONED BY (p1)",
        "ALTER TABLE {db}.nul ADD PARTITION (p1 = null)",
        "ALTER TABLE {db}.nul DROP PARTITION (p1 = null)")) for using in USINGS),
    # AlterTableDropPartitionSuiteBase's own USING: typed literals (SPARK-33474), numbers as strings (SPARK-41982), names
    # to escape (SPARK-42480, its RENAME PARTITION left out)
    Case("drop_partition_typed", (
        "CREATE TABLE {db}.tbl(name STRING, part DATE) USING PARQUET PARTITIONED BY (part)",
        "ALTER TABLE {db}.tbl ADD PARTITION(part = date'2020-01-01')",
        "ALTER TABLE {db}.tbl DROP PARTITION (part = date'2020-01-01')",
        "CREATE TABLE {db}.tb2(name STRING, age INT) using orc PARTITIONED BY (dt STRING)",
        "ALTER TABLE {db}.tb2 ADD PARTITION(dt = 08)",
        "ALTER TABLE {db}.tb2 DROP PARTITION (dt = 08)",
        "ALTER TABLE {db}.tb2 ADD PARTITION(dt = 08)",
        "ALTER TABLE {db}.tb2 DROP PARTITION (dt = 8)",
        "CREATE TABLE {db}.tb3(name STRING, age INT) USING PARQUET PARTITIONED BY (region STRING)",
        "ALTER TABLE {db}.tb3 ADD PARTITION (region='=reg1') LOCATION 'loc1'",
        "ALTER TABLE {db}.tb3 ADD PARTITION (region='reg?2') LOCATION 'loc2'",
        "ALTER TABLE {db}.tb3 DROP PARTITION (region='reg?2')")),
    # AlterTableSetSerdeSuite: a data source table's serde properties (v1), a Hive table's serde (sql/hive), made by
    # Spark as the suite makes it (STORED AS INPUTFORMAT .. OUTPUTFORMAT, which the catalog does not take)
    Case("set_serde_suite_datasource", (
        "CREATE TABLE {db}.tbl (col1 int, col2 string, a int, b int) USING parquet PARTITIONED BY (a, b)",
        "ALTER TABLE {db}.tbl SET SERDEPROPERTIES ('k' = 'vvv', 'kay' = 'vee')",
        "ALTER TABLE {db}.tbl SET SERDEPROPERTIES ('kay' = 'veee')")),
    Case("set_serde_suite_hive", made_by_spark=(
        "CREATE TABLE {db}.tbl (col1 int, col2 string, a int, b int) PARTITIONED BY (a, b) "
        "ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe' "
        "STORED AS INPUTFORMAT 'org.apache.hadoop.mapred.SequenceFileInputFormat' "
        "OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat'",), statements=(
        "ALTER TABLE {db}.tbl SET SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'",
        "ALTER TABLE {db}.tbl SET SERDE 'org.apache.hadoop.hive.serde2.columnar.LazyBinaryColumnarSerDe' "
        "WITH SERDEPROPERTIES ('k' = 'v', 'kay' = 'vee')",
        "ALTER TABLE {db}.tbl SET SERDEPROPERTIES ('k' = 'vvv', 'kay' = 'vee')",
        "ALTER TABLE {db}.tbl SET SERDEPROPERTIES ('kay' = 'veee')")),
    # AlterTableSetTblPropertiesSuiteBase, AlterTableUnsetTblPropertiesSuiteBase (a key the table lacks is no error)
    *(Case(f"tblproperties_suites_{_suffix(using)}", (
        f"CREATE TABLE {{db}}.tbl (col1 int, col2 string, a int, b int) {using}",
        "ALTER TABLE {db}.tbl SET TBLPROPERTIES ('k1' = 'v1', 'k2' = 'v2', 'k3' = 'v3')",
        "ALTER TABLE {db}.tbl SET TBLPROPERTIES ('k1' = 'v1', 'k2' = 'v8')",
        "ALTER TABLE {db}.tbl SET TBLPROPERTIES ('k1' = 'v1', 'k2' = 'v2', 'k3' = 'v3', 'k4' = 'v4')",
        "ALTER TABLE {db}.tbl UNSET TBLPROPERTIES ('k1')",
        "ALTER TABLE {db}.tbl UNSET TBLPROPERTIES ('k3', 'k5')",
        "ALTER TABLE {db}.tbl UNSET TBLPROPERTIES IF EXISTS ('k2', 'k3')")) for using in USINGS),
    # describe.sql's table (bucketed: made by Spark) and its ALTERs; describe-table-after-alter-table.sql
    Case("describe_inputs", made_by_spark=(DESCRIBED,), statements=(
        "ALTER TABLE {db}.t SET TBLPROPERTIES (e = '3')",
        "ALTER TABLE {db}.t ADD PARTITION (c='Us', d=1)",
        "ALTER TABLE {db}.t UNSET TBLPROPERTIES (e)",
        "ALTER TABLE {db}.t UNSET TBLPROPERTIES (comment)")),
    Case("describe_after_alter_inputs", (
        "CREATE TABLE {db}.table_with_comment (a STRING, b INT, c STRING, d STRING) USING parquet COMMENT 'added'",
        'ALTER TABLE {db}.table_with_comment SET TBLPROPERTIES("comment"= "modified comment", "type"= "parquet")',
        "DROP TABLE {db}.table_with_comment",
        "CREATE TABLE {db}.table_comment (a STRING, b INT) USING parquet",
        'ALTER TABLE {db}.table_comment SET TBLPROPERTIES(comment = "added comment")',
        "ALTER TABLE {db}.table_comment UNSET TBLPROPERTIES IF EXISTS ('comment')",
        "DROP TABLE {db}.table_comment")),
    # show-tblproperties.sql, show-tables.sql, show_columns.sql: their tables (the statements that read them back are
    # SHOWN_BY_BOTH's)
    Case("show_inputs", (
        "CREATE TABLE {db}.tbl (a INT, b STRING, c INT) USING parquet TBLPROPERTIES('p1'='v1', 'p2'='v2')",
        "DROP TABLE {db}.tbl",
        *SHOW_TABLES, *SHOW_COLUMNS,
        "DROP TABLE {db}.showcolumn1",
        "DROP TABLE {db}.showColumn2")),
]
"""Spark's own DDL test statements the catalog runs: after each, the two metastores must agree."""
