"""pyiceberg's RestCatalog against the service: a table's whole life, each commit a catalog event that the
metastore, pyiceberg's own HiveCatalog on it and the service's change feed all see."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pytest
from pyiceberg.exceptions import BadRequestError

from tests.service.iceberg_rest.conftest import CATALOG, audit_lines, checked, rest_catalog
from tests.support.service import Server

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string()), pa.field("amount", pa.float64())])


def _rows(table: Any, **scan: Any) -> list[tuple[Any, ...]]:
    data = table.scan(**scan).to_arrow().sort_by("id")
    return list(zip(*(data.column(name).to_pylist() for name in data.column_names)))


def _changes(server: Server, since: int = 0) -> list[dict[str, Any]]:
    client = server.client()
    try:
        return list(client.changes(CATALOG, since=since)["changes"])
    finally:
        client.close()


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_table_life_through_the_endpoint(iceberg_service: Server, namespace: str, iceberg_catalog: Any,
                                           partitioned: bool) -> None:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import BucketTransform, IdentityTransform
    from pyiceberg.types import StringType

    rest = rest_catalog(iceberg_service)
    before = _changes(iceberg_service)[-1]["version"] if _changes(iceberg_service) else 0
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region")) if partitioned else PartitionSpec()
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField

    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType()),
                    NestedField(3, "amount", DoubleType()))
    table = rest.create_table((namespace, "sales"), schema=schema, partition_spec=spec)
    table.append(pa.table({"id": [1, 2, 3], "region": ["eu", "us", "eu"], "amount": [1.0, 2.0, 3.0]}, schema=SCHEMA))
    first = table.current_snapshot().snapshot_id
    table.append(pa.table({"id": [4], "region": ["us"], "amount": [4.0]}, schema=SCHEMA))
    table.delete("id = 2")
    assert _rows(rest.load_table((namespace, "sales"))) == [(1, "eu", 1.0), (3, "eu", 3.0), (4, "us", 4.0)]
    # time travel by snapshot id
    assert [row[0] for row in _rows(rest.load_table((namespace, "sales")), snapshot_id=first)] == [1, 2, 3]
    # overwrite
    table = rest.load_table((namespace, "sales"))
    table.overwrite(pa.table({"id": [9], "region": ["ap"], "amount": [9.0]}, schema=SCHEMA))
    assert _rows(rest.load_table((namespace, "sales"))) == [(9, "ap", 9.0)]
    # schema evolution, then partition evolution
    with table.update_schema() as update:
        update.add_column("note", StringType())
        update.rename_column("amount", "total")
    with table.update_spec() as update:
        update.add_field("id", BucketTransform(4), "id_bucket")
    table.append(pa.table({"id": [10], "region": ["ap"], "total": [10.0], "note": ["new"]},
                          schema=rest.load_table((namespace, "sales")).schema().as_arrow()))
    loaded = rest.load_table((namespace, "sales"))
    assert [f.name for f in loaded.schema().fields] == ["id", "region", "total", "note"]
    assert len(loaded.spec().fields) == (2 if partitioned else 1)
    assert _rows(loaded) == [(9, "ap", 9.0, None), (10, "ap", 10.0, "new")]
    # pyiceberg's own HiveCatalog on the metastore sees the same commits
    direct = iceberg_catalog.load_table((namespace, "sales"))
    assert direct.metadata_location == loaded.metadata_location
    assert _rows(direct) == _rows(loaded)
    # every change one catalog event of source iceberg-rest, and one audit line each
    ours = [c for c in _changes(iceberg_service, before) if f"{namespace}.sales" in c["object"]]
    assert ours and {c["source"] for c in ours} == {"iceberg-rest"}
    commits = [line for line in audit_lines(iceberg_service) if f"commit to {namespace}.sales" in line["statement"]]
    assert len(commits) >= 6 and all(line["outcome"] == "ok" and line["via"] == "iceberg-rest" for line in commits)
    # rename, then drop with purge: every file under the table's location goes
    renamed = rest.rename_table((namespace, "sales"), (namespace, "sales2"))
    assert _rows(renamed) == _rows(loaded)
    assert not rest.table_exists((namespace, "sales"))
    location = Path(urlsplit(renamed.location()).path)
    assert any(location.rglob("*.parquet"))
    rest.drop_table((namespace, "sales2"), purge_requested=True)
    assert not rest.table_exists((namespace, "sales2"))
    assert not location.exists() or not any(p.is_file() for p in location.rglob("*"))


def test_a_commit_behind_the_service_is_seen_without_refresh(iceberg_service: Server, namespace: str, iceberg_catalog: Any) -> None:
    rest = rest_catalog(iceberg_service)
    before = max((c["version"] for c in _changes(iceberg_service)), default=0)
    rest.create_table((namespace, "behind"), schema=SCHEMA)
    assert rest.load_table((namespace, "behind")).current_snapshot() is None  # loaded (and cached) by the service
    time.sleep(1.5)  # several rounds of the event follower (200 ms): the metastore's CREATE_TABLE event has come
    ours = [c for c in _changes(iceberg_service, before) if c["object"] == f"table {namespace}.behind"]
    assert [c["source"] for c in ours] == ["iceberg-rest"], ours  # the service's own change, not logged again
    iceberg_catalog.load_table((namespace, "behind")).append(pa.table({"id": [1], "region": ["eu"], "amount": [1.0]}, schema=SCHEMA))
    expected = iceberg_catalog.load_table((namespace, "behind")).metadata_location
    deadline = time.monotonic() + 20
    while rest.load_table((namespace, "behind")).metadata_location != expected:
        assert time.monotonic() < deadline, "the service did not see the metastore's commit"
        time.sleep(0.2)
    assert _rows(rest.load_table((namespace, "behind"))) == [(1, "eu", 1.0)]
    ours = [c for c in _changes(iceberg_service, before) if c["object"] == f"table {namespace}.behind"]
    assert [c["source"] for c in ours] == ["iceberg-rest", "event"], ours  # the commit behind it: an event


def test_a_stale_commit_is_refused_with_409(iceberg_service: Server, namespace: str) -> None:
    rest = rest_catalog(iceberg_service)
    rest.create_table((namespace, "race"), schema=SCHEMA)
    stale = rest.load_table((namespace, "race"))  # no snapshot yet
    rest.load_table((namespace, "race")).append(pa.table({"id": [1], "region": ["eu"], "amount": [1.0]}, schema=SCHEMA))
    body = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}],
            "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}
    assert stale.current_snapshot() is None
    answer = iceberg_service.request("POST", f"/iceberg/v1/{CATALOG}/namespaces/{namespace}/tables/race", body)
    error = checked(answer, 409, "IcebergErrorResponse")
    assert error["error"]["type"] == "CommitFailedException"
    assert "k" not in rest.load_table((namespace, "race")).properties
    assert _rows(rest.load_table((namespace, "race"))) == [(1, "eu", 1.0)]
    missing = iceberg_service.request("POST", f"/iceberg/v1/{CATALOG}/namespaces/{namespace}/tables/nothing", body)
    assert checked(missing, 404, "IcebergErrorResponse")["error"]["type"] == "NoSuchTableException"


def test_register_an_existing_metadata_file(iceberg_service: Server, namespace: str) -> None:
    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "original"), schema=SCHEMA)
    table.append(pa.table({"id": [5], "region": ["eu"], "amount": [5.0]}, schema=SCHEMA))
    location = rest.load_table((namespace, "original")).metadata_location
    registered = rest.register_table((namespace, "copy"), location)
    assert registered.metadata_location == location and _rows(registered) == [(5, "eu", 5.0)]
    rest.drop_table((namespace, "copy"))  # no purge: the original's files stay
    assert _rows(rest.load_table((namespace, "original"))) == [(5, "eu", 5.0)]


def test_a_name_the_metastore_refuses_is_a_400_and_makes_nothing(iceberg_service: Server, namespace: str) -> None:
    """The metastore's own refusal (its InvalidObjectException) is carried to the client as a bad request, whether
    the create is made at once or staged, and a rename onto such a name is refused the same way."""
    rest = rest_catalog(iceberg_service)
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
    base = f"/iceberg/v1/{CATALOG}/namespaces/{namespace}/tables"
    answer = iceberg_service.request("POST", base, {"name": "bad name!", "schema": schema})
    error = checked(answer, 400, "IcebergErrorResponse")["error"]
    assert error["type"] == "BadRequestException" and "bad name!" in error["message"], error
    staged = rest.create_table_transaction((namespace, "bad name!"), schema=SCHEMA)  # nothing asked of the metastore yet
    with pytest.raises(BadRequestError, match="bad name!"):
        staged.commit_transaction()
    rest.create_table((namespace, "good"), schema=SCHEMA)
    renamed = iceberg_service.request("POST", f"/iceberg/v1/{CATALOG}/tables/rename", {
        "source": {"namespace": [namespace], "name": "good"}, "destination": {"namespace": [namespace], "name": "bad name!"}})
    error = checked(renamed, 400, "IcebergErrorResponse")["error"]
    assert error["type"] == "BadRequestException" and "bad name!" in error["message"], error
    assert sorted(name for _, name in rest.list_tables(namespace)) == ["good"]
