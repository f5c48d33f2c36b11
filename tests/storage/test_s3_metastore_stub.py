"""The embedded metastore's stub S3 filesystem: it takes tables, partitions and databases at ``s3a://``,
``s3://`` and ``s3n://`` locations, touches no store (a managed table's drop leaves the objects to the
catalog), and without it the metastore refuses those locations as Hive 2.3 from pyspark's jars does."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.metastore import EmbeddedMetastore, _setup
from hms_catalog.metastore._process import free_port
from tests.support.hms import table_struct
from tests.support.s3 import S3Server


def test_hive_site_names_the_stub_for_s3_schemes_only_when_asked(tmp_path: Path) -> None:
    def written(stub: bool) -> str:
        conf = tmp_path / str(stub)
        conf.mkdir()
        return _setup.write_hive_site(conf, db_dir=tmp_path / "db", warehouse=tmp_path / "wh", with_events=False,
                                      object_store_stub=stub).read_text(encoding="utf-8")

    with_stub = written(True)
    for scheme in ("s3a", "s3", "s3n"):
        assert f"<name>fs.{scheme}.impl</name><value>{_setup.OBJECT_STORE_STUB_CLASS}</value>" in with_stub
    assert "fs.s3a.impl" not in written(False)


def _managed(struct: ttypes.Table) -> ttypes.Table:
    managed = copy.deepcopy(struct)
    managed.tableType = "MANAGED_TABLE"
    managed.parameters = {key: value for key, value in managed.parameters.items() if key != "EXTERNAL"}
    return managed


def test_every_s3_scheme_is_taken_and_no_object_is_touched(admin: Any, metastore: EmbeddedMetastore,
                                                          s3_server: S3Server, unique_name: str) -> None:
    bucket = s3_server.bucket("stub-" + unique_name.replace("_", "-"))
    pool = admin.pool
    pool.call("create_database", ttypes.Database(name=unique_name, description="", parameters={},
                                                 locationUri=f"s3n://{bucket}/{unique_name}.db"))
    try:
        for scheme in ("s3a", "s3", "s3n"):
            location = f"{scheme}://{bucket}/{scheme}_t"
            s3_server.client.put_object(Bucket=bucket, Key=f"{scheme}_t/dt=1/part-0", Body=b"kept")
            struct = _managed(table_struct(unique_name, f"{scheme}_t", [("id", "bigint")], location,
                                           partition_keys=[("dt", "string")]))
            pool.call("create_table", struct)
            partition = ttypes.Partition(values=["1"], dbName=unique_name, tableName=f"{scheme}_t",
                                         sd=copy.deepcopy(struct.sd), parameters={})
            partition.sd.location = f"{location}/dt=1"
            pool.call("add_partitions", [partition])
            moved = pool.call("get_table", unique_name, f"{scheme}_t")
            moved.sd.location = f"{location}_moved"
            pool.call("alter_table", unique_name, f"{scheme}_t", moved)
            assert pool.call("get_table", unique_name, f"{scheme}_t").sd.location == f"{location}_moved"
            # The metastore "deletes" the managed table's folders through the stub, which deletes nothing:
            # the objects are the catalog's to delete, with its own credentials.
            pool.call("drop_table", unique_name, f"{scheme}_t", True)
            assert s3_server.keys(bucket, f"{scheme}_t/") == [f"{scheme}_t/dt=1/part-0"]
    finally:
        pool.call("drop_database", unique_name, True, True)
    log = metastore.log_file.read_text(encoding="utf-8", errors="replace")
    assert "Unable to delete directory" not in log and "ObjectStoreStub" not in log


@pytest.mark.slow
def test_without_the_stub_the_metastore_refuses_s3a(tmp_path: Path) -> None:
    """What the stub is for: Hive 2.3 from pyspark's jars has no S3 filesystem."""
    from hms_catalog.client import HmsClientPool
    from hms_catalog.properties import ClientConfig, parse_uris

    with EmbeddedMetastore(tmp_path / "plain", free_port(), events=False) as plain:
        pool = HmsClientPool(ClientConfig(uris=parse_uris(plain.uri), pool_size=1))
        try:
            with pytest.raises(ttypes.MetaException, match="S3AFileSystem not found"):
                pool.call("create_table", table_struct("default", "t", [("id", "bigint")], "s3a://bucket/t"))
        finally:
            pool.close()
