"""Format version 3 through the endpoint: created, loaded by pyiceberg, committed to, upgraded to, refused where no
client here could read it.

pyiceberg 0.12 reads v3 but writes no v3 manifest, so its ``append`` stops at a v3 table. The appends here are
what a v3 writer (Spark with Iceberg 1.10) sends: a Parquet file written with pyarrow, a v3 manifest and manifest
list (pyiceberg's writers, told the v3 schemas it already has), and a snapshot whose ``first-row-id`` is the
table's ``next-row-id``, committed over HTTP. Row lineage is then checked in the metadata file the service wrote.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.service.iceberg_rest.conftest import checked, rest_catalog
from tests.support.service import Server

V3 = {"format-version": "3"}


def _schema() -> Any:
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType, TimestampNanoType, TimestamptzNanoType

    return Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType()),
                  NestedField(3, "at", TimestampNanoType()), NestedField(4, "at_tz", TimestamptzNanoType()))


def _path(server: Server, namespace: str, table: str = "") -> str:
    return f"/iceberg/v1/ice/namespaces/{namespace}/tables" + (f"/{table}" if table else "")


def _written(table: Any) -> dict[str, Any]:
    """The metadata file the service wrote, as JSON (what Java's and DuckDB's readers read)."""
    with table.io.new_input(table.metadata_location).open() as stream:
        return dict(json.loads(stream.read()))


def _first_row_ids(io: Any, manifest_list: str) -> dict[str, int | None]:
    """Each manifest's ``first_row_id`` in a v3 manifest list (pyiceberg reads lists with the v2 schema: not it)."""
    from pyiceberg.avro.file import AvroFile
    from pyiceberg.manifest import MANIFEST_LIST_FILE_SCHEMAS
    from pyiceberg.typedef import Record

    schema = MANIFEST_LIST_FILE_SCHEMAS[3]
    names = [field.name for field in schema.fields]
    with AvroFile[Record](io.new_input(manifest_list), schema) as reader:
        return {row[names.index("manifest_path")]: row[names.index("first_row_id")] for row in reader}


def _manifest_list_v3(io: Any, path: str, snapshot_id: int, parent: Any, sequence: int, first_row_id: int,
                      manifests: list[Any]) -> None:
    """A v3 manifest list: the new data manifests given their ``first_row_id`` from the snapshot's, the parent's
    keeping theirs, as the spec's "First Row ID Assignment" asks (pyiceberg has the schema, not the writer)."""
    from pyiceberg.avro.file import AvroOutputFile
    from pyiceberg.manifest import MANIFEST_LIST_FILE_SCHEMAS, ManifestFile

    schema = MANIFEST_LIST_FILE_SCHEMAS[3]
    meta = {"snapshot-id": str(snapshot_id), "parent-snapshot-id": str(parent.snapshot_id) if parent else "null",
            "sequence-number": str(sequence), "first-row-id": str(first_row_id), "format-version": "3"}
    kept = _first_row_ids(io, parent.manifest_list) if parent else {}
    rows = []
    next_row_id = first_row_id
    for manifest in manifests:
        fields = {field.name: getattr(manifest, field.name, None) for field in MANIFEST_LIST_FILE_SCHEMAS[2].fields}
        if manifest.added_snapshot_id == snapshot_id:
            fields.update(sequence_number=sequence, min_sequence_number=sequence, first_row_id=next_row_id)
            next_row_id += manifest.added_rows_count + manifest.existing_rows_count
        else:
            fields["first_row_id"] = kept.get(manifest.manifest_path)
        rows.append(ManifestFile.from_args(_table_format_version=3, **fields))
    with AvroOutputFile[ManifestFile](output_file=io.new_output(path), file_schema=schema, record_schema=schema,
                                      schema_name="manifest_file", metadata=meta) as output:
        output.write_block(rows)


def _append_v3(server: Server, namespace: str, name: str, table: Any, rows: pa.Table, *,
               first_row_id: int | None = None) -> Any:
    """Commit ``rows`` to the v3 ``table`` over HTTP, as a v3 writer does; ``first_row_id`` other than the table's
    next-row-id to see it refused. The answer."""
    from pyiceberg.io.pyarrow import parquet_file_to_data_file, schema_to_pyarrow
    from pyiceberg.manifest import ManifestEntry, ManifestEntryStatus, ManifestWriterV2

    class ManifestWriterV3(ManifestWriterV2):
        @property
        def version(self) -> Any:
            return 3

    metadata = table.metadata
    snapshot_id = random.getrandbits(62)
    data_path = f"{metadata.location}/data/{uuid.uuid4()}.parquet"
    with table.io.new_output(data_path).create() as stream:
        pq.write_table(rows.cast(schema_to_pyarrow(table.schema())), stream)
    data_file = parquet_file_to_data_file(table.io, metadata, data_path)
    manifest_path = f"{metadata.location}/metadata/{uuid.uuid4()}-m0.avro"
    with ManifestWriterV3(table.spec(), table.schema(), table.io.new_output(manifest_path), snapshot_id, "null") as writer:
        writer.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=snapshot_id, data_file=data_file))
    parent = table.current_snapshot()
    manifests = [writer.to_manifest_file(), *(parent.manifests(table.io) if parent else [])]
    sequence = metadata.last_sequence_number + 1
    first = metadata.next_row_id if first_row_id is None else first_row_id
    list_path = f"{metadata.location}/metadata/snap-{snapshot_id}-{uuid.uuid4()}.avro"
    _manifest_list_v3(table.io, list_path, snapshot_id, parent, sequence, first, manifests)
    snapshot = {"snapshot-id": snapshot_id, "sequence-number": sequence, "timestamp-ms": 1_700_000_000_000 + sequence,
                "manifest-list": list_path, "summary": {"operation": "append"}, "schema-id": metadata.current_schema_id,
                "first-row-id": first, "added-rows": len(rows)}
    if parent is not None:
        snapshot["parent-snapshot-id"] = parent.snapshot_id
    body = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main",
                              "snapshot-id": parent.snapshot_id if parent else None}],
            "updates": [{"action": "add-snapshot", "snapshot": snapshot},
                        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id}]}
    return server.request("POST", _path(server, namespace, name), body)


def test_a_v3_table_is_created_loaded_and_committed_to(iceberg_service: Server, namespace: str) -> None:
    from pyiceberg.types import IntegerType

    rest = rest_catalog(iceberg_service)
    created = rest.create_table((namespace, "lineage"), schema=_schema(), properties=V3)
    assert created.metadata.format_version == 3 and created.metadata.next_row_id == 0
    written = _written(created)
    assert written["format-version"] == 3 and written["next-row-id"] == 0
    assert [f["type"] for f in written["schemas"][0]["fields"]] == ["long", "string", "timestamp_ns", "timestamptz_ns"]
    loaded = rest.load_table((namespace, "lineage"))
    assert loaded.metadata.format_version == 3 and str(loaded.schema().find_field("at").field_type) == "timestamp_ns"
    # a schema change through pyiceberg: a column with a default, written as both of the spec's defaults
    with loaded.update_schema() as update:
        update.add_column("tier", IntegerType(), default_value=7)
    tier = _written(rest.load_table((namespace, "lineage")))["schemas"][-1]["fields"][-1]
    assert (tier["name"], tier["initial-default"], tier["write-default"]) == ("tier", 7, 7)
    # appends: the snapshot's first-row-id is the table's next-row-id, which advances by its added rows
    table = rest.load_table((namespace, "lineage"))
    at = pa.array([1_700_000_000_123_456_789] * 3, pa.timestamp("ns"))
    rows = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"], "at": at, "at_tz": at.cast(pa.timestamp("ns", "UTC")),
                     "tier": [1, 2, 3]})
    checked(_append_v3(iceberg_service, namespace, "lineage", table, rows), 200, "CommitTableResponse")
    table = rest.load_table((namespace, "lineage"))
    checked(_append_v3(iceberg_service, namespace, "lineage", table, rows.slice(0, 2)), 200, "CommitTableResponse")
    table = rest.load_table((namespace, "lineage"))
    written = _written(table)
    assert [(s["first-row-id"], s["added-rows"]) for s in written["snapshots"]] == [(0, 3), (3, 2)]
    assert written["next-row-id"] == 5 and table.metadata.next_row_id == 5
    data = table.scan().to_arrow().sort_by("id")
    assert data.column("id").to_pylist() == [1, 1, 2, 2, 3]
    assert data.schema.field("at").type == pa.timestamp("ns") and data.column("at").to_pylist()[0].value == 1_700_000_000_123_456_789
    # a first-row-id behind the table's next-row-id: stale, retried by a writer (409); none at all: invalid (400)
    stale = _append_v3(iceberg_service, namespace, "lineage", table, rows, first_row_id=4)
    assert checked(stale, 409, "IcebergErrorResponse")["error"]["type"] == "CommitFailedException"
    assert "behind the table's next-row-id (4 < 5)" in stale.json()["error"]["message"]
    assert _written(rest.load_table((namespace, "lineage")))["next-row-id"] == 5


def test_a_v3_snapshot_without_first_row_id_is_refused(iceberg_service: Server, namespace: str) -> None:
    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "strict"), schema=_schema(), properties=V3)
    snapshot = {"snapshot-id": 11, "sequence-number": 1, "timestamp-ms": 1_700_000_000_000,
                "manifest-list": f"{table.location()}/metadata/none.avro", "summary": {"operation": "append"}}
    answer = iceberg_service.request("POST", _path(iceberg_service, namespace, "strict"),
                                     {"requirements": [], "updates": [{"action": "add-snapshot", "snapshot": snapshot}]})
    assert checked(answer, 400, "IcebergErrorResponse")["error"]["type"] == "ValidationException"
    assert "first-row-id is null" in answer.json()["error"]["message"]


def test_a_v2_table_is_upgraded_to_v3(iceberg_service: Server, namespace: str) -> None:
    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "old"), schema=pa.schema([pa.field("id", pa.int64())]))
    table.append(pa.table({"id": [1, 2]}))
    assert table.metadata.format_version == 2
    answer = iceberg_service.request("POST", _path(iceberg_service, namespace, "old"), {
        "requirements": [{"type": "assert-table-uuid", "uuid": str(table.metadata.table_uuid)}],
        "updates": [{"action": "upgrade-format-version", "format-version": 3}]})
    assert checked(answer, 200, "CommitTableResponse")["metadata"]["format-version"] == 3
    upgraded = rest.load_table((namespace, "old"))
    written = _written(upgraded)
    assert written["format-version"] == 3 and written["next-row-id"] == 0
    assert "first-row-id" not in written["snapshots"][0]  # the spec: snapshots from before the upgrade keep none
    assert written["metadata-log"][-1]["metadata-file"] == table.metadata_location
    assert upgraded.scan().to_arrow().column("id").to_pylist() == [1, 2]
    rows = pa.table({"id": [3, 4, 5]})
    checked(_append_v3(iceberg_service, namespace, "old", upgraded, rows), 200, "CommitTableResponse")
    written = _written(rest.load_table((namespace, "old")))
    assert (written["snapshots"][-1]["first-row-id"], written["next-row-id"]) == (0, 3)
    # a downgrade is the spec's ValidationException
    back = iceberg_service.request("POST", _path(iceberg_service, namespace, "old"), {
        "requirements": [], "updates": [{"action": "upgrade-format-version", "format-version": 2}]})
    assert checked(back, 400, "IcebergErrorResponse")["error"]["type"] == "ValidationException"


def test_defaults_round_trip_at_create(iceberg_service: Server, namespace: str) -> None:
    schema = {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True},
        {"id": 2, "name": "region", "type": "string", "required": False, "initial-default": "eu", "write-default": "us"},
        {"id": 3, "name": "point", "required": False, "type": {"type": "struct", "fields": [
            {"id": 4, "name": "x", "type": "int", "required": False, "initial-default": 0, "write-default": 1}]}}]}
    answer = iceberg_service.request("POST", _path(iceberg_service, namespace),
                                     {"name": "defaults", "schema": schema, "properties": V3})
    fields = checked(answer, 200, "LoadTableResult")["metadata"]["schemas"][0]["fields"]
    assert (fields[1]["initial-default"], fields[1]["write-default"]) == ("eu", "us")
    assert (fields[2]["type"]["fields"][0]["initial-default"], fields[2]["type"]["fields"][0]["write-default"]) == (0, 1)
    loaded = rest_catalog(iceberg_service).load_table((namespace, "defaults"))
    region = loaded.schema().find_field("region")
    assert (region.initial_default, region.write_default) == ("eu", "us")
    assert _written(loaded)["schemas"][0]["fields"][1]["write-default"] == "us"


@pytest.mark.parametrize("type_", ["variant", "geometry", "geography('OGC:CRS84', 'spherical')", "unknown"])
def test_types_no_client_reads_are_refused_at_create(iceberg_service: Server, namespace: str, type_: str) -> None:
    schema = {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True},
        {"id": 2, "name": "shape", "type": type_, "required": False}]}
    answer = iceberg_service.request("POST", _path(iceberg_service, namespace),
                                     {"name": "shapes", "schema": schema, "properties": V3})
    error = checked(answer, 400, "IcebergErrorResponse")["error"]
    assert f"shape (type {type_.split('(')[0]})" in error["message"] and "no client of this catalog" in error["message"]
    assert iceberg_service.request("HEAD", _path(iceberg_service, namespace, "shapes")).status == 404


def test_an_unknown_column_added_by_a_commit_is_refused(iceberg_service: Server, namespace: str) -> None:
    from pyiceberg.exceptions import BadRequestError
    from pyiceberg.types import UnknownType

    table = rest_catalog(iceberg_service).create_table((namespace, "later"), schema=_schema(), properties=V3)
    with pytest.raises(BadRequestError, match="type unknown"):
        with table.update_schema() as update:
            update.add_column("nothing", UnknownType())


def test_duckdb_reads_a_v3_table(iceberg_service: Server, namespace: str, tmp_path: Path) -> None:
    from tests.service.iceberg_rest.test_duckdb import attached

    rest = rest_catalog(iceberg_service)
    table = rest.create_table((namespace, "ducked"), schema=pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())]),
                              properties=V3)
    checked(_append_v3(iceberg_service, namespace, "ducked", table, pa.table({"id": [1, 2], "name": ["a", "b"]})), 200,
            "CommitTableResponse")
    duck = attached(iceberg_service, f"TOKEN '{iceberg_service.token}'", tmp_path)
    assert duck.execute(f"SELECT id, name FROM cat.{namespace}.ducked ORDER BY id").fetchall() == [(1, "a"), (2, "b")]
