"""REFRESH announced through the home reaches the other processes' managers."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hms_catalog.manager import CatalogManager
from hms_catalog.refresh_log import LOST_TRACK, RefreshLog, RefreshRecord
from hms_catalog.store import CatalogStore
from tests.support.hms import Admin


def test_others_records_arrive_once_and_ones_own_never(home: Path) -> None:
    mine, theirs = RefreshLog(home), RefreshLog(home)
    assert mine.poll() == [] and theirs.poll() == []
    mine.announce(RefreshRecord("c1", "db", "t"))
    theirs.announce(RefreshRecord("c1", "db"))
    assert mine.poll() == [RefreshRecord("c1", "db", None, theirs.writer)]
    assert theirs.poll() == [RefreshRecord("c1", "db", "t", mine.writer)]
    assert mine.poll() == [] and theirs.poll() == []
    assert stat.S_IMODE((home / "refreshes.log").stat().st_mode) == 0o600


def test_a_reader_starts_where_it_first_looks(home: Path) -> None:
    RefreshLog(home).announce(RefreshRecord("c1"))
    late = RefreshLog(home)
    assert late.poll() == []  # a manager made now has nothing cached from before
    RefreshLog(home).announce(RefreshRecord("c2"))
    assert [record.catalog_id for record in late.poll()] == ["c2"]


def test_a_log_that_appears_after_the_first_look_is_read_whole(home: Path) -> None:
    reader = RefreshLog(home)
    assert reader.poll() == []
    RefreshLog(home).announce(RefreshRecord("c1"))
    assert [record.catalog_id for record in reader.poll()] == ["c1"]


def test_a_half_written_line_waits_for_its_end(home: Path) -> None:
    reader = RefreshLog(home)
    RefreshLog(home).announce(RefreshRecord("c0"))
    reader.poll()
    with open(home / "refreshes.log", "ab") as handle:
        handle.write(b'{"catalog":"c1","database":null,"table":null,')
    assert reader.poll() == []
    with open(home / "refreshes.log", "ab") as handle:
        handle.write(b'"writer":"w"}\n')
    assert reader.poll() == [RefreshRecord("c1", None, None, "w")]


def test_a_replaced_or_shortened_log_means_lost_track(home: Path) -> None:
    writer, reader = RefreshLog(home, max_bytes=300), RefreshLog(home)
    writer.announce(RefreshRecord("c0"))
    reader.poll()
    for index in range(5):  # past max_bytes the writer starts an empty file
        writer.announce(RefreshRecord(f"c{index}", "database", "table"))
    assert (home / "refreshes.log").stat().st_size < 300
    assert reader.poll() is LOST_TRACK
    assert reader.poll() == []
    os.truncate(home / "refreshes.log", 0)
    writer.announce(RefreshRecord("c9"))
    RefreshLog(home).announce(RefreshRecord("c9"))
    os.truncate(home / "refreshes.log", 10)
    assert reader.poll() is LOST_TRACK
    os.unlink(home / "refreshes.log")
    assert reader.poll() is LOST_TRACK


def test_an_unreadable_line_refreshes_everything(home: Path) -> None:
    reader = RefreshLog(home)
    reader.poll()
    with open(home / "refreshes.log", "ab") as handle:
        handle.write(b"not json\n")
    assert [record.catalog_id for record in reader.poll()] == ["*"]


def test_a_refresh_in_one_manager_reaches_another_on_the_same_home(
    home: Path, metastore_uri: str, admin: Admin, unique_name: str
) -> None:
    """Two managers stand for two processes (a REPL and Spark's planning worker) on one home."""
    here, there = CatalogManager(CatalogStore(home)), CatalogManager(CatalogStore(home))
    here.create("hive", {"type": "hms", "hive.metastore.uris": metastore_uri})
    admin.create_database(unique_name)
    admin.create_table(unique_name, "first", [("id", "bigint")])
    try:
        assert there.catalog("hive").database(unique_name).table_names() == ("first",)
        admin.create_table(unique_name, "second", [("id", "bigint")])
        assert there.catalog("hive").database(unique_name).table_names() == ("first",)  # cached
        here.refresh("hive", unique_name.upper())
        assert there.catalog("hive").database(unique_name).table_names() == ("first", "second")
        admin.create_table(unique_name, "third", [("id", "bigint")])
        here.refresh("hive")
        assert there.catalog("hive").database(unique_name).table_names() == ("first", "second", "third")
    finally:
        here.close()
        there.close()
