"""Asking in the form a metastore answers: the fallback rule of the pool and the forms the client sends.

Pure logic over scripted connections; the same behaviour against the real metastore behind refusing
proxies is in test_metastore_versions.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from thrift.Thrift import TApplicationException
from thrift.transport.TTransport import TTransportException

from hms_catalog.client import HmsClientPool, MetastoreClient
from hms_catalog.client._transport import Connection
from hms_catalog.client.hive_thrift import GetPartitionsByFilterRequest, ttypes
from hms_catalog.errors import ConfigurationError, MetastoreError, MetastoreUnavailableError, UnsupportedCallError
from hms_catalog.properties import CatalogConfig, ClientConfig, MetastoreUri, parse_uris
from tests.support.scripted_metastore import URI, ScriptedMetastore, scripted_pool


def _table(database: str, name: str) -> ttypes.Table:
    return ttypes.Table(dbName=database, tableName=name)


HIVE21 = {"get_table": _table, "get_table_objects_by_name": lambda db, names: [_table(db, n) for n in names]}
HIVE4 = {
    "get_table_req": lambda request: ttypes.GetTableResult(table=_table(request.dbName, request.tblName)),
    "get_table_objects_by_name_req": lambda request: ttypes.GetTablesResult(
        tables=[_table(request.dbName, name) for name in request.tblNames]
    ),
}


def test_a_metastore_with_the_req_form_is_asked_once_in_it() -> None:
    metastore = ScriptedMetastore(HIVE4)
    pool, _ = scripted_pool(metastore)
    client = MetastoreClient(pool)
    assert client.get_table("db", "t").tableName == "t"
    assert [t.tableName for t in client.get_table_objects_by_name("db", ["a", "b"])] == ["a", "b"]
    snapshot = pool.metrics.snapshot()
    assert snapshot.calls == {"get_table_req": 1, "get_table_objects_by_name_req": 1}
    assert snapshot.unsupported == {} and snapshot.errors == {}


def test_an_older_metastore_gets_the_legacy_call_on_the_same_connection_and_is_remembered() -> None:
    metastore = ScriptedMetastore(HIVE21)
    pool, opened = scripted_pool(metastore)
    client = MetastoreClient(pool)
    assert client.get_table("db", "t").tableName == "t"
    assert [name for name, _ in metastore.sent] == ["get_table_req", "get_table"]
    for name in ("u", "v"):
        assert client.get_table("db", name).tableName == name
    assert [t.tableName for t in client.get_table_objects_by_name("db", ["a"])] == ["a"]
    assert [t.tableName for t in client.get_table_objects_by_name("db", ["b"])] == ["b"]
    assert [name for name, _ in metastore.sent][2:] == [
        "get_table", "get_table", "get_table_objects_by_name_req", "get_table_objects_by_name", "get_table_objects_by_name",
    ]
    snapshot = pool.metrics.snapshot()
    assert snapshot.calls == {"get_table": 3, "get_table_objects_by_name": 2}
    assert snapshot.unsupported == {"get_table_req": 1, "get_table_objects_by_name_req": 1}
    assert snapshot.errors == {} and snapshot.retries == 0 and snapshot.clients_discarded == 0
    assert opened == list(parse_uris(URI))  # one connection throughout
    assert pool.unsupported_methods(parse_uris(URI)[0]) == {"get_table_req", "get_table_objects_by_name_req"}


def test_what_a_uri_refused_is_forgotten_when_it_fails_as_it_may_come_back_upgraded() -> None:
    failing = {"now": False}

    def get_table(database: str, name: str) -> ttypes.Table:
        if failing["now"]:
            failing["now"] = False
            raise TTransportException(TTransportException.END_OF_FILE, "restarting")
        return _table(database, name)

    metastore = ScriptedMetastore({"get_table": get_table})
    pool, _ = scripted_pool(metastore, uri_backoff=0.0)
    client = MetastoreClient(pool)
    client.get_table("db", "t")
    failing["now"] = True
    client.get_table("db", "t")  # fails on transport, retried
    assert [name for name, _ in metastore.sent] == ["get_table_req", "get_table", "get_table", "get_table_req", "get_table"]
    assert pool.metrics.snapshot().retries == 1


def test_a_metastore_answering_no_form_gets_an_error_naming_the_versions_and_no_retry() -> None:
    metastore = ScriptedMetastore({"get_all_databases": lambda: ["default"]})
    pool, _ = scripted_pool(metastore)
    client = MetastoreClient(pool)
    with pytest.raises(UnsupportedCallError) as raised:
        client.get_table("db", "t")
    message = str(raised.value)
    assert message.startswith(f"the metastore at {URI} answers none of get_table_req (Hive 2.3 and later), "
                              "get_table (Hive releases before 4.0.1)")
    assert message.endswith("it answered: Invalid method name: 'get_table'")
    assert isinstance(raised.value, MetastoreError)
    with pytest.raises(UnsupportedCallError, match=r"^the metastore at .* does not answer get_current_notificationEventId "
                                                   r"\(Hive 2.0 and later\); it answered: Invalid method name"):
        client.get_current_notification_event_id()
    # Known refusals are not asked again, and the connection kept working throughout.
    with pytest.raises(UnsupportedCallError):
        client.get_table("db", "t")
    assert client.get_all_databases() == ["default"]
    snapshot = pool.metrics.snapshot()
    assert snapshot.retries == 0 and snapshot.clients_discarded == 0 and snapshot.connections_opened == 1
    assert snapshot.unsupported == {"get_table_req": 1, "get_table": 1, "get_current_notificationEventId": 1}


def test_other_application_errors_are_not_taken_for_a_missing_method() -> None:
    def broken(request: Any) -> Any:
        raise TApplicationException(TApplicationException.INTERNAL_ERROR, "java.lang.NullPointerException")

    metastore = ScriptedMetastore({"get_table_req": broken, "get_table": _table})
    pool, _ = scripted_pool(metastore)
    with pytest.raises(MetastoreError, match="metastore call get_table_req failed: java.lang.NullPointerException"):
        MetastoreClient(pool).get_table("db", "t")
    assert [name for name, _ in metastore.sent] == ["get_table_req"]
    assert pool.metrics.snapshot().errors == {"get_table_req": 1}


def test_partition_calls_keep_the_legacy_form_first_and_move_to_hive4s_where_it_was_removed() -> None:
    partition = ttypes.Partition(values=["1"])
    hive4_without_legacy = ScriptedMetastore({
        "get_partitions_by_names_req": lambda request: ttypes.GetPartitionsByNamesResult(partitions=[partition]),
        "get_partitions_by_filter_req": lambda request: [partition],
    })
    pool, _ = scripted_pool(hive4_without_legacy)
    client = MetastoreClient(pool)
    assert client.get_partitions_by_names("db", "t", ["p=1"]) == [partition]
    assert client.get_partitions_by_filter("db", "t", "p = 1") == [partition]
    assert [name for name, _ in hive4_without_legacy.sent] == [
        "get_partitions_by_names", "get_partitions_by_names_req", "get_partitions_by_filter", "get_partitions_by_filter_req",
    ]
    by_names = hive4_without_legacy.sent[1][1][0]
    assert (by_names.db_name, by_names.tbl_name, by_names.names) == ("db", "t", ["p=1"])
    by_filter = hive4_without_legacy.sent[3][1][0]
    assert isinstance(by_filter, GetPartitionsByFilterRequest)
    assert (by_filter.catName, by_filter.dbName, by_filter.tblName, by_filter.filter, by_filter.maxParts) == (None, "db", "t", "p = 1", -1)

    legacy = ScriptedMetastore({"get_partitions_by_names": lambda db, t, names: [partition]})
    pool, _ = scripted_pool(legacy)
    assert MetastoreClient(pool).get_partitions_by_names("db", "t", ["p=1"]) == [partition]
    assert [name for name, _ in legacy.sent] == ["get_partitions_by_names"]


def _recording() -> ScriptedMetastore:
    return ScriptedMetastore({
        **HIVE21, **HIVE4,
        "get_databases": lambda pattern: ["db"],
        "get_all_databases": lambda: ["db"],
        "get_database": lambda name: ttypes.Database(name=name),
        "get_all_tables": lambda name: ["t"],
        "get_partition_names": lambda db, t, limit: ["p=1"],
        "get_partition_names_ps": lambda db, t, values, limit: ["p=1"],
        "get_partitions_by_names": lambda db, t, names: [],
        "get_partitions_by_filter": lambda db, t, expression, limit: [],
    })


def _every_call(client: MetastoreClient) -> None:
    client.get_all_databases()
    client.get_database("db")
    client.get_all_tables("db")
    client.get_table("db", "t")
    client.get_table_objects_by_name("db", ["t"])
    client.get_partition_names("db", "t")
    client.get_partition_names_ps("db", "t", ["1"])
    client.get_partitions_by_names("db", "t", ["p=1"])
    client.get_partitions_by_filter("db", "t", "p = 1")


def test_a_metastore_catalog_is_named_on_every_request_that_can_carry_one() -> None:
    metastore = _recording()
    pool, _ = scripted_pool(metastore, metastore_catalog="spark")
    _every_call(MetastoreClient(pool))
    sent = dict(metastore.sent)
    assert sent["get_databases"] == ("@spark#",)  # every database of that catalog, as Hive 3's client asks
    assert sent["get_database"] == ("@spark#db",)
    assert sent["get_all_tables"] == ("@spark#db",)
    assert (sent["get_table_req"][0].catName, sent["get_table_req"][0].dbName) == ("spark", "db")
    assert (sent["get_table_objects_by_name_req"][0].catName, sent["get_table_objects_by_name_req"][0].dbName) == ("spark", "db")
    assert sent["get_partition_names"][0] == sent["get_partition_names_ps"][0] == "@spark#db"
    assert sent["get_partitions_by_names"][0] == sent["get_partitions_by_filter"][0] == "@spark#db"
    assert "get_all_databases" not in sent


def test_without_a_metastore_catalog_requests_name_none() -> None:
    metastore = _recording()
    pool, _ = scripted_pool(metastore)
    _every_call(MetastoreClient(pool))
    sent = dict(metastore.sent)
    assert sent["get_all_databases"] == () and "get_databases" not in sent
    assert sent["get_table_req"][0].catName is None and sent["get_table_objects_by_name_req"][0].catName is None
    assert all(not str(args[0]).startswith("@") for name, args in metastore.sent if args and isinstance(args[0], str))


@pytest.mark.parametrize(("value", "expected"), [("hive", "hive"), (" Spark_2 ", "spark_2")])
def test_the_catalog_property_is_read_lower_cased(value: str, expected: str) -> None:
    config = CatalogConfig.from_properties(
        {"type": "hms", "hive.metastore.uris": URI, "hive.metastore.catalog.name": value}
    )
    assert config.client.metastore_catalog == expected
    assert CatalogConfig.from_properties({"type": "hms", "hive.metastore.uris": URI}).client.metastore_catalog is None


@pytest.mark.parametrize("value", ["", "a#b", "@hive", "two words"])
def test_a_bad_catalog_name_is_refused_naming_the_property(value: str) -> None:
    with pytest.raises(ConfigurationError, match=r"property 'hive.metastore.catalog.name' must be a metastore catalog name"):
        CatalogConfig.from_properties({"type": "hms", "hive.metastore.uris": URI, "hive.metastore.catalog.name": value})


def test_an_unreachable_metastore_is_still_a_transport_failure_not_a_version_one() -> None:
    def connect(uri: MetastoreUri, **_: float) -> Connection:
        raise ConnectionRefusedError("refused")

    pool = HmsClientPool(ClientConfig(uris=parse_uris(URI), retries=1, retry_delay=0.0), connect=connect, sleep=lambda _: None)
    with pytest.raises(MetastoreUnavailableError, match="get_table_req failed after 2 attempt"):
        MetastoreClient(pool).get_table("db", "t")
