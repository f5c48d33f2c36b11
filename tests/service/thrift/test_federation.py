"""The federation's routing (``other__<db>``, ``@cat#db``, catName), a catalog that is down or hung, both
transports, and calls the endpoint forwards rather than answers."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hms_catalog.client.hive_thrift import MetastoreThriftClient, ttypes
from tests.service.thrift.conftest import Endpoint, thrift_client
from tests.support import hms


def calls_since(endpoint: Endpoint, catalog: str, before: Any) -> dict[str, int]:
    made: dict[str, int] = endpoint.manager.catalog(catalog).metrics().calls_since(before)
    return made


def metrics(endpoint: Endpoint, catalog: str) -> Any:
    return endpoint.manager.catalog(catalog).metrics()


@pytest.fixture
def client(endpoint: Endpoint) -> Iterator[MetastoreThriftClient]:
    with thrift_client(endpoint.port) as opened:
        yield opened


@pytest.fixture
def db(admin: hms.Admin, unique_name: str) -> str:
    """A database with a partitioned table ``t`` (two partitions) and a plain table ``u``."""
    location = admin.create_database(unique_name)
    admin.create_table(unique_name, "t", [("a", "int")], partition_keys=[("p", "string")])
    for value in ("x", "y"):
        admin.add_partition(unique_name, "t", [value], location / "t" / f"p={value}")
    admin.create_table(unique_name, "u", [("b", "string")])
    return unique_name


def test_prefixed_names_reach_catalog_other(endpoint: Endpoint, client: MetastoreThriftClient,
                                            direct: MetastoreThriftClient, db: str) -> None:
    hive_before, other_before = metrics(endpoint, "hive"), metrics(endpoint, "other")
    table = client.get_table(f"other__{db}", "t")
    assert table.dbName == f"other__{db}" and table.tableName == "t"
    assert client.get_partition_names(f"other__{db}", "t", -1) == ["p=x", "p=y"]
    assert calls_since(endpoint, "hive", hive_before) == {}  # the primary, on the same metastore, was not asked
    made = calls_since(endpoint, "other", other_before)
    assert sum(made.values()) >= 2, made


def test_hive3_catalog_names_reach_the_catalog(endpoint: Endpoint, client: MetastoreThriftClient,
                                               direct: MetastoreThriftClient, db: str) -> None:
    hive_before = metrics(endpoint, "hive")
    expected = direct.get_table(db, "t")
    expected.dbName = f"other__{db}"
    assert client.get_table(f"@other#{db}", "t") == expected
    assert client.get_table_req(ttypes.GetTableRequest(dbName=db, tblName="t", catName="other")).table == expected
    assert sorted(client.get_all_tables(f"@other#{db}")) == ["t", "u"]
    database = client.get_database_req(ttypes.GetDatabaseRequest(name=db, catalogName="other"))
    assert database.name == f"other__{db}" and database.locationUri == direct.get_database(db).locationUri
    every = client.get_table_objects_by_name_req(ttypes.GetTablesRequest(dbName=db, catName="other"))
    assert sorted((table.dbName, table.tableName) for table in every.tables) == [(f"other__{db}", "t"),
                                                                                 (f"other__{db}", "u")]
    request = ttypes.GetPartitionsByNamesRequest(db_name=f"@other#{db}", tbl_name="t", names=["p=y"])
    (partition,) = client.get_partitions_by_names_req(request).partitions
    assert (partition.dbName, partition.values) == (f"other__{db}", ["y"])
    assert calls_since(endpoint, "hive", hive_before) == {}
    # Hive's default catalog name is the primary
    assert client.get_table_req(ttypes.GetTableRequest(dbName=db, tblName="t", catName="hive")).table.dbName == db


def test_hive3_database_patterns_name_a_catalog(endpoint: Endpoint, client: MetastoreThriftClient, db: str) -> None:
    every = client.get_all_databases()
    assert client.get_databases("@hive#") == every  # Hive 3+'s getAllDatabases: the default catalog, all of the home
    assert client.get_databases(f"@hive#{db}") == [db]
    others = client.get_databases("@other#")
    assert f"other__{db}" in others and all(name.startswith("other__") for name in others)
    assert client.get_databases(f"@other#other__{db}") == [f"other__{db}"]
    assert {(m.dbName, m.tableName) for m in client.get_table_meta(f"@other#other__{db}", "*", None)} == {
        (f"other__{db}", "t"), (f"other__{db}", "u")}


def test_meta_conf_set_by_a_client_is_its_connection_s_own(endpoint: Endpoint, client: MetastoreThriftClient) -> None:
    key = "hive.metastore.try.direct.sql"
    default = client.getMetaConf(key)
    client.setMetaConf(key, "false" if default == "true" else "true")
    assert client.getMetaConf(key) != default
    with thrift_client(endpoint.port) as second:
        assert second.getMetaConf(key) == default  # not set on a pooled connection every client shares


def test_an_unknown_prefix_is_a_primary_database_name(endpoint: Endpoint, client: MetastoreThriftClient,
                                                      admin: hms.Admin, unique_name: str) -> None:
    name = f"nocatalog__{unique_name}"
    admin.create_database(name)
    admin.create_table(name, "t", [("a", "int")])
    other_before = metrics(endpoint, "other")
    assert client.get_database(name).name == name
    assert client.get_table(name, "t").dbName == name
    assert client.get_all_tables(name) == ["t"]
    assert calls_since(endpoint, "other", other_before) == {}
    assert name in client.get_all_databases()
    assert f"other__{name}" in client.get_all_databases()  # and through catalog other, prefixed once more


def test_a_down_catalog_is_left_out_of_the_database_list_at_once(endpoint: Endpoint, client: MetastoreThriftClient,
                                                                 direct: MetastoreThriftClient, db: str,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="service.thrift")
    started = time.monotonic()
    names = client.get_all_databases()
    assert time.monotonic() - started < 3
    primary = direct.get_all_databases()
    assert names == primary + [f"other__{name}" for name in primary]
    assert not any(name.startswith("down__") for name in names)
    assert any("down" in record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING)
    # the catalogs that are up answer at once while it is down
    for database in (db, f"other__{db}"):
        started = time.monotonic()
        assert client.get_table(database, "u").tableName == "u"
        assert client.get_partition_names(database, "t", -1) == ["p=x", "p=y"]
        assert time.monotonic() - started < 1
    assert f"other__{db}" in client.get_databases("other__*")


def test_a_call_naming_the_down_catalog_fails_with_its_failure(endpoint: Endpoint, client: MetastoreThriftClient,
                                                                refused_uri: str) -> None:
    for call in (lambda: client.get_all_tables("down__x"), lambda: client.get_table("down__x", "t"),
                 lambda: client.get_database("down__x"), lambda: client.get_functions("down__x", "*")):
        started = time.monotonic()
        with pytest.raises(ttypes.MetaException) as raised:
            call()
        assert time.monotonic() - started < 10
        message = raised.value.message
        assert refused_uri in message and "could not connect" in message and "refused" in message, message
    assert client.getName() == "hms-catalog"  # the connection is still good


def test_a_hung_catalog_costs_one_listing_wait_then_none(endpoint: Endpoint, client: MetastoreThriftClient,
                                                         direct: MetastoreThriftClient, silent_uri: str) -> None:
    """A metastore that accepts and never answers, with the client's defaults (a 60 s socket timeout, 3 retries) but
    for its retries' delay: a quarter second, for a grace of 2 s (its floor) rather than 7 s."""
    endpoint.manager.create("hung", {"type": "hms", "hive.metastore.uris": silent_uri,
                                     "hive.metastore.client.connect.retry.delay": "0.25"})
    primary = direct.get_all_databases()
    every = primary + [f"other__{name}" for name in primary]
    started = time.monotonic()
    names = client.get_all_databases()
    took = time.monotonic() - started
    assert names == every
    assert 0.5 < took < 3, took  # the one wait that finds it hung: the listing wait, 1 s
    later = []
    for call, expected in [(client.get_all_databases, every)] * 3 + [
            (lambda: client.get_databases("other__*"), [f"other__{name}" for name in primary]),
            (lambda: client.get_databases("hung__*"), [])]:
        started = time.monotonic()
        assert call() == expected
        later.append(time.monotonic() - started)
    assert max(later) < 0.5, later  # known down: not asked again (the old answer waited the whole 1 s again)
    assert set(endpoint.endpoint.health()["unreachable"]) == {"down", "hung"}  # the fixture's refused catalog, and this one

    # within a probe's timeout (2 s) the probe settles that it is hung, not slow; past its grace (2 s from when it was
    # found down) a call naming it alone fails at once
    deadline = time.monotonic() + 15
    while not endpoint.endpoint.health()["unreachable"]["hung"]["calls_fail_fast"]:
        assert time.monotonic() < deadline, "no probe settled it"
        time.sleep(0.05)
    started = time.monotonic()
    with pytest.raises(ttypes.MetaException) as raised:
        client.get_all_tables("hung__default")
    assert time.monotonic() - started < 0.5
    message = raised.value.message
    assert message.startswith("catalog 'hung': its metastore is unreachable") and "no answer to a probe within 2s" in message, message
    assert "past its grace of 2 s" in message, message


# Transports and forwarded calls -------------------------------------------------------------------------------


def test_a_framed_client_gets_the_same_answers(endpoint: Endpoint, client: MetastoreThriftClient, db: str) -> None:
    with thrift_client(endpoint.port, framed=True) as framed:
        assert framed.get_table(db, "t") == client.get_table(db, "t")
        assert framed.get_table(f"other__{db}", "t") == client.get_table(f"other__{db}", "t")
        assert framed.get_partitions(db, "t", -1) == client.get_partitions(db, "t", -1)
        assert framed.get_all_databases() == client.get_all_databases()
        assert framed.get_all_functions() == client.get_all_functions()
        with pytest.raises(ttypes.NoSuchObjectException):
            framed.get_table(db, "missing")
        assert framed.get_table(db, "u").tableName == "u"  # the connection survives an exception


def test_calls_the_endpoint_does_not_answer_are_forwarded(endpoint: Endpoint, client: MetastoreThriftClient,
                                                          direct: MetastoreThriftClient, db: str) -> None:
    assert client.get_all_functions() == direct.get_all_functions()
    key = "hive.metastore.batch.retrieve.max"
    assert client.get_config_value(key, "none") == direct.get_config_value(key, "none")
    low = direct.get_current_notificationEventId().eventId
    through = client.get_current_notificationEventId().eventId
    assert low <= through <= direct.get_current_notificationEventId().eventId

    function = ttypes.Function(functionName="f1", dbName=db, className="com.example.F", ownerName="me",
                               ownerType=ttypes.PrincipalType.USER, createTime=int(time.time()),
                               functionType=ttypes.FunctionType.JAVA, resourceUris=[])
    direct.create_function(function)
    other_before = metrics(endpoint, "other")
    assert client.get_functions(f"other__{db}", "*") == ["f1"]
    found = client.get_function(f"other__{db}", "f1")
    assert (found.dbName, found.className) == (f"other__{db}", "com.example.F")  # renamed on the way back
    assert calls_since(endpoint, "other", other_before) == {"get_functions": 1, "get_function": 1}
    assert client.get_function(db, "f1") == direct.get_function(db, "f1")
    with pytest.raises(ttypes.NoSuchObjectException):
        client.get_function(db, "missing")
