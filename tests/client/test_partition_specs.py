"""Partitions with a projection (Hive 4's get_partitions_with_specs) and column statistics: the requests
the client builds, how answers are read, and the classic calls a metastore without them gets.

Pure logic over scripted connections (test_call_forms.py's); the embedded Hive 2.3 metastore, which lacks
get_partitions_with_specs, is asked in test_column_statistics.py and the planner's pushdown tests.
"""

from __future__ import annotations

import pytest

from hms_catalog.client import MetastoreClient
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.partition_specs import PLANNING_FIELDS, partitions_of, partitions_request
from hms_catalog.client.versions import ANSWERED_BY
from tests.support.scripted_metastore import ScriptedMetastore, scripted_pool


def _response(partitions: list[ttypes.Partition]) -> ttypes.GetPartitionsResponse:
    """An answer as Hive groups it: partitions under the table folder share one descriptor."""
    shared = ttypes.StorageDescriptor(location="hdfs://nn/w/t", inputFormat="in", serdeInfo=ttypes.SerDeInfo(serializationLib="serde"))
    inside = [p for p in partitions if p.sd.location.startswith("hdfs://nn/w/t")]
    outside = [p for p in partitions if p not in inside]
    return ttypes.GetPartitionsResponse(partitionSpec=[
        ttypes.PartitionSpec(dbName="db", tableName="t", rootPath="hdfs://nn/w/t", sharedSDPartitionSpec=ttypes.PartitionSpecWithSharedSD(
            sd=shared,
            partitions=[ttypes.PartitionWithoutSD(values=p.values, relativePath=p.sd.location[len("hdfs://nn/w/t"):],
                                                  parameters=p.parameters) for p in inside],
        )),
        ttypes.PartitionSpec(dbName="db", tableName="t", partitionList=ttypes.PartitionListComposingSpec(partitions=outside)),
    ])


PARTITIONS = [
    ttypes.Partition(values=["1"], sd=ttypes.StorageDescriptor(location="hdfs://nn/w/t/p=1"), parameters={"numRows": "10"}),
    ttypes.Partition(values=["2"], sd=ttypes.StorageDescriptor(location="s3a://elsewhere/p=2", inputFormat="in2"),
                     parameters={"numRows": "20"}),
]


def test_the_request_asks_for_the_planning_fields_by_filter_or_by_names() -> None:
    by_filter = partitions_request("db", "t", "spark", PLANNING_FIELDS, expression='p > "1"')
    assert (by_filter.catName, by_filter.dbName, by_filter.tblName) == ("spark", "db", "t")
    assert by_filter.projectionSpec.fieldList == ["values", "sd.location", "sd.inputFormat",
                                                  "sd.serdeInfo.serializationLib", "parameters"]
    assert by_filter.filterSpec.filterMode == ttypes.PartitionFilterMode.BY_EXPR and by_filter.filterSpec.filters == ['p > "1"']
    by_names = partitions_request("db", "t", None, ["values"], names=["p=1", "p=2"])
    assert by_names.filterSpec.filterMode == ttypes.PartitionFilterMode.BY_NAMES and by_names.filterSpec.filters == ["p=1", "p=2"]
    assert partitions_request("db", "t", None, ["values"]).filterSpec.filterMode is None  # every partition
    with pytest.raises(ValueError, match="not both"):
        partitions_request("db", "t", None, ["values"], names=["p=1"], expression="p = 1")


def test_an_answer_becomes_partitions_with_their_locations() -> None:
    found = partitions_of(_response(PARTITIONS))
    assert [(p.values, p.sd.location, p.sd.inputFormat, p.parameters) for p in found] == [
        (["1"], "hdfs://nn/w/t/p=1", "in", {"numRows": "10"}),
        (["2"], "s3a://elsewhere/p=2", "in2", {"numRows": "20"}),
    ]
    assert found[0].sd.serdeInfo.serializationLib == "serde" and (found[0].dbName, found[0].tableName) == ("db", "t")
    assert partitions_of(ttypes.GetPartitionsResponse(partitionSpec=[])) == []


def test_a_metastore_with_projections_is_asked_once_with_them() -> None:
    hive4 = ScriptedMetastore({"get_partitions_with_specs": lambda request: _response(PARTITIONS)})
    pool, _ = scripted_pool(hive4, metastore_catalog="hive")
    client = MetastoreClient(pool)
    assert [p.values for p in client.get_partitions_by_filter("db", "t", 'p > "0"', fields=PLANNING_FIELDS)] == [["1"], ["2"]]
    assert [p.values for p in client.get_partitions_by_names("db", "t", ["p=1", "p=2"], fields=PLANNING_FIELDS)] == [["1"], ["2"]]
    sent = [request for _, (request,) in hive4.sent]
    assert [s.filterSpec.filterMode for s in sent] == [ttypes.PartitionFilterMode.BY_EXPR, ttypes.PartitionFilterMode.BY_NAMES]
    assert all(s.catName == "hive" and s.dbName == "db" for s in sent)


def test_an_older_metastore_gets_the_classic_calls_and_is_not_asked_the_new_form_again() -> None:
    hive23 = ScriptedMetastore({
        "get_partitions_by_filter": lambda db, t, expression, limit: PARTITIONS,
        "get_partitions_by_names": lambda db, t, names: PARTITIONS[:1],
    })
    pool, _ = scripted_pool(hive23)
    client = MetastoreClient(pool)
    assert client.get_partitions_by_filter("db", "t", "p > 0", fields=PLANNING_FIELDS) == PARTITIONS
    assert client.get_partitions_by_names("db", "t", ["p=1"], fields=PLANNING_FIELDS) == PARTITIONS[:1]
    assert client.get_partitions_by_filter("db", "t", "p > 0", fields=PLANNING_FIELDS) == PARTITIONS
    assert [name for name, _ in hive23.sent] == [
        "get_partitions_with_specs", "get_partitions_by_filter", "get_partitions_by_names", "get_partitions_by_filter",
    ]
    assert pool.metrics.snapshot().unsupported == {"get_partitions_with_specs": 1}
    assert "get_partitions_with_specs" in ANSWERED_BY


def test_without_fields_or_with_a_limit_the_classic_call_is_asked_first() -> None:
    hive4 = ScriptedMetastore({
        "get_partitions_with_specs": lambda request: _response(PARTITIONS),
        "get_partitions_by_filter": lambda db, t, expression, limit: PARTITIONS[:limit],
    })
    pool, _ = scripted_pool(hive4)
    client = MetastoreClient(pool)
    client.get_partitions_by_filter("db", "t", "p > 0")
    assert client.get_partitions_by_filter("db", "t", "p > 0", 1, fields=PLANNING_FIELDS) == PARTITIONS[:1]
    assert [name for name, _ in hive4.sent] == ["get_partitions_by_filter", "get_partitions_by_filter"]


def test_statistics_requests_name_the_columns_partitions_catalog_and_engine() -> None:
    stats = ttypes.ColumnStatisticsObj("id", "int", ttypes.ColumnStatisticsData(
        longStats=ttypes.LongColumnStatsData(lowValue=1, highValue=9, numNulls=0, numDVs=9)))
    metastore = ScriptedMetastore({
        "get_table_statistics_req": lambda request: ttypes.TableStatsResult(tableStats=[stats]),
        "get_partitions_statistics_req": lambda request: ttypes.PartitionsStatsResult(partStats={"p=1": [stats]}),
    })
    pool, _ = scripted_pool(metastore, metastore_catalog="hive")
    client = MetastoreClient(pool)
    assert client.get_table_column_statistics("db", "t", ["id"]) == [stats]
    assert client.get_partitions_column_statistics("db", "t", ["p=1", "p=2"], ["id"]) == {"p=1": [stats]}
    table_request, partitions_request_sent = (args[0] for _, args in metastore.sent)
    assert (table_request.dbName, table_request.tblName, table_request.colNames) == ("db", "t", ["id"])
    assert (table_request.catName, table_request.engine) == ("hive", "hive")  # Hive 4 requires the engine
    assert (partitions_request_sent.partNames, partitions_request_sent.colNames) == (["p=1", "p=2"], ["id"])
    assert (partitions_request_sent.catName, partitions_request_sent.engine) == ("hive", "hive")


def test_no_statistics_is_an_empty_answer() -> None:
    metastore = ScriptedMetastore({
        "get_table_statistics_req": lambda request: ttypes.TableStatsResult(tableStats=[]),
        "get_partitions_statistics_req": lambda request: ttypes.PartitionsStatsResult(partStats={}),
    })
    pool, _ = scripted_pool(metastore)
    client = MetastoreClient(pool)
    assert client.get_table_column_statistics("db", "t", ["id"]) == []
    assert client.get_partitions_column_statistics("db", "t", ["p=1"], ["id"]) == {}
