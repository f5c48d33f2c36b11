"""The catalog's DDL leaves the metastore as Spark's own Hive DDL leaves it, statement by statement.

Each case runs once through Spark's own Hive support (``spark.sql`` on a database of its own) and once
through the catalog's SQL session on another; after every statement the two databases' metastore objects
are compared field by field (:mod:`tests.support.ddl_parity` lists the few fields ignored, and why). The
statements are of the kinds Spark's sql-tests inputs, its v1 command suites and Hive's clientpositive
``.q`` files run. What Spark refuses in its tests the catalog refuses, and its SHOW/DESCRIBE statements answer
through the catalog what they answer through Spark, on the same tables (:mod:`tests.support.spark_refusals`).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.errors import HmsCatalogError
from hms_catalog.execution import Session
from hms_catalog.execution.browse_commands import DESCRIBE_COLUMNS
from tests.support.ddl_parity import Case, Side, describe, differences, run_both, snapshot
from tests.support.sessions import open_catalog
from tests.support.spark_ddl_cases import SPARK_CASES
from tests.support.spark_refusals import REFUSED_BY_BOTH, SHOWN_BY_BOTH, Refused, Shown

_numbers = itertools.count(1)

_DELIMITED = ("ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' ESCAPED BY '\\\\' COLLECTION ITEMS TERMINATED BY '#' "
              "MAP KEYS TERMINATED BY ':' LINES TERMINATED BY '\\n' NULL DEFINED AS 'NULL'")
_COLUMNS = "id INT COMMENT 'the key', name STRING, amount DECIMAL(10,2), tags ARRAY<STRING>, attrs MAP<STRING,INT>"

CASES = [
    # databases and namespaces
    Case("database", ("CREATE DATABASE {db}_x COMMENT 'scratch' WITH DBPROPERTIES ('team' = 'etl')",
                      "ALTER DATABASE {db}_x SET DBPROPERTIES ('stage' = 'test')",
                      "DROP DATABASE {db}_x"), connector=True),
    Case("database_location", ("CREATE DATABASE IF NOT EXISTS {db}_x LOCATION '{root}/x.db'",
                               "CREATE DATABASE IF NOT EXISTS {db}_x",
                               "DROP DATABASE IF EXISTS {db}_x CASCADE")),
    Case("namespace", ("CREATE NAMESPACE IF NOT EXISTS {db}_n COMMENT 'ns' LOCATION '{root}/n' WITH PROPERTIES ('a' = '1')",
                       "ALTER NAMESPACE {db}_n SET PROPERTIES ('b' = '2')",
                       "ALTER NAMESPACE {db}_n SET DBPROPERTIES ('a' = '3')",
                       "CREATE TABLE {db}_n.t (id INT) STORED AS PARQUET",
                       "DROP NAMESPACE IF EXISTS {db}_n CASCADE",
                       "DROP NAMESPACE IF EXISTS {db}_n RESTRICT"), connector=True),
    Case("schema", ("CREATE SCHEMA {db}_s WITH DBPROPERTIES ('k' = 'v')", "DROP SCHEMA {db}_s RESTRICT")),
    # a 'comment' property: the description unless COMMENT gives one, never a parameter; ALTER leaves the description
    Case("database_comment_property", ("CREATE DATABASE {db}_x WITH DBPROPERTIES ('comment' = 'via props', 'k' = 'v')",
                                       "CREATE DATABASE {db}_n COMMENT 'c' WITH DBPROPERTIES ('comment' = 'other')",
                                       "ALTER DATABASE {db}_x SET DBPROPERTIES ('comment' = 'new', 'k2' = 'v2')")),
    # Hive tables in every storage format
    *(Case(f"stored_as_{fmt.lower()}", (f"CREATE TABLE {{db}}.t ({_COLUMNS}) STORED AS {fmt}",))
      for fmt in ("TEXTFILE", "PARQUET", "ORC", "AVRO", "SEQUENCEFILE", "RCFILE")),
    Case("default_storage", ("CREATE TABLE {db}.t (id INT, name STRING)",)),
    Case("delimited_every_clause", (f"CREATE TABLE {{db}}.t ({_COLUMNS}) {_DELIMITED} STORED AS TEXTFILE",), connector=True),
    Case("delimited_fields", ("CREATE TABLE {db}.t (a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY '|'",)),
    Case("delimited_null", ("CREATE TABLE {db}.t (a INT) ROW FORMAT DELIMITED NULL DEFINED AS ''",)),
    Case("serde", ("CREATE TABLE {db}.t (a STRING, b STRING) ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.OpenCSVSerde' "
                   "WITH SERDEPROPERTIES ('separatorChar' = ',', 'quoteChar' = '\"') STORED AS TEXTFILE",)),
    Case("serde_lazy", ("CREATE TABLE {db}.t (a STRING) ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe' "
                        "WITH SERDEPROPERTIES ('field.delim' = ';')",)),
    Case("partitioned_hive", (f"CREATE TABLE {{db}}.t ({_COLUMNS}) COMMENT 'facts' PARTITIONED BY (dt STRING, h INT) STORED AS PARQUET "
                              "TBLPROPERTIES ('k' = 'v', 'parquet.compression' = 'SNAPPY')",
                              "ALTER TABLE {db}.t ADD PARTITION (dt = '2024-01-01', h = 1)",
                              "ALTER TABLE {db}.t ADD IF NOT EXISTS PARTITION (dt = '2024-01-02', h = 2) "
                              "PARTITION (dt = '2024-01-03', h = 3) LOCATION '{root}/p3'",
                              "ALTER TABLE {db}.t PARTITION (dt = '2024-01-01', h = 1) SET LOCATION '{root}/moved'",
                              "ALTER TABLE {db}.t DROP PARTITION (dt = '2024-01-02', h = 2)",
                              "ALTER TABLE {db}.t DROP IF EXISTS PARTITION (dt = 'none', h = 9)")),
    Case("relative_partition_location", ("CREATE TABLE {db}.t (a INT) PARTITIONED BY (p STRING) STORED AS PARQUET",
                                         "ALTER TABLE {db}.t ADD PARTITION (p = 'x') LOCATION 'x/y'")),
    Case("external", ("CREATE EXTERNAL TABLE {db}.t (a INT, b STRING) PARTITIONED BY (p STRING) STORED AS ORC LOCATION '{root}/ext'",
                      "ALTER TABLE {db}.t ADD PARTITION (p = 'a')",
                      "ALTER TABLE {db}.t SET LOCATION '{root}/ext2'")),
    # Spark data source tables
    *(Case(f"using_{fmt}", (f"CREATE TABLE {{db}}.t (id INT, name STRING, dt STRING) USING {fmt}",))
      for fmt in ("parquet", "orc", "csv", "json")),
    Case("using_partitioned", ("CREATE TABLE {db}.t (id INT, name STRING, dt STRING, h INT) USING parquet PARTITIONED BY (dt, h) "
                               "COMMENT 'c' TBLPROPERTIES ('k' = 'v')",
                               "ALTER TABLE {db}.t ADD PARTITION (dt = 'a', h = 1)",
                               "ALTER TABLE {db}.t DROP PARTITION (dt = 'a', h = 1)"), connector=True),
    Case("using_options", ("CREATE TABLE {db}.t (id INT, name STRING) USING csv OPTIONS (header 'true', sep '|')",), connector=True),
    Case("using_location", ("CREATE TABLE {db}.t (id INT, dt STRING) USING orc PARTITIONED BY (dt) "
                                                "LOCATION '{root}/loc'",), connector=True),
    Case("recover_partitions", ("CREATE TABLE {db}.t (id INT, dt STRING) USING parquet PARTITIONED BY (dt) LOCATION '{root}/r'",
                                "ALTER TABLE {db}.t RECOVER PARTITIONS",
                                "MSCK REPAIR TABLE {db}.t")),
    Case("default_partitioned", ("CREATE TABLE {db}.t (a INT, b STRING) PARTITIONED BY (p STRING, q INT)",
                                 "ALTER TABLE {db}.t ADD PARTITION (p = 'x', q = 1)"), connector=True),
    Case("using_typed_partitions", ("CREATE TABLE {db}.t (a INT) USING orc PARTITIONED BY (p STRING)",)),
    Case("using_long_schema", ("CREATE TABLE {db}.t (" + ", ".join(f"column_with_a_long_name_{i} STRUCT<a: INT, b: STRING>"
                                                                  for i in range(60)) + ") USING parquet",)),
    Case("hive_long_schema", ("CREATE TABLE {db}.t (" + ", ".join(f"column_with_a_long_name_{i} DECIMAL(12,4) COMMENT 'c{i}'"
                                                                 for i in range(60)) + ") STORED AS ORC",)),
    Case("hive_location", ("CREATE TABLE {db}.t (a INT) STORED AS PARQUET LOCATION '{root}/h'",)),
    Case("hive_types", ("CREATE TABLE {db}.t (a CHAR(5), b VARCHAR(10), c DATE, d TIMESTAMP, e BINARY, f BOOLEAN, g TINYINT, "
                        "h SMALLINT, i BIGINT, j FLOAT, k STRUCT<x: INT COMMENT 'inner', y: ARRAY<MAP<STRING, DOUBLE>>>) STORED AS ORC",)),
    Case("source_types", ("CREATE TABLE {db}.t (a CHAR(5), b VARCHAR(10), c DATE, d TIMESTAMP, e BINARY, f BOOLEAN, "
                          "g DECIMAL(38, 18), k STRUCT<x: INT, y: ARRAY<STRING>>) USING parquet",), connector=True),
    Case("names_as_written", ("CREATE TABLE {db}.t (Id INT, Name STRING, Dt STRING) USING parquet PARTITIONED BY (Dt)",
                              "CREATE TABLE {db}.h (Id INT, Name STRING) PARTITIONED BY (Dt STRING) STORED AS PARQUET")),
    Case("not_null", ("CREATE TABLE {db}.t (a INT NOT NULL, b STRING) USING parquet",)),
    Case("if_not_exists", ("CREATE TABLE IF NOT EXISTS {db}.t (a INT) STORED AS ORC",
                           "CREATE TABLE IF NOT EXISTS {db}.t (a INT, b INT) STORED AS ORC")),
    Case("comment_property", ("CREATE TABLE {db}.t (a INT) USING orc TBLPROPERTIES ('comment' = 'via props', 'x' = '1')",)),
    Case("integer_partitions", ("CREATE TABLE {db}.t (a INT) PARTITIONED BY (y INT, m STRING) STORED AS PARQUET",
                                "ALTER TABLE {db}.t ADD PARTITION (y = 2024, m = '01') PARTITION (y = 2025, m = '02')",
                                "ALTER TABLE {db}.t DROP PARTITION (y = 2024, m = '01') PURGE")),
    # CREATE TABLE LIKE
    Case("like", ("CREATE TABLE {db}.src (a INT, b STRING) PARTITIONED BY (p STRING) STORED AS PARQUET TBLPROPERTIES ('k' = 'v')",
                  "CREATE TABLE {db}.t LIKE {db}.src",
                  "CREATE TABLE IF NOT EXISTS {db}.t LIKE {db}.src")),
    Case("like_properties", ("CREATE TABLE {db}.src (a INT, b STRING) STORED AS ORC",
                             "CREATE TABLE {db}.t LIKE {db}.src TBLPROPERTIES ('x' = 'y')",
                             "CREATE TABLE {db}.t2 LIKE {db}.src LOCATION '{root}/t2' TBLPROPERTIES ('x' = 'z')")),
    Case("like_stored_as", ("CREATE TABLE {db}.src (a INT, b STRING) STORED AS ORC",
                            "CREATE TABLE {db}.t LIKE {db}.src STORED AS PARQUET",
                            "CREATE TABLE {db}.t2 LIKE {db}.src ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE")),
    Case("like_using", ("CREATE TABLE {db}.src (a INT, p STRING) USING parquet PARTITIONED BY (p)",
                        "CREATE TABLE {db}.t LIKE {db}.src",
                        "CREATE TABLE {db}.t2 LIKE {db}.src USING orc")),
    # ALTER TABLE
    Case("add_columns", ("CREATE TABLE {db}.t (a INT) PARTITIONED BY (p STRING) STORED AS PARQUET",
                         "ALTER TABLE {db}.t ADD PARTITION (p = 'x')",
                         "ALTER TABLE {db}.t ADD COLUMNS (b STRING COMMENT 'bee', c DOUBLE)")),
    Case("add_columns_source", ("CREATE TABLE {db}.t (a INT, p STRING) USING parquet PARTITIONED BY (p)",
                                "ALTER TABLE {db}.t ADD COLUMNS (b STRING)"), connector=True),
    Case("spark_change_comment", ("CREATE TABLE {db}.t (a INT, b STRING) USING parquet",
                                  "ALTER TABLE {db}.t ALTER COLUMN a COMMENT 'the a'",
                                  "ALTER TABLE {db}.t CHANGE COLUMN b COMMENT 'the b'"), connector=True),
    Case("serde_properties", ("CREATE TABLE {db}.t (a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ','",
                              "ALTER TABLE {db}.t SET SERDEPROPERTIES ('field.delim' = '|', 'extra' = 'x')",
                              "ALTER TABLE {db}.t SET SERDE 'org.apache.hadoop.hive.serde2.OpenCSVSerde' "
                              "WITH SERDEPROPERTIES ('separatorChar' = ';')")),
    Case("hive_column_comment", ("CREATE TABLE {db}.t (a INT, b STRING) PARTITIONED BY (p STRING) STORED AS ORC",
                                 "ALTER TABLE {db}.t ADD PARTITION (p = 'x')",
                                 "ALTER TABLE {db}.t ALTER COLUMN a COMMENT 'the a'",
                                 "ALTER TABLE {db}.t CHANGE COLUMN b b STRING COMMENT 'the b'")),
    Case("properties", ("CREATE TABLE {db}.t (a INT) STORED AS PARQUET",
                        "ALTER TABLE {db}.t SET TBLPROPERTIES ('a' = '1', 'b' = '2', 'comment' = 'via property')",
                        "ALTER TABLE {db}.t UNSET TBLPROPERTIES ('a')",
                        "ALTER TABLE {db}.t UNSET TBLPROPERTIES IF EXISTS ('a', 'nope')"), connector=True),
    Case("rename", ("CREATE TABLE {db}.t (a INT) STORED AS PARQUET",
                    "ALTER TABLE {db}.t RENAME TO {db}.t2")),
    Case("rename_source", ("CREATE TABLE {db}.t (a INT, p STRING) USING parquet PARTITIONED BY (p)",
                           "ALTER TABLE {db}.t RENAME TO {db}.t2"), connector=True),
    Case("set_location", ("CREATE TABLE {db}.t (a INT) USING parquet",
                          "ALTER TABLE {db}.t SET LOCATION '{root}/elsewhere'"), connector=True),
    Case("drop", ("CREATE TABLE {db}.t (a INT) STORED AS PARQUET",
                  "DROP TABLE {db}.t",
                  "DROP TABLE IF EXISTS {db}.t",
                  "CREATE TABLE {db}.t (a INT) USING parquet",
                  "DROP TABLE {db}.t PURGE"), connector=True),
]
"""Statements both Spark and the catalog take: after each, the two metastores must agree."""

REFUSED = [
    # The catalog refuses these with a clear error rather than write something other than Spark's table.
    "CREATE TABLE {db}.b (a INT, b STRING) USING parquet CLUSTERED BY (a) SORTED BY (b) INTO 4 BUCKETS",
    "CREATE TABLE {db}.b (a INT, b STRING) CLUSTERED BY (a) INTO 4 BUCKETS STORED AS ORC",
    "CREATE TABLE {db}.b (a INT, b STRING) SKEWED BY (a) ON (1, 2) STORED AS ORC",
    "ALTER TABLE {db}.t SET FILEFORMAT ORC",
    "ALTER TABLE {db}.t PARTITION (p = 'a') SET SERDEPROPERTIES ('k' = 'v')",
    "ALTER TABLE {db}.t PARTITION (p = 'a') RENAME TO PARTITION (p = 'b')",
]


@pytest.fixture(scope="module")
def catalog_session(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str) -> Iterator[Session]:
    session = open_catalog(tmp_path_factory.mktemp("parity") / "home", metastore_uri)
    session.run_one("SWITCH hive")
    yield session
    session.manager.close()


def _sides(spark: Any, session: Session, tmp_path: Path) -> tuple[Side, Side]:
    number = next(_numbers)
    reference = Side("spark", f"sp{os.getpid()}c{number}", tmp_path / "spark", lambda text: spark.sql(text).collect())
    tested = Side("catalog", f"ct{os.getpid()}c{number}", tmp_path / "catalog", session.run_one)
    for side in (reference, tested):
        side.run(f"CREATE DATABASE {side.database}")
    return reference, tested


def _drop(spark: Any, session: Session, admin: Any, *sides: Side) -> None:
    """The sides' databases (``{db}`` and every ``{db}_*`` a case made), and the current database back to ``default``.
    Dropped by the metastore call Spark's ``DROP DATABASE ... CASCADE`` makes, without Spark's statements around it:
    a clean-up, not a statement under test (the names are never used again, so no cache of Spark's can go stale)."""
    spark.sql("USE default")
    session.run_one("USE hive.default")
    _drop_databases(admin, *sides)


def _drop_databases(admin: Any, *sides: Side) -> None:
    """Each side's ``{db}`` and ``{db}_*`` databases, with their tables (``drop_database``, deleting data, cascading)."""
    call = admin.pool.call
    for side in sides:
        for database in call("get_databases", f"{side.database}*"):
            if database == side.database or database.startswith(side.database + "_"):
                call("drop_database", database, True, True)


CONNECTOR_CASES = [case for case in CASES + SPARK_CASES if case.connector]
"""The subset Spark's v2 DDL also takes (it refuses CREATE TABLE LIKE and a partition's SET LOCATION on v2 tables)."""


@pytest.fixture(scope="module")
def connector(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str, spark: Any) -> Iterator[str]:
    """The service's catalog ``parity``, registered in the test session's Spark through the connector."""
    from spark_connector import catalog_conf
    from tests.support.service import served

    with served(tmp_path_factory.mktemp("parity_service") / "home") as running:
        client = running.client()
        client.create_catalog("parity", {"type": "hms", "hive.metastore.uris": metastore_uri})
        client.close()
        settings = catalog_conf("parity", running.url, running.token)
        for key, value in settings.items():
            spark.conf.set(key, value)
        try:
            yield "parity"
        finally:
            for key in settings:
                spark.conf.unset(key)


@pytest.mark.slow
@pytest.mark.parametrize("case", CONNECTOR_CASES, ids=[case.name for case in CONNECTOR_CASES])
def test_the_connector_leaves_what_spark_leaves(case: Case, spark: Any, connector: str, admin: Any, tmp_path: Path) -> None:
    """The same statements through the Spark connector (Spark's v2 DDL, sent to the service) on a database of its own."""
    number = next(_numbers)
    reference = Side("spark", f"sp{os.getpid()}c{number}", tmp_path / "spark", lambda text: spark.sql(text).collect())
    tested = Side("connector", f"cn{os.getpid()}c{number}", tmp_path / "connector", lambda text: spark.sql(text).collect(),
                  prefix=f"{connector}.")
    for side in (reference, tested):
        side.run(f"CREATE DATABASE {side.prefix}{side.database}")
    try:
        found = run_both(case.statements, reference, tested, admin)
        assert not found, "the connector's metastore objects differ from Spark's:\n" + describe(found)
    finally:
        _drop_databases(admin, reference, tested)


SHOWN = [
    ("s", "(a INT, b STRING COMMENT 'bee', p STRING) USING parquet PARTITIONED BY (p) TBLPROPERTIES ('k' = 'v')"),
    ("c", "(a INT, b STRING) USING csv OPTIONS (header 'true', sep '|') TBLPROPERTIES ('k' = 'v')"),
    ("x", "(a INT) USING orc LOCATION '{root}/x' TBLPROPERTIES ('k' = 'v')"),
    ("h", "(a INT, b STRING) PARTITIONED BY (p STRING) STORED AS PARQUET TBLPROPERTIES ('k' = 'v')"),
    ("d", "(a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE TBLPROPERTIES ('k' = 'v')"),
]
"""Tables Spark makes, shown through the connector as Spark shows its own (the first three are data source tables)."""


@pytest.mark.slow
def test_the_connector_shows_a_table_as_spark_shows_its_own(spark: Any, connector: str, catalog_session: Session, admin: Any,
                                                            tmp_path: Path) -> None:
    """SHOW TBLPROPERTIES through the connector lists what Spark's own lists for the table (not the catalog's bookkeeping),
    and the statement Spark's SHOW CREATE TABLE writes through it (with Spark 4's ``STRING COLLATE UTF8_BINARY``,
    which Spark writes whatever the table says) recreates a data source table when the service runs it."""
    number = next(_numbers)
    original = Side("spark", f"sp{os.getpid()}c{number}", tmp_path, lambda text: spark.sql(text).collect())
    copy = Side("service", f"ct{os.getpid()}c{number}", tmp_path, catalog_session.run_one)
    for side in (original, copy):
        side.run(f"CREATE DATABASE {side.database}")
    try:
        for name, columns in SHOWN:
            original.run(original.statement(f"CREATE TABLE {{db}}.{name} {columns}"))
            own = spark.sql(f"SHOW TBLPROPERTIES spark_catalog.{original.database}.{name}").collect()
            assert spark.sql(f"SHOW TBLPROPERTIES {connector}.{original.database}.{name}").collect() == own, name
        for name, _ in SHOWN:
            if name in ("h", "d"):  # Hive tables: Spark's v2 SHOW CREATE TABLE has no STORED AS to write
                original.run(f"DROP TABLE {original.database}.{name}")
                continue
            text = spark.sql(f"SHOW CREATE TABLE {connector}.{original.database}.{name}").collect()[0][0]
            copy.run(text.replace(f"{connector}.{original.database}.{name}", f"hive.{copy.database}.{name}", 1))
        found = differences(snapshot(admin, original), snapshot(admin, copy))
        assert not found, "the table the service makes of the connector's SHOW CREATE TABLE differs:\n" + describe(found)
    finally:
        for side in (original, copy):
            spark.sql(f"DROP DATABASE IF EXISTS {side.database} CASCADE")


@pytest.mark.parametrize("case", CASES + SPARK_CASES, ids=[case.name for case in CASES + SPARK_CASES])
def test_the_catalog_leaves_what_spark_leaves(case: Case, spark: Any, catalog_session: Session, admin: Any,
                                              tmp_path: Path) -> None:
    reference, tested = _sides(spark, catalog_session, tmp_path)
    try:
        for template in case.made_by_spark:  # tables the catalog does not make (bucketed ones), on both sides
            for side in (reference, tested):
                spark.sql(side.statement(template)).collect()
        found = run_both(case.statements, reference, tested, admin)
        assert not found, "the catalog's metastore objects differ from Spark's:\n" + describe(found)
    finally:
        _drop(spark, catalog_session, admin, reference, tested)


@pytest.mark.parametrize("statement", REFUSED)
def test_a_statement_the_catalog_cannot_carry_out_is_refused(statement: str, catalog_session: Session, admin: Any) -> None:
    database = f"ct{os.getpid()}r{next(_numbers)}"
    catalog_session.run_one(f"CREATE DATABASE {database}")
    try:
        with pytest.raises(HmsCatalogError, match="not supported"):
            catalog_session.run_one(statement.replace("{db}", database))
        assert admin.pool.call("get_all_tables", database) == []
    finally:
        catalog_session.run_one(f"DROP DATABASE {database} CASCADE")


@pytest.mark.parametrize("case", REFUSED_BY_BOTH, ids=[case.name for case in REFUSED_BY_BOTH])
def test_what_spark_refuses_the_catalog_refuses_saying_why(case: Refused, spark: Any, catalog_session: Session, admin: Any,
                                                          tmp_path: Path) -> None:
    """Spark's own DDL refuses the statement; the catalog refuses it too, saying what is wrong, and neither side changed."""
    reference, tested = _sides(spark, catalog_session, tmp_path)
    try:
        assert not run_both(case.setup, reference, tested, admin)
        with pytest.raises(Exception) as refused_by_spark:
            reference.run(reference.statement(case.statement))
        assert not isinstance(refused_by_spark.value, HmsCatalogError), refused_by_spark.value
        with pytest.raises(HmsCatalogError, match=case.reason):
            tested.run(tested.statement(case.statement))
        assert not differences(snapshot(admin, reference), snapshot(admin, tested))
    finally:
        _drop(spark, catalog_session, admin, reference, tested)


def _spark_answer(rows: list[Any], columns: tuple[str, ...], catalog_name: str) -> list[tuple[Any, ...]]:
    """Spark's answer in the columns the catalog's answer has: SHOW TABLES' table names, SHOW COLUMNS' names, SHOW
    TBLPROPERTIES' pairs (Spark names its catalog ``spark_catalog`` where the catalog names itself), DESCRIBE's
    columns up to its ``# Partition Information`` (name, type and comment; a column without one is ``''`` here)."""
    if columns == ("Table",):
        return [(row.tableName,) for row in rows if not row.isTemporary]
    if columns == ("Column",):
        return [(row.col_name,) for row in rows]
    if columns == ("key", "value"):
        return [(row.key, row.value.replace("Table spark_catalog.", f"Table {catalog_name}.")) for row in rows]
    if columns == DESCRIBE_COLUMNS:
        described = []
        for row in rows:
            if not row.col_name or row.col_name.startswith("#"):
                break
            described.append((row.col_name, row.data_type, row.comment or ""))
        return described
    raise AssertionError(f"no Spark columns to compare with {columns}")


def _catalog_answer(result: Any) -> list[tuple[Any, ...]]:
    if tuple(result.columns) == DESCRIBE_COLUMNS:
        return [(field, kind, comment) for field, kind, _, _, comment in result.rows]
    return [tuple(row) for row in result.rows]


@pytest.mark.parametrize("case", SHOWN_BY_BOTH, ids=[case.name for case in SHOWN_BY_BOTH])
def test_the_catalog_shows_a_table_as_spark_shows_it(case: Shown, spark: Any, catalog_session: Session, tmp_path: Path) -> None:
    """SHOW TABLES, SHOW COLUMNS, SHOW TBLPROPERTIES and DESCRIBE of Spark's tests, on the tables Spark made, in the
    current database as Spark's tests run them: the catalog answers what Spark answers."""
    side = Side("spark", f"sp{os.getpid()}c{next(_numbers)}", tmp_path, lambda text: spark.sql(text).collect())
    spark.sql(f"CREATE DATABASE {side.database}")
    try:
        for template in case.made_by_spark:
            spark.sql(side.statement(template)).collect()
        spark.sql(f"USE {side.database}")
        catalog_session.run_one(f"USE hive.{side.database}")
        for template in case.statements:
            statement = side.statement(template)
            ours = catalog_session.run_one(statement)
            theirs = _spark_answer(spark.sql(statement).collect(), tuple(ours.columns), "hive")
            assert _catalog_answer(ours) == theirs, statement
    finally:
        spark.sql("USE default")
        catalog_session.run_one("USE hive.default")
        spark.sql(f"DROP DATABASE IF EXISTS {side.database} CASCADE")
