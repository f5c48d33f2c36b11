"""A catalog whose metastore answers as Hive 4.0.1 does (no ``get_table``, no ``get_table_objects_by_name``):
clients of every age still get tables and partitions through the endpoint.

The endpoint is what lets a Hive 2 client keep working against a Hive 4 metastore: it answers the legacy calls
itself (from the caches, loaded with the ``_req`` calls the upstream has), so neither the client's legacy
call nor a refusal reaches the client. The upstream is the embedded Hive 2.3 behind a proxy that refuses
the removed methods as Hive 4's processor would.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hmsclient import HMSClient
from hmsclient.genthrift.hive_metastore import ttypes as hive2

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import parse_uris
from tests.service.thrift.conftest import Endpoint, thrift_client
from tests.support.hms import Admin
from tests.support.thrift_proxy import HIVE4_REMOVED, RefusingProxy

CATALOG = "hive4"


@pytest.fixture
def proxy(metastore: EmbeddedMetastore) -> Iterator[RefusingProxy]:
    upstream = parse_uris(metastore.uri)[0]
    with RefusingProxy((upstream.host, upstream.port), HIVE4_REMOVED) as running:
        yield running


@pytest.fixture
def hive4(endpoint: Endpoint, proxy: RefusingProxy) -> str:
    """A catalog of the endpoint whose metastore is the Hive 4 proxy."""
    endpoint.manager.create(CATALOG, {"type": "hms", "hive.metastore.uris": proxy.uri,
                                      "hive.metastore.failure.retries": "0"})
    return CATALOG


@pytest.fixture
def partitioned(admin: Admin, unique_name: str) -> Iterator[str]:
    db = unique_name
    location = admin.create_database(db)
    admin.create_table(db, "sales", [("id", "int"), ("amount", "double")], partition_keys=[("day", "string")])
    for day in ["2024-01-01", "2024-01-02", "2024-01-03"]:
        admin.add_partition(db, "sales", [day], location / "sales" / f"day={day}")
    yield db
    admin.drop_database(db)


def _by_values(partitions: list[Any]) -> list[Any]:
    return sorted(partitions, key=lambda partition: partition.values)


def test_legacy_calls_answered_over_a_hive4_metastore(endpoint: Endpoint, hive4: str, proxy: RefusingProxy,
                                                      partitioned: str, client: Any) -> None:
    db, federated = partitioned, f"{hive4}__{partitioned}"
    expected_table = client.get_table(db, "sales")
    expected_partitions = _by_values(client.get_partitions_by_filter(db, "sales", "day >= '2024-01-01'"))
    assert len(expected_partitions) == 3

    with thrift_client(endpoint.port) as ours:
        table = ours.get_table(federated, "sales")  # the call Hive 4 removed, from a client that still makes it
        assert table.dbName == federated and table.sd == expected_table.sd
        assert table.partitionKeys == expected_table.partitionKeys
        (batched,) = ours.get_table_objects_by_name(federated, ["sales"])
        assert batched == table
        answer = ours.get_table_req(ttypes.GetTableRequest(dbName=federated, tblName="sales"))
        assert answer.table == table

        partitions = _by_values(ours.get_partitions(federated, "sales", -1))
        assert [p.values for p in partitions] == [p.values for p in expected_partitions]
        assert [p.sd.location for p in partitions] == [p.sd.location for p in expected_partitions]
        assert {p.dbName for p in partitions} == {federated}
        assert ours.get_partition_names(federated, "sales", -1) == ["day=2024-01-01", "day=2024-01-02", "day=2024-01-03"]
        chosen = ours.get_partitions_by_filter(federated, "sales", "day > '2024-01-01'", -1)
        assert sorted(p.values for p in chosen) == [["2024-01-02"], ["2024-01-03"]]
        (one,) = ours.get_partitions_by_names(federated, "sales", ["day=2024-01-02"])
        assert one.values == ["2024-01-02"]

    # a Hive 2 client, whose bindings have no _req calls at all
    with HMSClient(host="127.0.0.1", port=endpoint.port) as old:
        legacy = old.get_table(federated, "sales")
        assert isinstance(legacy, hive2.Table)
        assert (legacy.dbName, legacy.sd.location) == (federated, expected_table.sd.location)
        assert sorted(p.values for p in old.get_partitions(federated, "sales", -1)) == [p.values for p in expected_partitions]

    seen = proxy.seen
    assert seen["get_table_req"] >= 1  # the catalog loaded the table with the call Hive 4 has
    assert not proxy.refused  # and never sent the upstream a call it lacks
    assert not endpoint.manager.catalog(hive4).metrics().unsupported
