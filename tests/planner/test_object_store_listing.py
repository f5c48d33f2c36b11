"""Listing many partitions on an object store: one recursive listing of the table's root answers them all
(one request per thousand keys), with the same files, hidden ones skipped, and absent partitions absent."""

from __future__ import annotations

from typing import Any

from hms_catalog.cache import CatalogCaches
from hms_catalog.properties import CacheConfig
from hms_catalog.storage import StorageConfig, StorageResolver
from planner.listing import LocalBlockLocator, list_locations

PARTITIONS = 24


def test_one_root_listing_answers_every_partition(s3_server: Any, unique_name: str) -> None:
    bucket = s3_server.bucket(f"listing-{unique_name}".replace("_", "-")[:60])
    root = f"s3a://{bucket}/db/t"
    for index in range(PARTITIONS):
        s3_server.client.put_object(Bucket=bucket, Key=f"db/t/dt={index}/part-{index}.parquet", Body=b"x" * (index + 1))
        s3_server.client.put_object(Bucket=bucket, Key=f"db/t/dt={index}/_SUCCESS", Body=b"")
    s3_server.client.put_object(Bucket=bucket, Key="db/t/dt=0/nested/deeper.parquet", Body=b"y")  # not recursive: skipped
    storage = StorageResolver(StorageConfig.from_properties(s3_server.catalog_properties()), name="lake")
    locations = [f"{root}/dt={index}" for index in range(PARTITIONS)] + [f"{root}/dt=absent"]

    def listing(shared_root: str | None) -> Any:
        return list_locations([(("db", "t", location), location) for location in locations],
                              CatalogCaches.from_config(CacheConfig()), storage=storage, recursive=False,
                              block_size=1 << 25, locator=LocalBlockLocator(), parallelism=4, shared_root=shared_root)

    each, each_requests = s3_server.list_requests(lambda: listing(None))
    once, once_requests = s3_server.list_requests(lambda: listing(root))
    assert each_requests == len(locations) and once_requests == 1
    assert once.absent == each.absent == [f"{root}/dt=absent"]
    assert {k: [(f.path, f.size) for f in v] for k, v in once.files.items()} == \
        {k: [(f.path, f.size) for f in v] for k, v in each.files.items()}
    assert [f.path for f in once.files[f"{root}/dt=3"]] == [f"{root}/dt=3/part-3.parquet"]
    assert all(not entry.blocks.hosts[0] for entries in once.files.values() for entry in entries)  # no hosts on S3
