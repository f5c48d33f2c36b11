"""Applying an Iceberg split's delete files (position and equality deletes) to the rows read from it.

The split's rows are read as any split's are, with the equality columns added when the query did not ask
for them; the rows a delete removes are filtered out and the added columns dropped. Position deletes name
rows by their position in the whole data file, so the split's row groups (stripes) say where its rows
start. Equality deletes compare the table's columns found by field id (renames keep ids), and NULL equals
NULL there. Each delete file is read once per split, keeping only what concerns the split: this file's
positions within the split's rows, and the distinct keys of the equality deletes.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from dataclasses import replace

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as orc
import pyarrow.parquet as pq

from hms_catalog.errors import UnsupportedTableError
from hms_catalog.formats.schema import Column
from hms_catalog.storage.resolver import StorageResolver
from hms_catalog.types.arrow import to_arrow_type
from planner.plan import DeleteFile, Split
from planner.readers._common import FileChangedError, open_found, rows_only, shape_batch
from planner.readers.columnar import split_row_spans

__all__ = ["read_with_deletes", "POSITION_DELETES", "EQUALITY_DELETES"]

POSITION_DELETES = "position_deletes"
EQUALITY_DELETES = "equality_deletes"
_FILE_PATH_ID, _POS_ID = 2147483546, 2147483545  # the reserved field ids of file_path and pos
_READABLE = ("parquet", "orc")


def read_with_deletes(split: Split, columns: Sequence[Column], target: pa.Schema,
                      table_columns: Sequence[Column] | None, storage: StorageResolver) -> Iterator[pa.RecordBatch]:
    """The split's rows minus those its delete files remove, as batches of exactly ``target``."""
    from planner.readers import read_file_split  # the package imports this module

    _check_readable(split)
    spans = split_row_spans(split, storage)
    if not spans:
        return
    deleted = _deleted_positions(split, spans, storage)
    everything = list(table_columns) if table_columns is not None else list(columns)
    groups: dict[tuple[int, ...], list[DeleteFile]] = {}
    for delete in split.delete_files:
        if delete.content == EQUALITY_DELETES:
            groups.setdefault(tuple(delete.equality_ids), []).append(delete)
    keys = [_EqualityKeys(ids, files, everything, storage) for ids, files in groups.items()]
    partition_values = {k.lower(): v for k, v in split.partition_values}
    if not keys and not any(not c.partition for c in columns):  # a count: no data column is decoded
        total = sum(rows for _, rows in spans)
        yield shape_batch(rows_only(total - len(deleted)), columns, target, partition_values)
        return
    read_columns = list(columns)
    fields = list(target)
    for key in keys:
        key.place(read_columns, fields)
    read_target = pa.schema(fields)
    offset = 0
    for batch in read_file_split(split, read_columns, read_target, table_columns=table_columns, storage=storage):
        deleted_here = _deleted_in(deleted, offset, batch.num_rows)
        offset += batch.num_rows
        for key in keys:
            matched = key.matches(batch)
            deleted_here = matched if deleted_here is None else pc.or_(deleted_here, matched)
        if deleted_here is not None:
            batch = batch.filter(pc.invert(deleted_here))
        if batch.num_rows:
            yield pa.RecordBatch.from_arrays(batch.columns[: len(target)], schema=target) if len(target) else rows_only(batch.num_rows)


def _check_readable(split: Split) -> None:
    if split.file_format not in _READABLE:
        raise UnsupportedTableError(f"{split.path}: Iceberg deletes are applied to Parquet and ORC data files only")
    for delete in split.delete_files:
        if delete.content not in (POSITION_DELETES, EQUALITY_DELETES):
            raise UnsupportedTableError(f"{delete.path}: unknown Iceberg delete content {delete.content!r}")
        if delete.file_format not in _READABLE:
            raise UnsupportedTableError(
                f"{delete.path}: {delete.file_format} delete files are not read (Parquet and ORC delete files are)")


def _open(delete: DeleteFile, storage: StorageResolver) -> pa.NativeFile:
    import pyarrow.fs as pafs

    filesystem, path = storage.resolve(delete.path)
    stale = f"delete file {delete.path} is gone or changed since planning; run REFRESH TABLE and plan again"
    try:
        info = filesystem.get_file_info(path)
    except OSError as error:
        raise storage.error(delete.path, error, "read") from error
    if info.type == pafs.FileType.NotFound or info.size != delete.length:
        raise FileChangedError(stale)
    return open_found(filesystem, path, stale, storage, delete.path)


def _field_names(schema: pa.Schema, wanted: dict[int, str]) -> dict[int, str]:
    """Field id -> the file's column name, by the Parquet field ids the file carries, else by name."""
    by_id = {int(raw): f.name for f in schema if (raw := (f.metadata or {}).get(b"PARQUET:field_id")) is not None}
    by_name = {f.name.lower(): f.name for f in schema}
    found = {}
    for field_id, name in wanted.items():
        column = by_id.get(field_id) or by_name.get(name.lower())
        if column is not None:
            found[field_id] = column
    return found


# Position deletes ------------------------------------------------------------------------------------


def _positions_in(delete: DeleteFile, data_path: str, storage: StorageResolver) -> list[pa.Array]:
    """The ``pos`` of every row of ``delete`` whose ``file_path`` is exactly ``data_path``, as Iceberg compares."""
    found = []
    batches: Iterator[pa.RecordBatch]
    with _open(delete, storage) as handle:
        if delete.file_format == "parquet":
            parquet = pq.ParquetFile(handle)
            names = _field_names(parquet.schema_arrow, {_FILE_PATH_ID: "file_path", _POS_ID: "pos"})
            if len(names) < 2:
                raise UnsupportedTableError(f"{delete.path}: a position delete file without file_path and pos columns")
            path_name, pos_name = names[_FILE_PATH_ID], names[_POS_ID]
            metadata = parquet.metadata
            leaf = next(i for i in range(metadata.num_columns) if metadata.schema.column(i).path == path_name)
            groups = [g for g in range(metadata.num_row_groups)
                      if _may_hold(metadata.row_group(g).column(leaf).statistics, data_path)]
            batches = parquet.iter_batches(row_groups=groups, columns=[path_name, pos_name]) if groups else iter(())
        else:
            reader = orc.ORCFile(handle)
            batches = (reader.read_stripe(i, columns=["file_path", "pos"]) for i in range(reader.nstripes))
        for batch in batches:
            found.append(pc.filter(batch.column(1), pc.equal(batch.column(0), data_path)).cast(pa.int64()))
    return found


def _may_hold(statistics: pq.Statistics | None, path: str) -> bool:
    """Whether a row group's file_path range can hold ``path`` (writers sort position deletes by path)."""
    if statistics is None or not statistics.has_min_max:
        return True
    low, high = statistics.min, statistics.max
    if isinstance(low, bytes):
        low, high = low.decode("utf-8", "replace"), high.decode("utf-8", "replace")
    return bool(low <= path <= high)


def _deleted_positions(split: Split, spans: Sequence[tuple[int, int]], storage: StorageResolver) -> pa.Array:
    """The deleted rows of this split as sorted, distinct indices among the rows its read returns."""
    positions = [array for d in split.delete_files if d.content == POSITION_DELETES for array in _positions_in(d, split.path, storage)]
    if not positions:
        return pa.array([], pa.int64())
    every = pa.chunked_array(positions, pa.int64())
    indices = []
    read_before = 0
    for first, rows in spans:
        inside = pc.and_(pc.greater_equal(every, first), pc.less(every, first + rows))
        indices.append(pc.add(pc.subtract(pc.filter(every, inside), first), read_before))
        read_before += rows
    distinct = pc.unique(pa.chunked_array(indices, pa.int64()).combine_chunks())
    return pc.take(distinct, pc.array_sort_indices(distinct))


def _deleted_in(deleted: pa.Array, offset: int, rows: int) -> pa.Array | None:
    """A mask of the rows ``offset .. offset + rows`` of the read that are deleted; None when none is."""
    low = bisect.bisect_left(deleted, offset, key=lambda value: value.as_py())
    high = bisect.bisect_left(deleted, offset + rows, key=lambda value: value.as_py())
    if low == high:
        return None
    return pc.is_in(_range(rows), value_set=pc.subtract(deleted[low:high], offset))


def _range(rows: int) -> pa.Array:
    """0 .. rows - 1, built in Arrow."""
    return pc.subtract(pc.cumulative_sum(pc.fill_null(pa.nulls(rows, pa.int64()), 1)), 1)


# Equality deletes ------------------------------------------------------------------------------------


class _EqualityKeys:
    """The distinct keys of a split's equality delete files on one set of columns, grouped by which of
    the columns are NULL: a row matches a key when the same columns are NULL and the others are equal."""

    def __init__(self, equality_ids: tuple[int, ...], files: Sequence[DeleteFile], columns: Sequence[Column],
                 storage: StorageResolver) -> None:
        by_id = {c.field_id: c for c in columns if c.field_id is not None and not c.partition}
        missing = [i for i in equality_ids if i not in by_id or not by_id[i].readable]
        if missing or not equality_ids:
            raise UnsupportedTableError(
                f"{files[0].path}: equality delete on field ids {list(equality_ids)}, not all readable top-level "
                "columns of the table")
        self.columns = [by_id[i] for i in equality_ids]
        self.names = [f"k{index}" for index in range(len(self.columns))]
        schema = pa.schema([pa.field(name, _arrow_type(c)) for name, c in zip(self.names, self.columns)])
        tables = [self._read(d, equality_ids, schema, storage) for d in files]
        keys = pa.concat_tables(tables).group_by(self.names).aggregate([])
        patterns = _null_pattern(keys, self.names)
        self.by_pattern: list[tuple[int, pa.Table | None]] = []
        for pattern in pc.unique(patterns).to_pylist():
            present = [name for bit, name in enumerate(self.names) if not (pattern >> bit) & 1]
            rows = keys.filter(pc.equal(patterns, pattern)).select(present)
            self.by_pattern.append((pattern, rows if present else None))
        self.indices: list[int] = []

    def _read(self, delete: DeleteFile, equality_ids: tuple[int, ...], schema: pa.Schema,
              storage: StorageResolver) -> pa.Table:
        wanted = {i: c.name for i, c in zip(equality_ids, self.columns)}
        with _open(delete, storage) as handle:
            if delete.file_format == "parquet":
                parquet = pq.ParquetFile(handle, coerce_int96_timestamp_unit="us")
                names = _field_names(parquet.schema_arrow, wanted)
                table = parquet.read(columns=list(dict.fromkeys(names.values())))
            else:
                reader = orc.ORCFile(handle)
                names = _field_names(reader.schema, wanted)
                table = reader.read(columns=list(dict.fromkeys(names.values())))
        renamed = pa.table({name: table.column(names[i]) if i in names else pa.nulls(table.num_rows)
                            for name, i in zip(self.names, equality_ids)})
        as_keys = [replace(c, name=name) for c, name in zip(self.columns, self.names)]
        return pa.Table.from_batches([shape_batch(renamed, as_keys, schema, {})], schema=schema)

    def place(self, read_columns: list[Column], fields: list[pa.Field]) -> None:
        """Note where the key columns are among the columns read, adding those the query did not ask for."""
        self.indices = []
        for column in self.columns:
            at = next((i for i, c in enumerate(read_columns) if c.field_id == column.field_id and not c.partition), None)
            if at is None:
                at = len(read_columns)
                read_columns.append(column)
                fields.append(pa.field(column.name, _arrow_type(column)))
            self.indices.append(at)

    def matches(self, batch: pa.RecordBatch) -> pa.Array:
        """Which rows of ``batch`` equal a key."""
        rows = pa.table({name: batch.column(i) for name, i in zip(self.names, self.indices)})
        rows = rows.append_column("row", _range(batch.num_rows))
        patterns = _null_pattern(rows, self.names)
        hits = []
        for pattern, keys in self.by_pattern:
            candidates = rows.filter(pc.equal(patterns, pattern))
            if not candidates.num_rows:
                continue
            if keys is not None:
                candidates = candidates.join(keys, keys=keys.column_names, join_type="left semi")
            hits.append(candidates.column("row"))
        if not hits:
            return pa.nulls(batch.num_rows, pa.bool_()).fill_null(False)
        return pc.is_in(_range(batch.num_rows), value_set=pa.chunked_array(hits, pa.int64()).combine_chunks())


def _null_pattern(table: pa.Table, names: Sequence[str]) -> pa.Array:
    """Per row, a bit per key column that is NULL."""
    pattern = pc.fill_null(pa.nulls(table.num_rows, pa.int64()), 0)
    for bit, name in enumerate(names):
        pattern = pc.add(pattern, pc.multiply(pc.cast(pc.is_null(table.column(name)), pa.int64()), 1 << bit))
    return pattern.combine_chunks() if isinstance(pattern, pa.ChunkedArray) else pattern


def _arrow_type(column: Column) -> pa.DataType:
    """The Arrow type an equality key column is read as; a column with no type cannot be a key."""
    if column.type is None:
        raise UnsupportedTableError(f"equality delete key column '{column.name}' has a type that cannot be read")
    return to_arrow_type(column.type)
