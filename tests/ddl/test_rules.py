"""The rules the metastore does not enforce: type changes that widen, partition values of their key's type (and
not empty), property keys Spark reserves, empty locations, and our own events told from others'."""

from __future__ import annotations

import re

import pytest

from hms_catalog.cache.self_events import SelfEvents
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.ddl.locations import resolved_location
from hms_catalog.ddl.partition_values import partition_name, spelled
from hms_catalog.ddl.reserved import check_namespace_keys, check_table_keys
from hms_catalog.ddl.specs import PartitionValues
from hms_catalog.ddl.widening import check_widening
from hms_catalog.errors import ConfigurationError


@pytest.mark.parametrize("old, new", [("tinyint", "int"), ("int", "bigint"), ("int", "decimal(12,2)"), ("bigint", "double"),
                                      ("float", "double"), ("decimal(5,2)", "decimal(8,3)"), ("varchar(3)", "varchar(9)"),
                                      ("char(2)", "string"), ("INT", "int")])
def test_widenings_hive_allows(old: str, new: str) -> None:
    assert check_widening("c", old, new) == new.lower()


@pytest.mark.parametrize("old, new", [("string", "int"), ("bigint", "int"), ("double", "float"), ("int", "decimal(5,0)"),
                                      ("decimal(8,3)", "decimal(8,2)"), ("date", "string"), ("int", "string")])
def test_narrowings_and_reinterpretations_are_refused(old: str, new: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(f"cannot change column 'c' from {old} to {new}")):
        check_widening("c", old, new)


def test_text_tables_may_turn_any_column_into_a_string() -> None:
    assert check_widening("c", "date", "string", text=True) == "string"


@pytest.mark.parametrize("old, new, allowed", [("int", "bigint", True), ("float", "double", True), ("decimal(5,2)", "decimal(9,2)", True),
                                               ("decimal(5,2)", "decimal(9,3)", False), ("int", "double", False),
                                               ("tinyint", "int", False)])
def test_iceberg_allows_its_promotions_only(old: str, new: str, allowed: bool) -> None:
    if allowed:
        assert check_widening("c", old, new, iceberg=True) == new
    else:
        with pytest.raises(ConfigurationError, match="Iceberg allows"):
            check_widening("c", old, new, iceberg=True)


def test_partition_values_must_be_of_their_keys_type() -> None:
    assert spelled("h", "int", "05", "db.t") == "5"
    assert spelled("d", "date", "2024-02-29", "db.t") == "2024-02-29"
    assert spelled("f", "boolean", "TRUE", "db.t") == "true"
    assert spelled("s", "string", "abc/=%", "db.t") == "abc/=%"
    assert spelled("h", "int", None, "db.t") is None
    for key, kind, value in (("h", "int", "abc"), ("d", "date", "2024-02-30"), ("h", "tinyint", "300"), ("v", "varchar(2)", "abc")):
        with pytest.raises(ConfigurationError, match=f"'{value}'.*{re.escape(kind)}"):
            spelled(key, kind, value, "db.t")


@pytest.mark.parametrize("kind", ["string", "int", "varchar(3)", "date"])
def test_an_empty_partition_value_is_refused_whatever_its_key(kind: str) -> None:
    """Spark refuses ``p = ''`` ("contains an empty partition column value"); the metastore would keep a partition ``p=``."""
    with pytest.raises(ConfigurationError, match="partition value of key 'p' of db.t is empty"):
        spelled("p", kind, "", "db.t")


@pytest.mark.parametrize("key", ["provider", "location", "owner", "external", "collation", "is_managed_location", "table_type"])
def test_keys_spark_reserves_are_refused_as_table_properties(key: str) -> None:
    with pytest.raises(ConfigurationError, match=f"TBLPROPERTIES: '{key}' is a reserved table property"):
        check_table_keys(["k", key], "TBLPROPERTIES")


@pytest.mark.parametrize("key", ["location", "owner", "collation"])
def test_keys_spark_reserves_are_refused_as_database_properties(key: str) -> None:
    with pytest.raises(ConfigurationError, match=f"'{key}' is a reserved database property"):
        check_namespace_keys([key], "DBPROPERTIES")


def test_reserved_keys_compare_exactly_and_comment_is_no_reserved_key() -> None:
    """As Spark compares them: Hive's ``EXTERNAL`` flag and ``Owner`` are ordinary keys; a comment property is allowed."""
    check_table_keys(["EXTERNAL", "Owner", "comment", "LOCATION"], "TBLPROPERTIES")
    check_namespace_keys(["LOCATION", "comment", "provider"], "DBPROPERTIES")


def test_an_empty_location_is_refused_not_resolved_to_its_parent() -> None:
    with pytest.raises(ConfigurationError, match=r"LOCATION of table 'db.t' is empty"):
        resolved_location("", "file:/warehouse/db.db", "table 'db.t'", "database 'db'")
    assert resolved_location("x", "file:/warehouse/db.db/", "table 'db.t'", "database 'db'") == "file:/warehouse/db.db/x"


def test_partition_names_follow_the_keys_order() -> None:
    keys = [ttypes.FieldSchema("dt", "string", ""), ttypes.FieldSchema("h", "int", "")]
    table = ttypes.Table(dbName="db", tableName="t", partitionKeys=keys)
    assert partition_name(table, PartitionValues((("H", "007"), ("dt", "a b")))) == "dt=a b/h=7"
    with pytest.raises(ConfigurationError, match="'x' is not a partition column"):
        partition_name(table, PartitionValues((("x", "1"),)))


def test_our_own_events_are_consumed_once_and_expire() -> None:
    now = [0.0]
    events = SelfEvents(clock=lambda: now[0])
    events.expect("ADD_PARTITION", "DB", "T", count=2)
    assert events.consume("add_partition", "db", "t") and events.consume("ADD_PARTITION", "db", "t")
    assert not events.consume("ADD_PARTITION", "db", "t")  # a third is someone else's
    withdrawn = events.expect("DROP_TABLE", "db", "t")
    events.withdraw(withdrawn)
    assert not events.consume("DROP_TABLE", "db", "t")
    events.expect("CREATE_TABLE", "db", "u")
    now[0] += 3600
    assert not events.consume("CREATE_TABLE", "db", "u") and events.pending() == 0
