"""SHOW TABLE STATUS, SHOW CACHE, SHOW SCHEMA CACHE and the caching contract, on the real metastore."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hms_catalog.errors import UnsupportedTypeError
from hms_catalog.execution import Session
from hms_catalog.model.database import TABLE_BATCH_SIZE
from tests.support import hms
from tests.support.hms import Admin
from tests.support.sessions import open_catalog

SEQUENCE = ("org.apache.hadoop.mapred.SequenceFileInputFormat", "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat",
            "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe")




@pytest.fixture
def mixed(admin: Admin, unique_name: str) -> Iterator[str]:
    admin.create_database(unique_name)
    admin.create_table(unique_name, "facts", [("id", "bigint")], partition_keys=[("dt", "string"), ("hr", "int")])
    admin.create_table(unique_name, "lines", [("line", "string")], formats=hms.TEXT)
    admin.create_table(unique_name, "seq", [("k", "string"), ("v", "int")], formats=SEQUENCE)
    admin.create_table(unique_name, "unions", [("id", "int"), ("u", "uniontype<int,string>"), ("s", "string")])
    yield unique_name
    admin.drop_database(unique_name)


def test_show_table_status_classifies_each_table_with_its_reason(session: Session, mixed: str) -> None:
    rows = {r["Name"]: r for r in session.run_one(f"SHOW TABLE STATUS FROM hive.{mixed}").as_dicts()}
    assert sorted(rows) == ["facts", "lines", "seq", "unions"]
    assert (rows["facts"]["Format"], rows["facts"]["FileFormat"], rows["facts"]["PartitionKeys"]) == ("HIVE", "parquet", "dt,hr")
    assert rows["lines"]["FileFormat"] == "text" and rows["lines"]["Location"].endswith(f"{mixed}.db/lines")
    assert rows["seq"]["Format"] == "UNKNOWN"
    assert rows["seq"]["Reason"] == "input format org.apache.hadoop.mapred.SequenceFileInputFormat is not supported"
    liked = session.run_one(f"SHOW TABLE STATUS FROM hive.{mixed} LIKE 'l%'")
    assert liked.column("Name") == ["lines"]


def test_an_unknown_table_still_describes(session: Session, mixed: str) -> None:
    rows = session.run_one(f"DESCRIBE hive.{mixed}.seq").rows
    assert [(r[0], r[1]) for r in rows] == [("k", "string"), ("v", "int")]


def test_a_uniontype_column_is_marked_unreadable_alone(session: Session, mixed: str) -> None:
    rows = {r[0]: r for r in session.run_one(f"DESCRIBE hive.{mixed}.unions").rows}
    assert rows["u"][1] == "uniontype<int,string>" and "unreadable" in rows["u"][4]
    assert rows["id"][1] == "int" and rows["s"][4] == ""
    schema = session.manager.catalog("hive").table(mixed, "unions").schema
    assert schema.spark_schema(["id", "s"]).fieldNames() == ["id", "s"]
    with pytest.raises(UnsupportedTypeError, match="column 'u'"):
        schema.spark_schema()


def test_show_table_status_loads_in_batches_and_fills_the_schema_cache(session: Session, admin: Admin, unique_name: str) -> None:
    count = TABLE_BATCH_SIZE + 30
    admin.create_database(unique_name)
    for index in range(count):
        admin.create_table(unique_name, f"t{index:03d}", [("id", "int")])
    catalog = session.manager.catalog("hive")
    before = catalog.metrics()
    rows = session.run_one(f"SHOW TABLE STATUS FROM hive.{unique_name}").rows
    assert len(rows) == count
    assert catalog.metrics().calls_since(before) == {"get_all_tables": 1, "get_table_objects_by_name_req": 2}
    warm = catalog.metrics()
    session.run_one(f"SHOW TABLE STATUS FROM hive.{unique_name}")
    session.run_one(f"DESCRIBE hive.{unique_name}.t007")
    assert catalog.metrics().calls_since(warm) == {}
    admin.drop_database(unique_name)


def test_show_cache_and_schema_cache_report_what_is_held(session: Session, mixed: str) -> None:
    session.run_one(f"DESCRIBE hive.{mixed}.facts")
    session.run_one(f"DESCRIBE hive.{mixed}.facts")
    shown = session.run_one("SHOW CACHE FROM hive")
    caches = {r["Cache"]: r for r in shown.as_dicts()}
    assert list(caches) == ["names", "schema", "partition_values", "partitions", "files", "file_blocks", "footers",
                            "iceberg_metadata", "iceberg_manifests", "iceberg_plans"]
    schema = caches["schema"]
    assert (schema["Entries"], schema["Hits"], schema["Misses"], schema["Loads"]) == (1, 1, 1, 1)
    assert (schema["Capacity"], schema["TtlSeconds"]) == (100000, 86400) and schema["AvgLoadMs"] > 0
    assert schema["Bytes"] > 0 and schema["MemoryEvictions"] == 0 and caches["partitions"]["Bytes"] == 0
    assert shown.message.startswith("cache memory: ") and shown.message.endswith("of a budget of 1.0 GiB")
    entries = session.run_one("SHOW SCHEMA CACHE FROM hive").as_dicts()
    assert [(e["Database"], e["Table"], e["Format"], e["Columns"]) for e in entries] == [(mixed, "facts", "HIVE", 3)]
    assert entries[0]["Hits"] == 1 and 0 <= entries[0]["AgeSeconds"] < 60 and entries[0]["LoadedAt"].endswith("Z")


def test_within_the_ttl_the_cached_schema_is_served_and_refresh_replaces_it(session: Session, admin: Admin, mixed: str) -> None:
    assert session.run_one(f"DESCRIBE hive.{mixed}.lines").column("Field") == ["line"]
    changed = admin.pool.call("get_table", mixed, "lines")
    changed.sd.cols.append(type(changed.sd.cols[0])("added", "int", ""))
    admin.pool.call("alter_table", mixed, "lines", changed)
    assert session.run_one(f"DESCRIBE hive.{mixed}.lines").column("Field") == ["line"]
    session.run_one(f"REFRESH DATABASE hive.{mixed}")
    assert session.run_one(f"DESCRIBE hive.{mixed}.lines").column("Field") == ["line", "added"]


def test_a_short_ttl_expires_the_schema(home: Path, metastore_uri: str, admin: Admin, mixed: str) -> None:
    session = open_catalog(home, metastore_uri, **{"schema.cache.ttl-second": "1"})
    try:
        assert session.run_one(f"DESCRIBE hive.{mixed}.facts").column("Field") == ["id", "dt", "hr"]
        changed = admin.pool.call("get_table", mixed, "facts")
        changed.sd.cols.append(type(changed.sd.cols[0])("late", "string", ""))
        admin.pool.call("alter_table", mixed, "facts", changed)
        time.sleep(1.2)
        assert session.run_one(f"DESCRIBE hive.{mixed}.facts").column("Field") == ["id", "late", "dt", "hr"]
        assert session.run_one("SHOW CACHE FROM hive").as_dicts()[1]["Evictions"] >= 1
    finally:
        session.manager.close()


def test_a_disabled_schema_cache_asks_every_time(home: Path, metastore_uri: str, mixed: str) -> None:
    session = open_catalog(home, metastore_uri, **{"schema.cache.ttl-second": "0"})
    try:
        catalog = session.manager.catalog("hive")
        before = catalog.metrics()
        for _ in range(3):
            session.run_one(f"DESCRIBE hive.{mixed}.facts")
        assert catalog.metrics().calls_since(before) == {"get_table_req": 3}
    finally:
        session.manager.close()


def test_refresh_table_drops_entries_even_after_they_were_evicted(session: Session, mixed: str) -> None:
    catalog = session.manager.catalog("hive")
    session.run_one(f"DESCRIBE hive.{mixed}.facts")
    catalog.caches.partition_values.put((mixed, "facts", ""), ("dt=1/hr=2",), ticket=catalog.caches.versions.current)
    catalog.caches.files.put((mixed, "facts", "file:///somewhere"), (), ticket=catalog.caches.versions.current)
    catalog.caches.schema.invalidate((mixed, "facts"))  # as if evicted
    session.run_one(f"REFRESH TABLE hive.{mixed}.facts")
    assert catalog.caches.partition_values.peek((mixed, "facts", "")) is None
    assert catalog.caches.files.peek((mixed, "facts", "file:///somewhere")) is None
