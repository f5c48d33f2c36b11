"""The resolver: one filesystem per store, the path each wants, and clear errors naming catalog and location."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest

from hms_catalog.errors import StorageError
from hms_catalog.storage import StorageConfig, StorageResolver, split_location
from hms_catalog.storage.locations import join_location


def test_locations_split_without_decoding() -> None:
    assert split_location("s3a://bucket/wh/t/dt=a%2Fb") == ("s3a", "bucket", "/wh/t/dt=a%2Fb")
    assert split_location("file:/tmp/x") == ("file", "", "/tmp/x")
    assert split_location("/tmp/x") == ("file", "", "/tmp/x")
    assert split_location("hdfs://ns1/wh") == ("hdfs", "ns1", "/wh")


def test_s3_schemes_share_one_filesystem_and_give_bucket_paths() -> None:
    resolver = StorageResolver(StorageConfig.from_properties({"s3.endpoint": "http://127.0.0.1:1", "s3.access_key": "a",
                                                              "s3.secret_key": "b", "use_path_style": "true"}), name="c")
    first, path = resolver.resolve("s3a://bucket/wh/t/dt=a%2Fb")
    second, _ = resolver.resolve("s3://bucket/wh")
    third, _ = resolver.resolve("s3n://other/wh")
    assert first is second is third and first.type_name == "s3"
    assert path == "bucket/wh/t/dt=a%2Fb"
    assert join_location("s3a://bucket/wh/t", "bucket/wh/t/f.parquet") == "s3a://bucket/wh/t/f.parquet"


def test_local_locations_stay_local() -> None:
    filesystem, path = StorageResolver().resolve("file:/tmp/a%20b")
    assert isinstance(filesystem, pafs.LocalFileSystem) and path == "/tmp/a%20b"


def test_azure_paths_are_container_relative() -> None:
    resolver = StorageResolver(StorageConfig.from_properties({"adls.account-key": "a2V5"}), name="c")
    filesystem, path = resolver.resolve("abfss://data@acct.dfs.core.windows.net/wh/t")
    assert filesystem.type_name == "abfs" and path == "data/wh/t"
    assert join_location("abfss://data@acct.dfs.core.windows.net/wh", "data/wh/f") == \
        "abfss://data@acct.dfs.core.windows.net/wh/f"


def test_an_unreachable_endpoint_is_a_storage_error_naming_catalog_and_location() -> None:
    resolver = StorageResolver(StorageConfig.from_properties({
        "s3.endpoint": "http://127.0.0.1:9", "s3.access_key": "a", "s3.secret_key": "NOT-SHOWN",
        "use_path_style": "true", "s3.connection.timeout": "1000", "s3.request.timeout": "2000"}), name="lake")
    filesystem, path = resolver.resolve("s3a://bucket/wh")
    with pytest.raises(OSError) as raised:
        filesystem.get_file_info(pafs.FileSelector(path))
    error = resolver.error("s3a://bucket/wh", raised.value, "list")
    assert isinstance(error, StorageError)
    assert "catalog 'lake'" in str(error) and "s3a://bucket/wh" in str(error) and "NOT-SHOWN" not in str(error)
