"""Iceberg delete files for tests: written with pyarrow in the spec's layout, committed by pyiceberg.

No writer reachable here writes Iceberg delete files: pyiceberg 0.12 reads position deletes, but its
``delete()`` under ``write.delete.mode=merge-on-read`` warns and rewrites data files instead, and it has
no equality-delete writer at all. So the delete files are written here as the spec lays them out
(position deletes: ``file_path``/``pos`` with field ids 2147483546/2147483545, sorted by path then
position; equality deletes: the equality columns with the table's field ids), and committed through
pyiceberg's own snapshot producer, transaction and manifest writers. The only thing added to pyiceberg is
a manifest writer that labels its manifest ``deletes`` (0.12 writes data manifests only), so the table
metadata, manifest list and sequence numbers are all pyiceberg's.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["POSITION_DELETE_SCHEMA", "position_delete_file", "equality_delete_file", "commit_deletes"]

POSITION_DELETE_SCHEMA = pa.schema([
    pa.field("file_path", pa.string(), nullable=False, metadata={b"PARQUET:field_id": b"2147483546"}),
    pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": b"2147483545"}),
])


def _write(table: Any, rows: pa.Table, prefix: str) -> tuple[str, int, Any]:
    path = table.location_provider().new_data_location(f"{prefix}-{uuid.uuid4()}.parquet")
    output = table.io.new_output(path)
    with output.create() as stream:
        pq.write_table(rows, stream)
    written = table.io.new_input(path)
    with written.open() as stream:
        metadata = pq.read_metadata(stream)
    return path, len(written), metadata


def _delete_data_file(table: Any, content: Any, path: str, size: int, rows: int, partition: Any,
                      equality_ids: list[int] | None, metrics: dict[str, Any] | None = None) -> Any:
    from pyiceberg.manifest import DataFile, FileFormat
    from pyiceberg.typedef import Record

    return DataFile.from_args(
        content=content, file_path=path, file_format=FileFormat.PARQUET,
        partition=partition if partition is not None else Record(), file_size_in_bytes=size,
        sort_order_id=None, spec_id=table.metadata.default_spec_id, equality_ids=equality_ids, key_metadata=None,
        **(metrics or {"record_count": rows}),
    )


def position_delete_file(table: Any, positions: Mapping[str, Iterable[int]], partition: Any = None) -> Any:
    """A position delete file removing ``positions`` (0-based rows) of each data file path given."""
    from pyiceberg.manifest import DataFileContent

    pairs = sorted((path, int(pos)) for path, listed in positions.items() for pos in set(listed))
    rows = pa.Table.from_pylist([{"file_path": p, "pos": n} for p, n in pairs], schema=POSITION_DELETE_SCHEMA)
    path, size, _ = _write(table, rows, "pos-deletes")
    return _delete_data_file(table, DataFileContent.POSITION_DELETES, path, size, rows.num_rows, partition, None)


def equality_delete_file(table: Any, columns: Sequence[str], rows: Sequence[Mapping[str, Any]],
                         partition: Any = None) -> Any:
    """An equality delete file on ``columns``: a data row equal to one of ``rows`` in all of them is deleted.

    Its column metrics (bounds, null counts) are recorded as pyiceberg records a data file's, as writers do.
    """
    from pyiceberg.io.pyarrow import (
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
        schema_to_pyarrow,
    )
    from pyiceberg.manifest import DataFileContent

    schema = table.schema()
    ids = [schema.find_field(name).field_id for name in columns]
    key_schema = schema.select(*columns)
    data = pa.Table.from_pylist([dict(row) for row in rows], schema=schema_to_pyarrow(key_schema))
    path, size, metadata = _write(table, data, "eq-deletes")
    metrics = data_file_statistics_from_parquet_metadata(
        metadata, compute_statistics_plan(key_schema, table.metadata.properties), parquet_path_to_id_mapping(key_schema))
    return _delete_data_file(table, DataFileContent.EQUALITY_DELETES, path, size, data.num_rows, partition, ids,
                             metrics.to_serialized_dict())


def commit_deletes(table: Any, delete_files: Sequence[Any]) -> None:
    """One new snapshot (operation ``delete``) that adds ``delete_files``, as a row-level delete commits."""
    from pyiceberg.manifest import ManifestContent, ManifestWriterV2
    from pyiceberg.table.snapshots import Operation
    from pyiceberg.table.update.snapshot import _FastAppendFiles

    class DeleteManifestWriter(ManifestWriterV2):
        def content(self) -> ManifestContent:
            return ManifestContent.DELETES

        @property
        def _meta(self) -> dict[str, str]:
            return {**super()._meta, "content": "deletes"}

    class AddDeletes(_FastAppendFiles):
        def new_manifest_writer(self, spec: Any) -> Any:
            return DeleteManifestWriter(spec, self.schema(), self.new_manifest_output(), self._snapshot_id, self._compression)

    if table.metadata.format_version < 2:
        raise ValueError("delete files need an Iceberg table of format version 2 or later")
    with table.transaction() as transaction:
        with AddDeletes(operation=Operation.DELETE, transaction=transaction, io=table.io) as producer:
            for delete_file in delete_files:
                producer.append_data_file(delete_file)
