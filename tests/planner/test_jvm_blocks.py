"""Block placement through the JVM: Hadoop's FileSystem answers, one call per listing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hms_catalog.cache import CatalogCaches
from hms_catalog.properties import CacheConfig
from hms_catalog.storage import StorageResolver
from planner.jvm_blocks import JvmBlockLocator
from planner.listing import LocalBlockLocator, list_locations

# Where files the JVM cannot see are placed: a name of its own, so an answer from Hadoop is told from it.
FALLBACK = LocalBlockLocator(host="fallback")


def test_blocks_come_from_hadoop_in_one_call_per_listing(spark: Any, tmp_path: Path) -> None:
    directories = []
    for name in ("a", "b"):
        directory = tmp_path / name
        directory.mkdir()
        for index in range(3):
            (directory / f"part-{index}").write_bytes(b"x" * (100 + index))
        directories.append(directory)
    (tmp_path / "a" / "empty").write_bytes(b"")
    locator = JvmBlockLocator(spark, cache_dir=tmp_path / "java", fallback=FALLBACK)
    caches = CatalogCaches.from_config(CacheConfig())
    result = list_locations(
        [(("db", "t", f"file://{d}"), f"file://{d}") for d in directories], caches, storage=StorageResolver(),
        recursive=False, block_size=1 << 25, locator=locator, parallelism=1,
    )
    assert locator.calls == 2  # one per listing, not one per file
    entries = result.files[f"file://{directories[0]}"]
    assert len(entries) == 4
    for entry in entries:
        if entry.size:
            assert entry.blocks.offsets == (0,) and entry.blocks.hosts == (("localhost",),)  # Hadoop's local answer
            assert entry.blocks.block_size > 0
    again = list_locations(
        [(("db", "t2", f"file://{d}"), f"file://{d}") for d in directories], caches, storage=StorageResolver(),
        recursive=False, block_size=1 << 25, locator=locator, parallelism=1,
    )
    assert locator.calls == 2 and len(again.files) == 2  # known files are not looked up again


def test_files_the_jvm_cannot_see_fall_back(spark: Any, tmp_path: Path) -> None:
    locator = JvmBlockLocator(spark, cache_dir=tmp_path / "java", fallback=FALLBACK)
    blocks = locator.locate(f"file://{tmp_path}/missing", 10, 4)
    assert blocks.offsets == (0, 4, 8) and blocks.hosts == (("fallback",),) * 3  # the fallback locator's


def test_a_plan_carries_the_hosts_hadoop_reports(spark: Any, spark_tables: str, session: Any, tmp_path: Path) -> None:
    from planner import plan_table

    catalog = session.manager.catalog("hive")
    plan = plan_table(catalog, catalog.table(spark_tables, "sales"), "region = 'eu'",
                      locator=JvmBlockLocator(spark, cache_dir=tmp_path / "java", fallback=FALLBACK))
    assert plan.splits and {host for split in plan.splits for host in split.hosts} == {"localhost"}
    assert plan.summary.hosts == {"localhost": len(plan.splits)}


def test_a_listing_is_cached_under_its_location(spark: Any, tmp_path: Path) -> None:
    directory = tmp_path / "d"
    directory.mkdir()
    (directory / "part-0").write_bytes(b"x" * 10)
    caches = CatalogCaches.from_config(CacheConfig())
    key = ("db", "t", f"file://{directory}")
    list_locations(
[(key, f"file://{directory}")], caches, storage=StorageResolver(), recursive=False, block_size=1 << 25,
                   locator=JvmBlockLocator(spark, cache_dir=tmp_path / "java", fallback=FALLBACK), parallelism=1)
    assert caches.files.peek(key) is not None and len(caches.files) == 1
