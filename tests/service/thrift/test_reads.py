"""Databases, tables and partitions answered by the endpoint from the catalogs' caches, checked against the
metastore's own answers to the same generated client, and the metastore calls those answers cost."""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from hms_catalog.client.hive_thrift import MetastoreThriftClient, ttypes
from hms_catalog.execution import Session
from tests.service.thrift.conftest import Endpoint, thrift_client
from tests.support import hms

STRINGS = ["a", "b", "c d", "e:f", "g"]  # two that the metastore escapes in partition names
INTS = [1, 2, 3, 4]


def calls_of(endpoint: Endpoint, catalog: str = "hive") -> Any:
    return endpoint.manager.catalog(catalog).metrics()


def in_other(value: Any) -> Any:
    """The metastore's struct as the endpoint shows it through catalog ``other``: ``other__<db>``."""
    value = copy.deepcopy(value)
    for each in value if isinstance(value, list) else [value]:
        if isinstance(each, ttypes.Database):
            each.name = "other__" + each.name
        else:
            each.dbName = "other__" + each.dbName
    return value


def by_name(tables: list[ttypes.Table]) -> list[ttypes.Table]:
    """The metastore answers tables by name in an order of its own."""
    return sorted(tables, key=lambda table: table.tableName)


def by_values(partitions: list[ttypes.Partition]) -> list[ttypes.Partition]:
    return sorted(partitions, key=lambda partition: list(partition.values))


@pytest.fixture
def client(endpoint: Endpoint) -> Iterator[MetastoreThriftClient]:
    with thrift_client(endpoint.port) as opened:
        yield opened


@pytest.fixture
def tables(spark: Any, unique_name: str) -> Iterator[str]:
    """A database written by Spark: ``events`` with 20 partitions (s string, i int), ``plain`` with a
    comment, and a view ``recent``."""
    db = unique_name
    spark.sql(f"CREATE DATABASE {db} COMMENT 'for the endpoint'")
    spark.sql(f"CREATE TABLE {db}.events (id INT, name STRING, s STRING, i INT) USING parquet PARTITIONED BY (s, i)")
    rows = [(n, f"name{n}", s, i) for n, (s, i) in enumerate((s, i) for s in STRINGS for i in INTS)]
    spark.createDataFrame(rows, "id INT, name STRING, s STRING, i INT").write.insertInto(f"{db}.events")
    spark.sql(f"CREATE TABLE {db}.plain (a INT, b STRING) USING parquet COMMENT 'plain one'")
    spark.sql(f"CREATE VIEW {db}.recent AS SELECT id FROM {db}.events WHERE i > 2")
    yield db
    spark.sql(f"DROP DATABASE {db} CASCADE")


# Databases and tables ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_table_reads_equal_the_metastores_own(endpoint: Endpoint, client: MetastoreThriftClient,
                                              direct: MetastoreThriftClient, tables: str) -> None:
    db = tables
    for name in ("events", "plain", "recent"):
        table = direct.get_table(db, name)
        assert client.get_table(db, name) == table
        assert client.get_table_req(ttypes.GetTableRequest(dbName=db, tblName=name)).table == table
        assert client.get_fields(db, name) == direct.get_fields(db, name)
        assert client.get_schema(db, name) == direct.get_schema(db, name)
    assert client.get_schema(db, "events")[-2:] == [ttypes.FieldSchema("s", "string", None),
                                                    ttypes.FieldSchema("i", "int", None)]
    names = ["events", "recent", "plain"]
    assert by_name(client.get_table_objects_by_name(db, names)) == by_name(direct.get_table_objects_by_name(db, names))
    request = ttypes.GetTablesRequest(dbName=db, tblNames=names)
    answer = by_name(client.get_table_objects_by_name_req(request).tables)
    assert answer == by_name(direct.get_table_objects_by_name_req(request).tables)
    assert [table.tableName for table in answer] == sorted(names)
    assert sorted(client.get_all_tables(db)) == sorted(direct.get_all_tables(db)) == ["events", "plain", "recent"]
    for pattern in ("*", "e*", "p*|r*", "nothing*", "EVENTS"):
        assert sorted(client.get_tables(db, pattern)) == sorted(direct.get_tables(db, pattern)), pattern
    assert client.get_database(db) == direct.get_database(db)
    assert client.get_database_req(ttypes.GetDatabaseRequest(name=db)) == direct.get_database(db)
    assert client.get_database(db).description == "for the endpoint"
    for pattern in (db, f"nothing|{db}", f"{db}*"):
        assert client.get_databases(pattern) == direct.get_databases(pattern) == [db], pattern
    prefix = db[:3] + "*"  # other tests' databases share it
    assert client.get_databases(prefix) == direct.get_databases(prefix) and db in direct.get_databases(prefix)

    def meta(answer: list[Any]) -> list[tuple[Any, ...]]:
        return sorted((m.dbName, m.tableName, m.tableType, m.comments) for m in answer)

    for tbl_pattern, types in (("*", None), ("*", ["VIRTUAL_VIEW"]), ("e*|p*", ["MANAGED_TABLE", "EXTERNAL_TABLE"])):
        assert meta(client.get_table_meta(db, tbl_pattern, types)) == meta(direct.get_table_meta(db, tbl_pattern, types))
    assert ("plain", "plain one") in [(m.tableName, m.comments) for m in client.get_table_meta(db, "*", None)]


@pytest.mark.slow
def test_other_catalog_answers_differ_only_in_the_database_name(endpoint: Endpoint, client: MetastoreThriftClient,
                                                                direct: MetastoreThriftClient, tables: str) -> None:
    db, other = tables, f"other__{tables}"
    table = direct.get_table(db, "events")
    assert client.get_table(other, "events") == in_other(table)
    assert client.get_table_req(ttypes.GetTableRequest(dbName=other, tblName="events")).table == in_other(table)
    assert by_name(client.get_table_objects_by_name(other, ["events", "plain"])) == in_other(
        by_name(direct.get_table_objects_by_name(db, ["events", "plain"])))
    assert sorted(client.get_all_tables(other)) == sorted(direct.get_all_tables(db))
    assert sorted(client.get_tables(other, "e*")) == sorted(direct.get_tables(db, "e*")) == ["events"]
    assert client.get_database(other) == in_other(direct.get_database(db))
    assert client.get_database_req(ttypes.GetDatabaseRequest(name=other)) == in_other(direct.get_database(db))
    assert client.get_fields(other, "plain") == direct.get_fields(db, "plain")
    assert client.get_schema(other, "events") == direct.get_schema(db, "events")
    assert client.get_databases(f"other__{db}*") == [other]
    assert client.get_databases(db) == [db]  # the primary's name only
    assert sorted((m.dbName, m.tableName) for m in client.get_table_meta(other, "*", None)) == [
        (other, "events"), (other, "plain"), (other, "recent")]
    everything = client.get_all_databases()
    assert db in everything and other in everything
    assert [name for name in everything if not name.startswith("other__")] == direct.get_all_databases()
    # the primary's own struct in the cache is not renamed by another catalog's answer
    assert client.get_table(db, "events") == table


def test_warm_get_table_costs_the_metastore_nothing(endpoint: Endpoint, client: MetastoreThriftClient,
                                                    admin: hms.Admin, unique_name: str) -> None:
    db = unique_name
    admin.create_database(db)
    admin.create_table(db, "t", [("a", "int")])
    before = calls_of(endpoint)
    first = client.get_table(db, "t")
    cold = calls_of(endpoint)
    assert sum(cold.calls_since(before).values()) >= 1
    for _ in range(5):
        assert client.get_table(db, "t") == first
        assert client.get_table_req(ttypes.GetTableRequest(dbName=db, tblName="t")).table == first
        assert client.get_fields(db, "t") == first.sd.cols
    assert calls_of(endpoint).calls_since(cold) == {}


def test_get_table_meta_is_one_metastore_call_cold_and_none_warm(endpoint: Endpoint, client: MetastoreThriftClient,
                                                                 admin: hms.Admin, unique_name: str) -> None:
    """Cold, the metastore's own get_table_meta answers (it loads no table object: with 100,000 tables, loading them
    took minutes); once every table it names is cached, the caches answer."""
    db, other = unique_name, f"{unique_name}_other"
    for database in (db, other):
        admin.create_database(database)
    for name in ("t1", "t2", "u1"):
        admin.create_table(db, name, [("a", "int")])
    admin.create_table(other, "t3", [("a", "int")])
    client.get_all_databases()  # the database names, listed apart from what is counted
    before = calls_of(endpoint)
    cold = client.get_table_meta(db, "t*", None)
    assert sorted((m.dbName, m.tableName, m.tableType) for m in cold) == [(db, "t1", "EXTERNAL_TABLE"), (db, "t2", "EXTERNAL_TABLE")]
    assert calls_of(endpoint).calls_since(before) == {"get_table_meta": 1}
    client.get_table_objects_by_name_req(ttypes.GetTablesRequest(dbName=db))  # every table of the database loaded
    loaded = calls_of(endpoint)
    warm = client.get_table_meta(db, "t*", None)
    assert sorted((m.dbName, m.tableName) for m in warm) == [(db, "t1"), (db, "t2")]
    assert client.get_table_meta(db, "*", ["MANAGED_TABLE"]) == []
    assert calls_of(endpoint).calls_since(loaded) == {}
    before = calls_of(endpoint)  # the other database's tables are not cached: the metastore is asked for it alone
    both = client.get_table_meta(f"{db}|{other}", "t*", None)
    assert sorted((m.dbName, m.tableName) for m in both) == [(db, "t1"), (db, "t2"), (other, "t3")]
    assert calls_of(endpoint).calls_since(before) == {"get_table_meta": 1}


def test_sixteen_clients_asking_one_cold_table_cost_one_metastore_call(endpoint: Endpoint, admin: hms.Admin,
                                                                       unique_name: str) -> None:
    db = unique_name
    admin.create_database(db)
    admin.create_table(db, "t", [("a", "int"), ("b", "string")])
    endpoint.manager.catalog("hive").database_names()  # the catalog's first use, apart from the table
    clients = 16
    start = threading.Barrier(clients)
    answers: list[Any] = []
    failures: list[BaseException] = []

    def ask() -> None:
        try:
            with thrift_client(endpoint.port) as client:
                client.getName()  # connected before the barrier, so the calls arrive together
                start.wait(timeout=30)
                answers.append(client.get_table(db, "t"))
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    before = calls_of(endpoint)
    threads = [threading.Thread(target=ask) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    assert len(answers) == clients and all(answer == answers[0] for answer in answers)
    assert answers[0].tableName == "t" and [c.name for c in answers[0].sd.cols] == ["a", "b"]
    made = calls_of(endpoint).calls_since(before)
    assert sum(count for method, count in made.items() if "table" in method) == 1, made


def test_a_change_behind_the_endpoint_shows_after_refresh(endpoint: Endpoint, client: MetastoreThriftClient,
                                                          direct: MetastoreThriftClient, admin: hms.Admin,
                                                          unique_name: str) -> None:
    db = unique_name
    location = admin.create_database(db)
    admin.create_table(db, "t", [("a", "int")], partition_keys=[("p", "string")])
    admin.add_partition(db, "t", ["x"], location / "t" / "p=x")
    assert client.get_table(db, "t").parameters.get("owner_note") is None
    assert client.get_partition_names(db, "t", -1) == ["p=x"]
    assert client.get_all_tables(db) == ["t"]

    changed = direct.get_table(db, "t")
    changed.parameters["owner_note"] = "changed behind"
    direct.alter_table(db, "t", changed)
    admin.add_partition(db, "t", ["y"], location / "t" / "p=y")
    admin.create_table(db, "u", [("a", "int")])
    assert client.get_table(db, "t").parameters.get("owner_note") is None  # still the cached answer
    assert client.get_partition_names(db, "t", -1) == ["p=x"]

    Session(endpoint.manager).run_one(f"REFRESH TABLE hive.{db}.t")
    assert client.get_table(db, "t").parameters["owner_note"] == "changed behind"
    assert client.get_table(db, "t") == direct.get_table(db, "t")
    assert client.get_partition_names(db, "t", -1) == ["p=x", "p=y"]
    assert client.get_all_tables(db) == ["t"]  # the database's listing was not refreshed

    endpoint.manager.catalog("hive").refresh()
    assert sorted(client.get_all_tables(db)) == ["t", "u"]
    assert sorted(client.get_all_tables(f"other__{db}")) == ["t", "u"]  # never listed there before


# Partitions -------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_partition_reads_equal_the_metastores_own(endpoint: Endpoint, client: MetastoreThriftClient,
                                                  direct: MetastoreThriftClient, tables: str) -> None:
    db = tables
    names = direct.get_partition_names(db, "events", -1)
    assert len(names) == 20 and "s=c d/i=1" in names and "s=e%3Af/i=4" in names
    assert client.get_partition_names(db, "events", -1) == names
    assert client.get_partition_names(db, "events", 3) == names[:3]
    assert client.get_partition_names(db, "events", 0) == direct.get_partition_names(db, "events", 0) == names  # 0: all
    assert client.get_partitions(db, "events", 0) == direct.get_partitions(db, "events", 0) == []
    everything = by_values(direct.get_partitions(db, "events", -1))
    assert by_values(client.get_partitions(db, "events", -1)) == everything
    assert len(client.get_partitions(db, "events", 5)) == 5
    for values in (["b"], ["c d"], ["e:f", "2"], ["", "3"], ["nothing"]):
        expected = by_values(direct.get_partitions_ps(db, "events", values, -1))
        assert by_values(client.get_partitions_ps(db, "events", values, -1)) == expected, values
        assert by_values(client.get_partitions_ps_with_auth(db, "events", values, -1, "someone", [])) == expected
        assert sorted(client.get_partition_names_ps(db, "events", values, -1)) == sorted(
            direct.get_partition_names_ps(db, "events", values, -1))  # the metastore's order is its own here
    assert len(client.get_partitions_ps(db, "events", ["", "3"], -1)) == 5
    for values in (["a", "1"], ["e:f", "4"], ["c d", "2"]):
        assert client.get_partition(db, "events", values) == direct.get_partition(db, "events", values)
    for name in ("s=a/i=1", "s=e%3Af/i=4", "s=c d/i=3"):
        assert client.get_partition_by_name(db, "events", name) == direct.get_partition_by_name(db, "events", name)
    wanted = ["s=g/i=4", "s=a/i=2", "s=e%3Af/i=1", "s=zzz/i=9"]
    expected = by_values(direct.get_partitions_by_names(db, "events", wanted))
    assert len(expected) == 3
    assert by_values(client.get_partitions_by_names(db, "events", wanted)) == expected
    request = ttypes.GetPartitionsByNamesRequest(db_name=db, tbl_name="events", names=wanted)
    assert by_values(client.get_partitions_by_names_req(request).partitions) == expected
    with pytest.raises(ttypes.NoSuchObjectException):
        client.get_partition_by_name(db, "events", "s=zzz/i=9")
    with pytest.raises(ttypes.NoSuchObjectException):
        client.get_partition(db, "events", ["zzz", "9"])
    with pytest.raises(ttypes.MetaException):
        client.get_partition(db, "events", ["a"])
    for values in ([], ["a", "1", "extra"]):  # a partial spec of no value, or of more values than keys
        for asking in (direct, client):
            with pytest.raises(ttypes.MetaException):
                asking.get_partition_names_ps(db, "events", values, -1)
            with pytest.raises(ttypes.MetaException):
                asking.get_partitions_ps(db, "events", values, -1)
    with pytest.raises(ttypes.NoSuchObjectException):  # the metastore's own answer to it
        direct.get_partitions(db, "missing", -1)
    for call in (client.get_partitions, client.get_partition_names):  # the metastore fails the second internally
        with pytest.raises(ttypes.NoSuchObjectException, match="missing"):
            call(db, "missing", -1)
    for ps_call in (client.get_partitions_ps, client.get_partition_names_ps):
        with pytest.raises(ttypes.NoSuchObjectException, match="missing"):
            ps_call(db, "missing", ["a"], -1)

    other = f"other__{db}"
    assert client.get_partition_names(other, "events", -1) == names
    assert by_values(client.get_partitions(other, "events", -1)) == in_other(everything)
    assert client.get_partition(other, "events", ["b", "2"]) == in_other(direct.get_partition(db, "events", ["b", "2"]))


FILTERS = ["s = 'b'", "i > 2", "s = 'c d' and i <= 2", "s = 'a' or i = 4", "s <> 'g'", "i = 3 and s = 'e:f'"]


@pytest.mark.slow
def test_partitions_by_filter_from_cached_names_cost_no_call(endpoint: Endpoint, client: MetastoreThriftClient,
                                                            direct: MetastoreThriftClient, tables: str) -> None:
    db = tables
    client.get_table(db, "events")  # as a client does first: the partition keys' types are the table's
    client.get_partitions(db, "events", -1)  # names and whole partitions cached
    before = calls_of(endpoint)
    for text in FILTERS:
        expected = by_values(direct.get_partitions_by_filter(db, "events", text, -1))
        assert expected, text
        assert by_values(client.get_partitions_by_filter(db, "events", text, -1)) == expected, text
        assert client.get_num_partitions_by_filter(db, "events", text) == len(expected), text
    assert len(client.get_partitions_by_filter(db, "events", "i > 2", 3)) == 3
    assert calls_of(endpoint).calls_since(before) == {}

    request = ttypes.PartitionsByExprRequest(dbName=db, tblName="events", expr=b"\x00not read", maxParts=-1)
    result = client.get_partitions_by_expr(request)
    assert result.hasUnknownPartitions is True
    assert by_values(result.partitions) == by_values(direct.get_partitions(db, "events", -1))
    assert calls_of(endpoint).calls_since(before) == {}


@pytest.mark.slow
def test_partitions_by_filter_of_an_uncached_table_are_the_metastores(endpoint: Endpoint,
                                                                     client: MetastoreThriftClient,
                                                                     direct: MetastoreThriftClient,
                                                                     tables: str) -> None:
    db = tables
    text = "s = 'b' and i >= 3"
    before = calls_of(endpoint)
    found = client.get_partitions_by_filter(db, "events", text, -1)
    assert by_values(found) == by_values(direct.get_partitions_by_filter(db, "events", text, -1))
    assert [list(partition.values) for partition in by_values(found)] == [["b", "3"], ["b", "4"]]
    made = calls_of(endpoint).calls_since(before)
    assert made.get("get_partitions_by_filter") == 1, made
    # the table is cached now (its partition keys' types are known): the next filter is evaluated here, on the
    # table's names fetched once; the one after that costs nothing
    counted = calls_of(endpoint)
    assert client.get_num_partitions_by_filter(db, "events", text) == 2
    assert calls_of(endpoint).calls_since(counted) == {"get_partition_names": 1}
    counted = calls_of(endpoint)
    assert client.get_num_partitions_by_filter(db, "events", "s = 'a'") == direct.get_num_partitions_by_filter(db, "events", "s = 'a'")
    assert calls_of(endpoint).calls_since(counted) == {}
    # the forwarded answer's partitions are whole: asking one of them again costs nothing
    again = calls_of(endpoint)
    assert client.get_partition_by_name(db, "events", "s=b/i=3") == direct.get_partition_by_name(db, "events", "s=b/i=3")
    assert "get_partitions_by_names" not in calls_of(endpoint).calls_since(again)
