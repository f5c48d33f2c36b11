"""Reading a Hudi merge-on-read file slice (base file plus log files) as one merged snapshot.

The merge is hudi-rs's, not ours: log blocks (Avro, Parquet, deletes, rollbacks) and the table's merge
rule (record key, ordering fields, payload or merge mode) are Hudi's to interpret. The file-group reader
is made by the table, as hudi-rs's own snapshot read makes it, so it knows the table's configs and its
timeline (blocks of commits that failed or are still in flight are skipped), and it is pinned to the
commit the plan was made at: every split of a plan reads the same snapshot, and blocks appended to a log
file after planning are not seen. hudi-rs reaches the store with the catalog's settings in its own names
(:func:`hms_catalog.formats.hudi_schema.hudi_storage_options`), as the planner's table does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa

from hms_catalog.errors import PlanningError, UnsupportedTableError
from hms_catalog.formats.hudi_schema import hudi_storage_options
from hms_catalog.formats.schema import Column
from hms_catalog.storage.engines import pyiceberg_properties
from hms_catalog.storage.resolver import StorageResolver
from planner.hudi_planner import LOG_ONLY
from planner.plan import Split
from planner.readers._common import FileChangedError, open_split_file, shape_batch

__all__ = ["read_merged_slice"]


def read_merged_slice(split: Split, columns: Sequence[Column], target: pa.Schema,
                      storage: StorageResolver) -> Iterator[pa.RecordBatch]:
    """The slice's rows with its log files merged over its base file, as batches of exactly ``target``."""
    import hudi

    if split.table_root is None or split.snapshot is None:
        raise PlanningError(f"{split.path} has Hudi log files but its plan names no table root and commit "
                            "(a plan made before snapshot reads were supported): plan again")
    if split.file_format == LOG_ONLY:
        raise UnsupportedTableError(
            f"the Hudi file group of {split.path} has log files and no base file; hudi-rs's file-group reader "
            "cannot read such a slice: compact the table, or read the _ro table (which does not include it)"
        )
    with open_split_file(split, storage):  # the base file is the one planned (a cleaner may have removed it since)
        pass
    partition_values = {k.lower(): v for k, v in split.partition_values}
    builder = hudi.HudiTableBuilder.from_base_uri(split.table_root)
    options = hudi_storage_options(pyiceberg_properties(storage.config, {}))
    table = (builder.with_storage_options(options) if options else builder).build()
    reader = table.create_file_group_reader_with_options(hudi.HudiReadOptions().with_as_of_timestamp(split.snapshot))
    projection = _projection(table.get_schema_with_meta_fields().names, columns)
    try:
        stream = reader.read_file_slice_from_paths_stream(
            _relative(split.path, split.table_root), [_relative(log, split.table_root) for log in split.log_files],
            hudi.HudiReadOptions(projection=projection),
        )
        for batch in stream:
            yield shape_batch(batch, columns, target, partition_values)
    except Exception as error:  # hudi-rs raises its own HudiCoreError; a vanished log file is a stale plan
        _raise_if_vanished(split, error, storage)
        raise


def _projection(names: Sequence[str], columns: Sequence[Column]) -> list[str]:
    """The table's own spelling of the wanted data columns it has (hudi-rs matches names exactly); partition
    columns come from the split's values and absent ones are NULL, as in every reader."""
    by_lower = {name.lower(): name for name in names}
    return list(dict.fromkeys(by_lower[c.name.lower()] for c in columns if not c.partition and c.name.lower() in by_lower))


def _relative(path: str, root: str) -> str:
    """A path as hudi-rs's file-group reader takes it: relative to the table's root."""
    if not path.startswith(root.rstrip("/") + "/"):
        raise PlanningError(f"{path} is not under the Hudi table root {root}: plan again")
    return path[len(root.rstrip("/")) + 1:]


def _raise_if_vanished(split: Split, error: Exception, storage: StorageResolver) -> None:
    """Turn a failed merge into the stale-plan error when one of the slice's files is gone."""
    import pyarrow.fs as pafs

    for path in (split.path, *split.log_files):
        filesystem, located = storage.resolve(path)
        if filesystem.get_file_info(located).type == pafs.FileType.NotFound:
            raise FileChangedError(
                f"{path} no longer exists; the plan is stale: run REFRESH TABLE and plan again"
            ) from error
