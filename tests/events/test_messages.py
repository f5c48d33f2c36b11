"""Decoding notification messages: an ADD_PARTITION of one large call is read whole, and its partitions
read with the json module come out as thrift's own JSON protocol reader would give them."""

from __future__ import annotations

import base64
import gzip
import json

from thrift.protocol import TJSONProtocol
from thrift.TSerialization import deserialize, serialize

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.events import decode_event
from hms_catalog.formats.partition_names import make_partition_name
from tests.support.hms import table_struct

_JSON = TJSONProtocol.TJSONProtocolFactory()
_TABLE = table_struct("db", "wide", [("id", "int")], "file:/warehouse/db.db/wide",
                      partition_keys=[("dt", "string"), ("part", "string")])


def _partition(values: list[str], location: str) -> ttypes.Partition:
    sd = ttypes.StorageDescriptor(**{**_TABLE.sd.__dict__, "location": location})
    return ttypes.Partition(values=values, dbName="db", tableName="wide", createTime=1, lastAccessTime=0, sd=sd,
                            parameters={"transient_lastDdlTime": "1"})


def _add_partition_event(partitions: list[ttypes.Partition], message_format: str = "json-0.2", *,
                         listed: list[str] | None = None) -> ttypes.NotificationEvent:
    """The event Hive's JSONMessageFactory writes for one add_partitions call of ``partitions``; ``listed``:
    their thrift JSON texts, when already made."""
    message = json.dumps({
        "server": "", "servicePrincipal": "", "db": "db", "table": "wide", "timestamp": 1,
        "tableObjJson": serialize(_TABLE, _JSON).decode("utf-8"),
        "partitions": [{"dt": p.values[0], "part": p.values[1]} for p in partitions],
        "partitionListJson": listed if listed is not None else [serialize(p, _JSON).decode("utf-8") for p in partitions],
    })
    if message_format.startswith("gzip"):
        message = base64.b64encode(gzip.compress(message.encode("utf-8"))).decode("ascii")
    return ttypes.NotificationEvent(eventId=7, eventTime=1, eventType="ADD_PARTITION", dbName="db", tableName="wide",
                                    message=message, messageFormat=message_format)


def test_listed_partitions_read_as_thrift_reads_them() -> None:
    awkward = [
        (["2024-01-01", "plain"], "file:/warehouse/db.db/wide/dt=2024-01-01/part=plain"),
        (["a/b", 'quote " and \\ backslash'], "file:/warehouse/db.db/wide/dt=a%2Fb/part=quote"),
        (["ünïcødé", "emoji 😀"], "s3a://bucket/wide/dt=ünïcødé/part=emoji 😀"),
        (["__HIVE_DEFAULT_PARTITION__", "tab\tnewline\n"], "hdfs://nn:8020/wide/dt=__HIVE_DEFAULT_PARTITION__/x"),
    ]
    partitions = [_partition(values, location) for values, location in awkward]
    event = _add_partition_event(partitions)
    by_thrift = [deserialize(ttypes.Partition(), text.encode("utf-8"), _JSON)
                 for text in json.loads(event.message)["partitionListJson"]]
    decoded = decode_event(event)
    assert [(p.name, p.location) for p in decoded.partitions] == [
        (make_partition_name(["dt", "part"], p.values), p.sd.location) for p in by_thrift]
    assert decoded.partitions[1].location == awkward[1][1] and decoded.partitions[2].location == awkward[2][1]


def test_ten_thousand_partitions_of_one_call_are_decoded_whole() -> None:
    """One MSCK REPAIR TABLE's event: 11 MB of JSON (read with json, not thrift's pure-Python JSON reader,
    which took 5.6 s for it against about 0.2 s; timings belong in benchmarks, not here)."""
    deep = "/".join(f"level_{depth:02d}_of_a_deeply_nested_warehouse_layout" for depth in range(4))
    partitions = [_partition([f"2024-01-{n % 28 + 1:02d}", f"bucket_{n:06d}"],
                             f"file:/warehouse/db.db/wide/{deep}/dt=2024-01-{n % 28 + 1:02d}/part=bucket_{n:06d}")
                  for n in range(10_000)]
    # Thrift's pure-Python JSON writer once, for the first partition; the others are its text with their own
    # values and location (plain ASCII, the same length: nothing else of the text changes), each checked below.
    first = partitions[0]
    template = serialize(first, _JSON).decode("utf-8")
    listed = [template.replace(first.sd.location, p.sd.location).replace(f'"{first.values[1]}"', f'"{p.values[1]}"')
              .replace(f'"{first.values[0]}"', f'"{p.values[0]}"') for p in partitions]
    assert deserialize(ttypes.Partition(), listed[-1].encode("utf-8"), _JSON) == partitions[-1]
    for message_format in ("json-0.2", "gzip(json-2.0)"):
        event = _add_partition_event(partitions, message_format, listed=listed)
        decoded = decode_event(event)
        assert len(decoded.partitions) == 10_000 and len({p.name for p in decoded.partitions}) == 10_000
        assert decoded.partitions[-1].name == "dt=2024-01-04/part=bucket_009999"
        assert decoded.partitions[-1].location == partitions[-1].sd.location
        assert [(p.name, p.location) for p in decoded.partitions] == [
            (make_partition_name(["dt", "part"], p.values), p.sd.location) for p in partitions]


def _event(kind: str, **fields: str) -> ttypes.NotificationEvent:
    return ttypes.NotificationEvent(eventId=8, eventTime=1, eventType=kind, dbName="db", tableName="wide",
                                    message=json.dumps({"db": "db", "table": "wide", **fields}), messageFormat="json-0.2")


def test_table_objects_read_as_thrift_reads_them() -> None:
    """An ALTER TABLE's tables (names, partition keys, parameters with an Iceberg metadata location) and the tables
    and partitions of partition events, read with json, as thrift's own reader gives them."""
    before = table_struct("Db", "Wide", [("id", "int")], "file:/w/wide", partition_keys=[("DT", "string"), ("part", "string")],
                          parameters={"metadata_location": 's3://b/ünï "q"/1.json', "empty": ""})
    after = table_struct("db2", "Renamed", [("id", "int")], "file:/w/wide", partition_keys=[("dt", "string")],
                         parameters={"metadata_location": "s3://b/2.json"})
    altered = decode_event(_event("ALTER_TABLE", tableObjBeforeJson=serialize(before, _JSON).decode("utf-8"),
                                  tableObjAfterJson=serialize(after, _JSON).decode("utf-8")))
    assert (altered.database, altered.table, altered.new_database, altered.new_table) == ("db", "wide", "db2", "renamed")
    assert (altered.previous_metadata_location, altered.metadata_location) == ('s3://b/ünï "q"/1.json', "s3://b/2.json")
    unpartitioned = table_struct("db", "wide", [("id", "int")], "file:/w/wide")
    unpartitioned.parameters = {}
    plain = decode_event(_event("ALTER_TABLE", tableObjAfterJson=serialize(unpartitioned, _JSON).decode("utf-8")))
    assert plain.metadata_location is None and not plain.renamed

    table = serialize(before, _JSON).decode("utf-8")
    old, new = _partition(["a", "b"], "file:/w/wide/dt=a/part=b"), _partition(["a", "c"], "file:/w/wide/dt=a/part=c")
    moved = decode_event(_event("ALTER_PARTITION", tableObjJson=table, partitionObjBeforeJson=serialize(old, _JSON).decode(),
                                partitionObjAfterJson=serialize(new, _JSON).decode()))
    assert [(p.name, p.location) for p in (*moved.previous_partitions, *moved.partitions)] == [
        ("dt=a/part=b", "file:/w/wide/dt=a/part=b"), ("dt=a/part=c", "file:/w/wide/dt=a/part=c")]
    inserted = decode_event(_event("INSERT", tableObjJson=table, ptnObjJson=serialize(new, _JSON).decode()))
    assert [p.name for p in inserted.partitions] == ["dt=a/part=c"]
    dropped = decode_event(_event("DROP_PARTITION", tableObjJson=table, partitions=[{"part": "b", "DT": "a"}]))  # type: ignore[arg-type]
    assert [p.name for p in dropped.partitions] == ["dt=a/part=b"]  # in the table's key order, whatever the map's
