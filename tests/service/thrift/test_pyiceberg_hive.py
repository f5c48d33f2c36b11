"""pyiceberg's own HiveCatalog through the endpoint: an Iceberg table made, written, overwritten and evolved through
it is the table the metastore itself holds (pyiceberg reading it directly), a catalog event of source ``thrift``
per commit, classified ICEBERG by the catalog, and read by Spark through the native connector with the same rows.

pyiceberg (0.12) commits by taking a metastore lock (``lock``, ``check_lock`` when waiting, ``unlock``) around
the legacy ``get_table`` and ``alter_table_with_environment_context`` (no ``get_table_req``, no expected-parameter
alter): the lock ids the metastore hands out through the endpoint must come back to the metastore that issued
them, the ``get_table`` is answered from the cache, and the alter is a change the catalog logs.
"""

from __future__ import annotations

import datetime
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hms_catalog.cache.versions import ChangeSource
from hms_catalog.formats.detect import TableFormat
from spark_connector import catalog_conf
from tests.service.thrift.conftest import Endpoint
from tests.support.service import Server, served

pytestmark = pytest.mark.slow

SPARK_CATALOG = "thrift_ice"


def _catalog(name: str, uri: str, warehouse: Path) -> Any:
    from pyiceberg.catalog.hive import HiveCatalog

    # hive2-compatible: the metastore behind the endpoint is Hive 2.3, as the suite's own iceberg_catalog says
    return HiveCatalog(name, uri=uri, warehouse=warehouse.as_uri(), **{"hive.hive2-compatible": "true"})


def _rows(table: Any) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row.values()) for row in table.scan().to_arrow().to_pylist())


@pytest.fixture
def connector(spark: Any, metastore_uri: str, tmp_path: Path) -> Iterator[str]:
    """A served catalog over the same metastore, registered in the session's Spark through the native connector."""
    with served(tmp_path / "served") as running:
        _register(running, metastore_uri)
        settings = catalog_conf(SPARK_CATALOG, running.url, running.token)
        for key, value in settings.items():
            spark.conf.set(key, value)
        try:
            yield SPARK_CATALOG
        finally:
            for key in settings:
                spark.conf.unset(key)


def _register(running: Server, metastore_uri: str) -> None:
    client = running.client()
    try:
        client.create_catalog(SPARK_CATALOG, {"type": "hms", "hive.metastore.uris": metastore_uri})
    finally:
        client.close()


def test_pyiceberg_hive_catalog_commits_through_the_endpoint(endpoint: Endpoint, metastore_uri: str, spark: Any,
                                                             connector: str, tmp_path: Path, unique_name: str) -> None:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DateType, DoubleType, LongType, NestedField, StringType

    warehouse = tmp_path / "warehouse"
    through = _catalog("through", f"thrift://127.0.0.1:{endpoint.port}", warehouse)
    direct = _catalog("direct", metastore_uri, warehouse)
    hive = endpoint.manager.catalog("hive")
    version, calls = hive.versions.current, hive.metrics()

    db = unique_name
    through.create_namespace(db)
    assert (db,) in direct.list_namespaces()
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "region", StringType(), required=False),
                    NestedField(3, "day", DateType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"))
    table = through.create_table((db, "events"), schema=schema, partition_spec=spec)
    day = datetime.date(2024, 5, 1)
    arrow_schema = table.schema().as_arrow()
    table.append(pa.Table.from_pylist([{"id": 1, "region": "eu", "day": day}, {"id": 2, "region": "us", "day": day}],
                                      schema=arrow_schema))
    table.overwrite(pa.Table.from_pylist([{"id": 3, "region": "eu", "day": day}, {"id": 4, "region": "ap", "day": None}],
                                         schema=arrow_schema))
    with table.update_schema() as update:
        update.add_column("score", DoubleType())
    table.append(pa.Table.from_pylist([{"id": 5, "region": "us", "day": day, "score": 2.5}],
                                      schema=table.schema().as_arrow()))

    expected = Counter({(3, "eu", day, None): 1, (4, "ap", None, None): 1, (5, "us", day, 2.5): 1})
    mine, theirs, again = table, direct.load_table((db, "events")), through.load_table((db, "events"))
    for loaded in (mine, theirs, again):
        assert _rows(loaded) == expected
    assert theirs.metadata_location == again.metadata_location == mine.metadata_location
    assert [s.snapshot_id for s in theirs.snapshots()] == [s.snapshot_id for s in again.snapshots()]
    # append; overwrite = delete + append; append (the schema change is no snapshot)
    assert [s.summary.operation.value for s in theirs.snapshots()] == ["append", "delete", "append", "append"]
    assert [f.name for f in theirs.schema().fields] == ["id", "region", "day", "score"]
    assert theirs.spec().fields[0].name == "region"

    made = hive.metrics().calls_since(calls)
    print("metastore calls made for pyiceberg through the endpoint:", dict(sorted(made.items())))
    commits = 5  # create (a create_table), append, overwrite (two snapshots, one commit), schema, append
    assert made.get("lock", 0) == made.get("unlock", 0) == commits - 1  # the create needs no lock
    assert made.get("alter_table_with_environment_context", 0) == commits - 1
    assert made.get("create_table", 0) == 1 and made.get("create_database", 0) == 1
    assert "get_table" not in made  # pyiceberg's get_table answered from the cache (loaded with get_table_req)

    logged = [change for change in hive.versions.changes(version).changes if change.source is ChangeSource.THRIFT]
    table_changes = [change for change in logged if change.object.table == "events" and change.object.database == db]
    assert [change.kind.value for change in table_changes] == ["added"] + ["changed"] * (commits - 1)
    assert any(change.object.database == db and not change.object.table for change in logged)  # the namespace

    handle = hive.table(db, "events")
    assert handle.detection.format is TableFormat.ICEBERG

    frame = spark.sql(f"SELECT id, region, day, score FROM {connector}.{db}.events")
    assert Counter(tuple(row) for row in frame.collect()) == expected


def _releasing(client: Any, lockid: int, catalog: Any, since: Any) -> threading.Thread:
    """A thread that releases the held lock ``lockid`` once ``catalog`` has asked for pyiceberg's lock (which then
    was WAITING, so pyiceberg checks it at least once), not after a guessed delay."""
    from hms_catalog.client.hive_thrift import ttypes

    def release() -> None:
        deadline = time.monotonic() + 60
        while not catalog.metrics().calls_since(since).get("lock") and time.monotonic() < deadline:
            time.sleep(0.05)
        client.pool.call("unlock", ttypes.UnlockRequest(lockid=lockid))

    return threading.Thread(target=release, name="release-held-lock", daemon=True)


def test_a_commit_waiting_for_a_lock_checks_it_through_the_endpoint(endpoint: Endpoint, metastore_uri: str, client: Any,
                                                                    tmp_path: Path, unique_name: str) -> None:
    """A lock held by another client of the metastore: pyiceberg's lock comes back WAITING and its ``check_lock``
    (which names no table, only the lock id the endpoint handed out) must reach the metastore that issued it."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    from hms_catalog.client.hive_thrift import ttypes

    warehouse = tmp_path / "warehouse"
    direct = _catalog("direct", metastore_uri, warehouse)
    direct.create_namespace(unique_name)
    direct.create_table((unique_name, "locked"), schema=Schema(NestedField(1, "id", LongType(), required=False)))
    through = _catalog("through", f"thrift://127.0.0.1:{endpoint.port}", warehouse)
    table = through.load_table((unique_name, "locked"))
    hive = endpoint.manager.catalog("hive")
    calls = hive.metrics()

    held = client.pool.call("lock", ttypes.LockRequest(
        component=[ttypes.LockComponent(type=ttypes.LockType.EXCLUSIVE, level=ttypes.LockLevel.TABLE, dbname=unique_name,
                                        tablename="locked", isTransactional=True)], user="other", hostname="elsewhere"))
    assert held.state == ttypes.LockState.ACQUIRED
    releaser = _releasing(client, held.lockid, hive, calls)
    releaser.start()
    try:
        table.append(pa.Table.from_pylist([{"id": 7}], schema=table.schema().as_arrow()))
    finally:
        releaser.join()
    made = hive.metrics().calls_since(calls)
    assert made.get("check_lock", 0) >= 1 and made.get("lock") == made.get("unlock") == 1
    assert _rows(direct.load_table((unique_name, "locked"))) == Counter({(7,): 1})


def test_a_refused_commit_in_a_read_only_catalog_releases_its_lock_there(endpoint: Endpoint, metastore_uri: str,
                                                                         client: Any, tmp_path: Path,
                                                                         unique_name: str) -> None:
    """``other`` grants no writes: pyiceberg's lock (no change) is taken in its metastore, its ``check_lock`` and
    ``unlock`` (lock ids only) go back there and not to the primary, and the alter is refused with the grant."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    from hms_catalog.client.hive_thrift import ttypes  # pyiceberg's own bindings (hive_metastore), as ours

    warehouse = tmp_path / "warehouse"
    direct = _catalog("direct", metastore_uri, warehouse)
    direct.create_namespace(unique_name)
    direct.create_table((unique_name, "guarded"), schema=Schema(NestedField(1, "id", LongType(), required=False)))
    through = _catalog("through", f"thrift://127.0.0.1:{endpoint.port}", warehouse)
    table = through.load_table((f"other__{unique_name}", "guarded"))
    hive, other = endpoint.manager.catalog("hive"), endpoint.manager.catalog("other")
    hive_calls, other_calls = hive.metrics(), other.metrics()
    component = ttypes.LockComponent(type=ttypes.LockType.EXCLUSIVE, level=ttypes.LockLevel.TABLE, dbname=unique_name,
                                     tablename="guarded", isTransactional=True)

    held = client.pool.call("lock", ttypes.LockRequest(component=[component], user="other", hostname="elsewhere"))
    releaser = _releasing(client, held.lockid, other, other_calls)
    releaser.start()
    try:
        with pytest.raises(ttypes.MetaException, match="read-only through the thrift endpoint") as refused:
            table.append(pa.Table.from_pylist([{"id": 7}], schema=table.schema().as_arrow()))
    finally:
        releaser.join()
    assert "ALTER CATALOG other SET PROPERTIES ('thrift.access'='write')" in str(refused.value)

    made = other.metrics().calls_since(other_calls)
    assert made.get("lock") == made.get("unlock") == 1 and made.get("check_lock", 0) >= 1
    assert not {"lock", "check_lock", "unlock"} & set(hive.metrics().calls_since(hive_calls))
    again = client.pool.call("lock", ttypes.LockRequest(component=[component], user="other", hostname="elsewhere"))
    assert again.state == ttypes.LockState.ACQUIRED  # pyiceberg's lock was released in the metastore that holds it
    client.pool.call("unlock", ttypes.UnlockRequest(lockid=again.lockid))
    assert len(direct.load_table((unique_name, "guarded")).snapshots()) == 0
