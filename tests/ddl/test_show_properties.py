"""SHOW TBLPROPERTIES as Spark 4 lists a metastore table's properties, on plain thrift structs (the same statement on
tables Spark made is compared with Spark's own answer in tests/ddl/test_spark_parity.py)."""

from __future__ import annotations

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.show import REDACTED, missing_property, spark_properties


def _table(parameters: dict[str, str], serde: dict[str, str]) -> ttypes.Table:
    return ttypes.Table(dbName="db", tableName="t", parameters=parameters,
                        sd=ttypes.StorageDescriptor(serdeInfo=ttypes.SerDeInfo(parameters=serde)))


STATE = {"transient_lastDdlTime": "1", "numFiles": "2", "totalSize": "3", "numRows": "4", "rawDataSize": "5", "numPartitions": "6",
         "COLUMN_STATS_ACCURATE": "{}", "EXTERNAL": "TRUE", "comment": "c", "spark.sql.create.version": "4.3.0",
         "hms_catalog.detected": "x", "owner": "o", "location": "l", "table_type": "t"}


def test_a_hive_table_lists_its_properties_ddl_time_and_serde_properties() -> None:
    table = _table({"k": "v", "spark.x": "y", **STATE}, {"serialization.format": "1", "field.delim": ",", "path": "p"})
    assert spark_properties(table) == {"k": "v", "option.field.delim": ",", "option.path": "p", "option.serialization.format": "1",
                                       "spark.x": "y", "transient_lastDdlTime": "1"}


def test_a_data_source_table_lists_its_options_but_not_its_path_or_ddl_time() -> None:
    table = _table({"k": "v", "spark.sql.sources.provider": "parquet", **STATE}, {"serialization.format": "1", "path": "p", "header": "1"})
    assert spark_properties(table) == {"k": "v", "option.header": "1"}


def test_secret_looking_keys_and_values_are_redacted_as_spark_redacts_them() -> None:
    table = _table({"password": "x", "my.Secret": "x", "note": "the token is x", "jdbc.url": "x", "plain": "x", "accesskey": "x"},
                   {"access.key": "x"})
    shown = spark_properties(table)
    assert shown == {"accesskey": REDACTED, "jdbc.url": REDACTED, "my.Secret": REDACTED, "note": REDACTED, "option.access.key": REDACTED,
                     "plain": "x", "password": REDACTED}
    assert list(shown) == sorted(shown)


def test_a_missing_key_answers_spark_s_sentence() -> None:
    assert missing_property("hive.db.t", "p3") == "Table hive.db.t does not have property: p3"
