"""Which blocks a listing gives its files, and what it asks to get them: a file's kind is settled once."""

from __future__ import annotations

from hms_catalog.cache import CatalogCaches
from hms_catalog.properties import CacheConfig
from hms_catalog.storage import StorageResolver
from planner.hadoop_blocks import StorageBlockLocator
from planner.listing import LocalBlockLocator, with_blocks


class _CountingResolver(StorageResolver):
    """The storage resolver of a catalog without Hadoop filesystems, counting the files it is asked to sort."""

    def __init__(self) -> None:
        super().__init__()
        self.sorted = 0

    def is_hadoop(self, location: str) -> bool:
        self.sorted += 1
        return super().is_hadoop(location)


def test_local_and_object_store_files_are_sorted_once_and_made_up_by_the_fallback() -> None:
    storage = _CountingResolver()
    fallback = LocalBlockLocator()
    locator = StorageBlockLocator(storage, fallback)
    mib = 1 << 20
    files = [("file:///data/t/p=1/a.parquet", 300 * mib, 1), ("s3://bucket/t/p=2/b.parquet", 10 * mib, 2)]
    caches = CatalogCaches.from_config(CacheConfig())
    entries = with_blocks(files, caches, locator, 128 * mib)
    assert storage.sorted == len(files)  # asks() sorted each file; making up their blocks did not sort them again
    assert locator.calls == 0 and fallback.calls == len(files)  # no helper request: the fallback made both up
    assert [e.blocks.offsets for e in entries] == [(0, 128 * mib, 256 * mib), (0,)]
    assert [e.blocks.hosts for e in entries] == [(("localhost",),) * 3, ((),)]  # a local file's host; none for S3
    assert len(caches.file_blocks) == 0  # made up from the size: not worth a cache entry
