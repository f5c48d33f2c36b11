"""The endpoint's name mapping (``<catalog>__<db>``, ``@cat#db``, catName) and the generic walk over a call's
arguments that finds and renames database names: pure logic, with the generated structs themselves."""

from __future__ import annotations

import pytest

from hms_catalog.client.hive_thrift import ttypes
from service.thrift.arguments import argument_names, databases_in, rename_arguments, rename_databases
from service.thrift.names import FederatedNames, Route, hive_pattern

CATALOGS = ["other", "hive", "Fs"]


@pytest.fixture
def names() -> FederatedNames:
    return FederatedNames("Hive", lambda: CATALOGS)


def test_catalogs_list_the_primary_first_then_the_others_by_name(names: FederatedNames) -> None:
    assert names.catalogs() == ["hive", "fs", "other"]
    assert FederatedNames("gone", lambda: CATALOGS).catalogs() == ["fs", "hive", "other"]  # a primary not served


def test_catalogs_are_read_again_once_their_names_are_a_second_old() -> None:
    served = ["hive"]
    now = [100.0]
    names = FederatedNames("hive", lambda: served, clock=lambda: now[0])
    assert names.route("late__db") == Route("hive", "late__db")
    served.append("late")
    now[0] += 0.5
    assert names.route("late__db") == Route("hive", "late__db")  # the names read half a second ago
    now[0] += 0.6
    assert names.route("late__db") == Route("late", "db")


@pytest.mark.parametrize(("database", "catalog", "expected"), [
    ("sales", None, Route("hive", "sales")),
    ("SALES", None, Route("hive", "sales")),
    ("other__sales", None, Route("other", "sales")),
    ("Other__Sales", None, Route("other", "sales")),
    ("other__a__b", None, Route("other", "a__b")),  # only the first separator splits
    ("nosuch__sales", None, Route("hive", "nosuch__sales")),  # an unknown prefix is a primary database's name
    ("hive__sales", None, Route("hive", "hive__sales")),  # the primary has no prefix
    ("other__", None, Route("hive", "other__")),  # nothing after the separator
    ("other_sales", None, Route("hive", "other_sales")),
    ("@other#sales", None, Route("other", "sales")),
    ("@OTHER#Sales", None, Route("other", "sales")),
    ("@other#!", None, Route("other", "")),  # Hive's marker of a catalog named with no database
    ("@hive#sales", None, Route("hive", "sales")),
    ("@hive#other__sales", None, Route("other", "sales")),  # Hive's default catalog: names as without one
    ("@spark#sales", None, Route("hive", "sales")),  # a catalog of the primary's own metastore
    ("@other", None, Route("hive", "@other")),  # no '#': not a catalog form
    ("sales", "other", Route("other", "sales")),
    ("sales", "OTHER", Route("other", "sales")),
    ("other__sales", "other", Route("other", "sales")),  # a prefixed name with its own catName
    ("sales", "hive", Route("hive", "sales")),
    ("sales", "spark", Route("hive", "sales")),
    ("other__sales", "spark", Route("hive", "other__sales")),  # another metastore catalog's name is its own
    ("sales", "", Route("hive", "sales")),
    (None, None, Route("hive", "")),
    (None, "other", Route("other", "")),
])
def test_route(names: FederatedNames, database: str | None, catalog: str | None, expected: Route) -> None:
    assert names.route(database, catalog) == expected


def test_external_names_round_trip(names: FederatedNames) -> None:
    assert names.external("hive", "Sales") == "sales"
    assert names.external("Other", "Sales") == "other__sales"
    for catalog, database in [("hive", "sales"), ("other", "sales"), ("other", "a__b"), ("fs", "x")]:
        assert names.route(names.external(catalog, database)) == Route(catalog, database)
    assert names.unprefixed("other", "other__sales") == "sales"
    assert names.unprefixed("other", "sales") == "sales"
    assert names.is_primary("HIVE") and not names.is_primary("other")


@pytest.mark.parametrize(("pattern", "matching", "not_matching"), [
    (None, ["a", "B_c", ""], []),
    ("*", ["a", "anything"], []),
    ("  ", ["a"], []),
    ("sales", ["sales", "SALES"], ["sales2", "xsales"]),
    ("sal*", ["sales", "sal"], ["xsales"]),
    ("*es", ["sales", "es"], ["sales2"]),
    ("a*|b*", ["apple", "banana"], ["cherry"]),
    ("a.c", ["abc", "a.c"], ["ac"]),  # a regular expression, as Hive reads it
    ("t[0-9]+", ["t1", "t42"], ["t", "tx"]),
    ("a(b", ["a(b"], ["ab"]),  # not a valid expression: literal
    ("a(b*", ["a(b", "a(bcd"], ["ab"]),
])
def test_hive_pattern(pattern: str | None, matching: list[str], not_matching: list[str]) -> None:
    matcher = hive_pattern(pattern)
    assert all(matcher.fullmatch(name) for name in matching)
    assert not any(matcher.fullmatch(name) for name in not_matching)


# arguments.py ------------------------------------------------------------------------------------------------


def test_argument_names_come_from_the_generated_spec() -> None:
    assert argument_names("get_table") == ("dbname", "tbl_name")
    assert argument_names("get_partitions_by_filter") == ("db_name", "tbl_name", "filter", "max_parts")
    assert argument_names("get_database") == ("name",)
    assert argument_names("get_all_databases") == ()


def test_databases_in_string_arguments() -> None:
    assert databases_in("get_table", ("other__db", "t")) == [("other__db", None)]
    assert databases_in("get_partition_names", ("db", "t", -1)) == [("db", None)]
    assert databases_in("get_database", ("other__db",)) == [("other__db", None)]  # 'name' of a *_database call
    assert databases_in("drop_table", ("db", "t", True)) == [("db", None)]
    assert databases_in("get_all_functions", ()) == []
    assert databases_in("get_table", (None, "t")) == []


def test_databases_in_structs_with_their_catalog() -> None:
    request = ttypes.GetTableRequest(dbName="db", tblName="t", catName="other")
    assert databases_in("get_table_req", (request,)) == [("db", "other")]
    table = ttypes.Table(tableName="t", dbName="other__db", sd=ttypes.StorageDescriptor(cols=[]))
    assert databases_in("create_table", (table,)) == [("other__db", None)]
    database = ttypes.Database(name="other__db")
    assert databases_in("create_database", (database,)) == [("other__db", None)]
    partitions = [ttypes.Partition(dbName="a", tableName="t", values=["1"]),
                  ttypes.Partition(dbName="b", tableName="t", values=["2"])]
    assert databases_in("add_partitions", (partitions,)) == [("a", None), ("b", None)]
    # a struct's 'name' is a database only in a Database
    assert databases_in("create_function", (ttypes.Function(functionName="f", dbName="db"),)) == [("db", None)]


def test_rename_arguments_renames_databases_and_sets_the_catalog() -> None:
    rename = {"other__db": "db"}.get
    request = ttypes.GetTableRequest(dbName="other__db", tblName="t", catName="other")
    (renamed,) = rename_arguments("get_table_req", (request,), lambda name: rename(name) or name, "hive")
    assert (renamed.dbName, renamed.tblName, renamed.catName) == ("db", "t", "hive")
    assert rename_arguments("get_table", ("other__db", "other__db"), lambda name: rename(name) or name) == ("db", "other__db")
    assert rename_arguments("get_database", ("other__db",), lambda name: "x") == ("x",)
    # arguments past the spec's are passed on as they are
    assert rename_arguments("get_table", ("a", "t", "extra"), str.upper) == ("A", "t", "extra")


def test_rename_databases_walks_lists_dicts_and_nested_structs() -> None:
    table = ttypes.Table(tableName="t", dbName="db", sd=ttypes.StorageDescriptor(cols=[ttypes.FieldSchema("c", "int", "")]))
    answer = {"k": [table], "n": [ttypes.TableMeta(dbName="db", tableName="u", tableType="VIEW")]}
    renamed = rename_databases(answer, lambda name: "other__" + name)
    assert renamed["k"][0].dbName == "other__db" and renamed["k"][0].tableName == "t"
    assert renamed["n"][0].dbName == "other__db"
    assert renamed["k"][0].sd.cols == [ttypes.FieldSchema("c", "int", "")]
    assert rename_databases(ttypes.Database(name="db", description="d"), str.upper).name == "DB"
    assert rename_databases(["db"], str.upper) == ["db"]  # a bare string says nothing of being a database
    assert rename_databases(None, str.upper) is None
