"""SHOW CREATE TABLE recreates the table: the printed statement, run on a fresh name, leaves in the metastore what the
original holds, field by field (:mod:`tests.support.ddl_parity` compares them, with the same few fields ignored).

Each shape is made once by the catalog's own DDL; a table Spark made is the last shape (Spark's SHOW CREATE TABLE of
it is Spark's; the catalog's must recreate it too). Partitions are not a table's definition, so no shape has any.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.execution import Session
from tests.support.ddl_parity import Side, describe, differences, snapshot
from tests.support.sessions import open_catalog
from tests.support.spark_ddl_cases import SPARK_TYPES

_numbers = itertools.count(1)

_DELIMITED = ("ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' ESCAPED BY '\\\\' COLLECTION ITEMS TERMINATED BY '#' "
              "MAP KEYS TERMINATED BY ':' LINES TERMINATED BY '\\n' NULL DEFINED AS 'NULL'")
_COLUMNS = "id INT COMMENT 'the key', name STRING, amount DECIMAL(10,2), tags ARRAY<STRING>, attrs MAP<STRING,INT>"

SHAPES: list[tuple[str, tuple[str, ...]]] = [
    ("hive_default_field_delimiter", ("CREATE TABLE {db}.t (a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY '\\u0001' "
                                      "STORED AS TEXTFILE",)),
    ("hive_octal_delimiters", ("CREATE TABLE {db}.t (a INT, b ARRAY<STRING>) ROW FORMAT DELIMITED FIELDS TERMINATED BY '\\001' "
                               "COLLECTION ITEMS TERMINATED BY '\\002' LINES TERMINATED BY '\\n' STORED AS TEXTFILE",)),
    ("hive_every_delimiter", (f"CREATE TABLE {{db}}.t ({_COLUMNS}) {_DELIMITED} STORED AS TEXTFILE",)),
    ("hive_partitioned_parquet", (f"CREATE TABLE {{db}}.t ({_COLUMNS}) COMMENT 'facts' PARTITIONED BY (dt STRING COMMENT 'day', "
                                  "h INT) STORED AS PARQUET TBLPROPERTIES ('k' = 'v', 'parquet.compression' = 'SNAPPY')",)),
    *((f"hive_{fmt.lower()}", (f"CREATE TABLE {{db}}.t ({_COLUMNS}) PARTITIONED BY (p STRING) STORED AS {fmt}",))
      for fmt in ("TEXTFILE", "ORC", "AVRO", "SEQUENCEFILE", "RCFILE")),
    ("hive_serde", ("CREATE TABLE {db}.t (a STRING, b STRING) ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.OpenCSVSerde' "
                    "WITH SERDEPROPERTIES ('separatorChar' = ',', 'quoteChar' = '\"') STORED AS TEXTFILE",)),
    ("hive_parquet_serde_properties", ("CREATE TABLE {db}.t (a INT) STORED AS PARQUET",
                                       "ALTER TABLE {db}.t SET SERDEPROPERTIES ('k' = 'v')")),
    ("hive_text_serde_properties", ("CREATE TABLE {db}.t (a INT) ROW FORMAT DELIMITED FIELDS TERMINATED BY '|'",
                                    "ALTER TABLE {db}.t SET SERDEPROPERTIES ('extra' = 'x')")),
    ("hive_external", ("CREATE EXTERNAL TABLE {db}.t (a INT) PARTITIONED BY (p STRING) STORED AS ORC LOCATION '{root}/ext'",)),
    ("empty_comments", ("CREATE TABLE {db}.t (a INT COMMENT '', b INT) PARTITIONED BY (p STRING COMMENT '') STORED AS ORC",
                        "CREATE TABLE {db}.s (a INT COMMENT '', b INT) USING parquet")),
    ("spark_type_names", (f"CREATE TABLE {{db}}.t ({SPARK_TYPES}) STORED AS PARQUET",
                          f"CREATE TABLE {{db}}.s ({SPARK_TYPES}) USING parquet")),
    ("using_partitioned", ("CREATE TABLE {db}.t (id INT, name STRING, dt STRING, h INT) USING parquet PARTITIONED BY (dt, h) "
                           "COMMENT 'c' TBLPROPERTIES ('k' = 'v')",)),
    ("using_options", ("CREATE TABLE {db}.t (id INT, name STRING) USING csv OPTIONS (header 'true', sep '|')",
                       "CREATE TABLE {db}.j (id INT, tags ARRAY<STRING>) USING json")),
    ("using_location", ("CREATE TABLE {db}.t (id INT, dt STRING) USING orc PARTITIONED BY (dt) LOCATION '{root}/loc'",)),
    ("provider_as_written", ("CREATE TABLE {db}.t (a INT) USING PARQUET",)),
    ("chars", ("CREATE TABLE {db}.t (a CHAR(5), b VARCHAR(10)) USING parquet", "CREATE TABLE {db}.h (a CHAR(5)) STORED AS ORC")),
    ("after_alter", ("CREATE TABLE {db}.t (a INT, b STRING) PARTITIONED BY (p STRING) STORED AS PARQUET",
                     "ALTER TABLE {db}.t ADD COLUMNS (c DOUBLE COMMENT 'cee')", "ALTER TABLE {db}.t CHANGE b b STRING COMMENT 'bee'",
                     "ALTER TABLE {db}.t SET TBLPROPERTIES ('x' = 'y')")),
]


@pytest.fixture(scope="module")
def catalog_session(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str) -> Iterator[Session]:
    session = open_catalog(tmp_path_factory.mktemp("show_create") / "home", metastore_uri)
    session.run_one("SWITCH hive")
    yield session
    session.manager.close()


def _recreated(session: Session, admin: Any, original: Side, copy: Side) -> list[str]:
    """Each table of ``original`` made again in ``copy`` from its SHOW CREATE TABLE; the differences of the two."""
    for table in sorted(admin.pool.call("get_all_tables", original.database)):
        text = session.run_one(f"SHOW CREATE TABLE {original.database}.{table}").rows[0][0]
        head = f"TABLE hive.{original.database}.{table} ("
        assert head in text.splitlines()[0], text
        copy.run(text.replace(head, f"TABLE hive.{copy.database}.{table} (", 1))
    return differences(_definition(snapshot(admin, original)), _definition(snapshot(admin, copy)))


def _definition(found: dict[str, Any]) -> dict[str, Any]:
    """Without ``spark.sql.partitionProvider``: Spark's own ALTER stamps it on a Hive table (whose partitions are the
    metastore's whatever it says), and no CREATE TABLE writes it; it records what was done to the table, not what it is."""
    for value in found.values():
        if isinstance(value, dict) and isinstance(value.get("parameters"), dict):
            value["parameters"].pop("spark.sql.partitionProvider", None)
    return found


def _sides(session: Session, run: Any, tmp_path: Path) -> tuple[Side, Side]:
    number = next(_numbers)  # one folder for both: an external table's copy is at the original's LOCATION
    original = Side("original", f"sco{os.getpid()}n{number}", tmp_path, run)
    copy = Side("copy", f"scc{os.getpid()}n{number}", tmp_path, session.run_one)
    for side in (original, copy):
        session.run_one(f"CREATE DATABASE {side.database}")
    return original, copy


@pytest.mark.parametrize(("name", "statements"), SHAPES, ids=[name for name, _ in SHAPES])
def test_show_create_table_recreates_the_table(name: str, statements: tuple[str, ...], catalog_session: Session, admin: Any,
                                               tmp_path: Path) -> None:
    original, copy = _sides(catalog_session, catalog_session.run_one, tmp_path)
    try:
        for template in statements:
            original.run(original.statement(template))
        found = _recreated(catalog_session, admin, original, copy)
        assert not found, "the table SHOW CREATE TABLE's statement makes differs from the original:\n" + describe(found)
    finally:
        for side in (original, copy):
            catalog_session.run_one(f"DROP DATABASE IF EXISTS {side.database} CASCADE")


def test_show_create_table_recreates_a_table_spark_made(catalog_session: Session, admin: Any, spark: Any, tmp_path: Path) -> None:
    original, copy = _sides(catalog_session, lambda text: spark.sql(text).collect(), tmp_path)
    try:
        for template in (f"CREATE TABLE {{db}}.h ({_COLUMNS}) PARTITIONED BY (p STRING) STORED AS PARQUET TBLPROPERTIES ('k' = 'v')",
                         "CREATE TABLE {db}.d (a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY '\\u0001' STORED AS TEXTFILE",
                         "CREATE TABLE {db}.s (a INT, b STRING COMMENT 'bee', p STRING) USING parquet PARTITIONED BY (p)"):
            original.run(original.statement(template))
        found = _recreated(catalog_session, admin, original, copy)
        assert not found, "the table SHOW CREATE TABLE's statement makes differs from Spark's:\n" + describe(found)
    finally:
        for side in (original, copy):
            catalog_session.run_one(f"DROP DATABASE IF EXISTS {side.database} CASCADE")
