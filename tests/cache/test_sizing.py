"""How cached values are weighed: close to what the Python heap holds for them (tracemalloc says), each
object once, long collections sampled, and without changing what is measured."""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
from thrift.TSerialization import deserialize, serialize

from hms_catalog.cache import sizing
from hms_catalog.cache.sizing import SAMPLES, batch_sizes, collection_sizes, deep_size
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.formats.metadata import load_table_metadata

_TRACE_DEPTH = 4  # frames kept per allocation: this file's is among the innermost four of every one traced here


def partition(number: int, columns: int = 20) -> ttypes.Partition:
    cols = [ttypes.FieldSchema(name=f"column_{c}", type="bigint" if c % 2 else "string") for c in range(columns)]
    sd = ttypes.StorageDescriptor(
        cols=cols, location=f"hdfs://nn:8020/warehouse/db.db/t/dt=2024-01-{number % 28:02d}/hr={number % 24}",
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat", numBuckets=-1,
        serdeInfo=ttypes.SerDeInfo(serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                                   parameters={"serialization.format": "1"}), bucketCols=[], sortCols=[], parameters={})
    return ttypes.Partition(values=[f"2024-01-{number % 28:02d}", str(number % 24)], dbName="db", tableName="t",
                            createTime=1700000000 + number, sd=sd,
                            parameters={"transient_lastDdlTime": str(1700000000 + number), "numFiles": "3"})


def traced(make: Callable[[], Any]) -> tuple[Any, int]:
    """What ``make`` returns, and the bytes of the Python heap its allocations still hold: only allocations made
    under this file's frames count, so another thread's allocations are not counted. No other thread runs
    meanwhile either (the interpreter's switch interval is raised for the measure): one that frees objects (a
    pytest-xdist worker's channel) fills the interpreter's free lists of dicts and lists, and the objects
    ``make`` then takes from them are never traced (a partition of 6,644 bytes was counted as 5,700). The full
    collection first empties those lists."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(60.0)
    try:
        gc.collect()
        tracemalloc.start(_TRACE_DEPTH)
        made = make()
        snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, __file__, all_frames=True)])
        return made, sum(trace.size for trace in snapshot.traces)
    finally:
        tracemalloc.stop()
        sys.setswitchinterval(interval)


def decoded(values: list[Any]) -> list[Any]:
    """Copies as the metastore client makes them (thrift's accelerated decoder), so no string is shared."""
    factory = TBinaryProtocolAcceleratedFactory()
    return [deserialize(type(value)(), serialize(value, factory), factory) for value in values]


@pytest.mark.parametrize("count", [1, 500])
def test_thrift_partitions_weigh_what_the_heap_holds_for_them(count: int) -> None:
    blobs = [partition(number) for number in range(count)]
    decoded(blobs[:1])  # the decoder's own first-use allocations are not the partitions'
    made, heap = traced(lambda: decoded(blobs))
    assert deep_size(made) == pytest.approx(heap, rel=0.1)


def test_a_long_list_of_names_is_sampled_and_close(monkeypatch: pytest.MonkeyPatch) -> None:
    names, heap = traced(lambda: tuple(f"dt=2024-01-{n % 28:02d}/hr={n % 24}/file={n}" for n in range(100_000)))
    weighed: list[object] = []
    getsizeof = sizing._getsizeof

    def counted(obj: object) -> int:
        weighed.append(obj)
        return getsizeof(obj)

    monkeypatch.setattr(sizing, "_getsizeof", counted)
    measured = deep_size(names)
    assert len(weighed) == SAMPLES + 1  # the tuple and 16 of its strings, not 100,000
    assert measured == pytest.approx(heap, rel=0.03)


def test_an_object_reached_twice_counts_once_and_shared_singletons_not_at_all() -> None:
    text = "x" * 1000
    once = deep_size([text])
    assert deep_size([text, text]) == once + 8  # one more pointer, not another string
    assert deep_size([None, True, False]) == deep_size([0, 0, 0]) - 3 * deep_size(0)


def test_an_object_shared_by_every_item_of_a_sampled_list_is_not_multiplied() -> None:
    @dataclass
    class Task:
        path: str
        residual: Any

    residual = ["r" * 100_000]  # one filter, the same object in every task
    tasks = [Task(f"/data/file-{n:06d}.parquet", residual) for n in range(10_000)]
    alone = deep_size([Task(f"/data/file-{n:06d}.parquet", None) for n in range(10_000)])
    assert deep_size(tasks) == pytest.approx(alone + deep_size(residual), rel=0.02)


def test_measuring_reads_no_instance_dict_into_being() -> None:
    """CPython 3.11+ keeps an instance's fields beside it until ``__dict__`` is read; reading it to measure
    would grow every cached struct."""
    structs = decoded([partition(0)])
    deep_size(structs)  # once, so any memo of the classes is made
    copies = decoded([partition(n) for n in range(200)])
    _, grown = traced(lambda: deep_size(copies))
    assert grown < 2000  # the walk's own set and counters, nothing per struct


def test_a_table_entry_counts_its_struct_detection_and_schema_but_not_what_entries_share() -> None:
    from hms_catalog.cache.catalog_caches import UNLOADED_SCHEMA_FACTOR, _table_metadata_size

    table = ttypes.Table(tableName="t", dbName="db", owner="me", tableType="EXTERNAL_TABLE",
                         sd=partition(0).sd, partitionKeys=[ttypes.FieldSchema(name="dt", type="string")],
                         parameters={"numRows": "5"})
    shared = {"s3.secret": "x" * 100_000}  # the catalog's IO properties: every entry's, so none's
    metadata = load_table_metadata(table, shared)
    columns = deep_size((table.sd.cols, table.partitionKeys))
    before = _table_metadata_size(metadata)
    assert before < 100_000 and before == deep_size((table, metadata.detection)) + int(columns * UNLOADED_SCHEMA_FACTOR)
    assert metadata.schema is not None  # loaded: measured rather than estimated, and close to the estimate
    assert _table_metadata_size(metadata) == pytest.approx(before, rel=0.25)


def test_a_batch_weighs_a_sample_and_gives_the_others_its_median() -> None:
    weighed: list[int] = []

    def weigh(value: int) -> int:
        weighed.append(value)
        return value

    assert batch_sizes(list(range(5)), weigh) == [0, 1, 2, 3, 4] and weighed == [0, 1, 2, 3, 4]
    weighed.clear()
    sizes = batch_sizes([100] * 999 + [7], weigh)
    assert len(weighed) == SAMPLES and len(sizes) == 1000 and set(sizes) == {100}


def _listing(folder: int, files: int) -> tuple[tuple[Any, ...], ...]:
    """A folder's listing as the files cache holds one: (path, size, mtime, blocks) of each file, each file's
    blocks made for it (offsets and hosts), as a block locator makes them."""
    return tuple((f"file:/warehouse/t/part={folder}/part-{index:05d}.parquet", 1000 + index, 1_700_000_000_000 + index,
                  (tuple([0]), (tuple(["localhost"]),))) for index in range(files))


def test_listings_are_charged_by_their_length_from_a_weighed_sample() -> None:
    """A chunk of listings of one table: a folder of 1,000 files is charged about a thousand times one of a single
    file (the median of batch_sizes would charge both the same), each within 10% of its own walk."""
    listings = [_listing(folder, 1000 if folder % 50 == 7 else 0 if folder % 50 == 9 else 1 + folder % 3)
                for folder in range(200)]
    sizes = collection_sizes(listings)
    assert len(sizes) == len(listings)
    for listed, size in zip(listings, sizes):
        assert size == pytest.approx(deep_size(listed), rel=0.1), len(listed)
    assert collection_sizes(listings[:SAMPLES]) == [deep_size(listed) for listed in listings[:SAMPLES]]


def test_listings_mostly_empty_are_charged_from_the_ones_that_are_not() -> None:
    """A table of many empty partitions: the samples are taken among the listings that hold files, so a folder of
    200 files among 500 empty ones is not charged as if its files weighed nothing."""
    listings = [_listing(folder, 200 if folder % 25 == 0 else 0) for folder in range(500)]
    sizes = collection_sizes(listings)
    for listed, size in zip(listings, sizes):
        assert size == pytest.approx(deep_size(listed), rel=0.1), len(listed)
