"""An Iceberg data file as a snapshot lists it: its metrics from the Parquet footer, as Iceberg's writers
record them, and its partition tuple computed with pyiceberg's own transforms of its rows.

A data file must lie in exactly one partition of the table's spec. The tuple is proved, not trusted: for a
transform that keeps order (identity, year, month, day, hour, truncate) the transforms of the column's
lower and upper bounds must agree and the column must have no nulls beside values; otherwise (bucket, or a
footer without bounds) the distinct values of the source column are read and each transformed. A file whose
rows span two partitions is refused, naming it, so a wrong writer can never commit a file under the wrong
partition (a scan that prunes by partition would then skip rows).
"""

from __future__ import annotations

from typing import Any

from hms_catalog.errors import ConfigurationError

__all__ = ["data_file", "partition_tuple"]


def data_file(io: Any, metadata: Any, path: str, *, spec: Any | None = None, schema: Any | None = None) -> Any:
    """The DataFile of the Parquet file at ``path`` for a table of ``metadata`` (``spec``/``schema``: those
    of a table not yet created, whose metadata is being built)."""
    import pyarrow.parquet as pq
    from pyiceberg.io.pyarrow import (
        _check_pyarrow_schema_compatible,
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat

    spec = spec if spec is not None else metadata.spec()
    schema = schema if schema is not None else metadata.schema()
    source = io.new_input(path)
    with source.open() as stream:
        footer = pq.read_metadata(stream)
    _check_pyarrow_schema_compatible(schema, footer.schema.to_arrow_schema(), format_version=metadata.format_version)
    statistics = data_file_statistics_from_parquet_metadata(
        parquet_metadata=footer, stats_columns=compute_statistics_plan(schema, metadata.properties),
        parquet_column_mapping=parquet_path_to_id_mapping(schema))
    partition = partition_tuple(io, path, footer, statistics, spec, schema)
    return DataFile.from_args(content=DataFileContent.DATA, file_path=path, file_format=FileFormat.PARQUET, partition=partition,
                              file_size_in_bytes=len(source), sort_order_id=None, spec_id=spec.spec_id, equality_ids=None,
                              key_metadata=None, **statistics.to_serialized_dict())


def partition_tuple(io: Any, path: str, footer: Any, statistics: Any, spec: Any, schema: Any) -> Any:
    """The file's partition in ``spec``: one value per field, each the same for every row of the file."""
    from pyiceberg.typedef import Record

    values = []
    for field in spec.fields:
        values.append(_field_value(io, path, footer, statistics, field, schema))
    return Record(*values)


def _field_value(io: Any, path: str, footer: Any, statistics: Any, field: Any, schema: Any) -> Any:
    from pyiceberg.partitioning import partition_record_value
    from pyiceberg.transforms import VoidTransform

    if isinstance(field.transform, VoidTransform):
        return None
    source = schema.find_field(field.source_id)
    transform = field.transform.transform(source.field_type)
    rows = statistics.record_count
    nulls = statistics.null_value_counts.get(field.source_id)
    if rows == 0:
        return None
    if nulls == rows:
        return transform(None)
    aggregate = statistics.column_aggregates.get(field.source_id)
    if nulls == 0 and aggregate is not None and aggregate.current_min is not None and aggregate.current_max is not None:
        low = transform(partition_record_value(field, aggregate.current_min, schema))
        high = transform(partition_record_value(field, aggregate.current_max, schema))
        if low == high and (field.transform.preserves_order or aggregate.current_min == aggregate.current_max):
            return low
        if field.transform.preserves_order:
            raise _spans(path, field, source.name, low, high)
    found = {transform(partition_record_value(field, value, schema)) if value is not None else transform(None)
             for value in _distinct(io, path, footer, field.source_id, source.name)}
    if len(found) != 1:
        shown = sorted(found, key=repr)
        raise _spans(path, field, source.name, shown[0], shown[1])
    return found.pop()


def _distinct(io: Any, path: str, footer: Any, field_id: int, name: str) -> list[Any]:
    """The distinct values of the file's column of ``field_id`` (its top-level column; nested sources are
    refused when the write begins)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    arrow = footer.schema.to_arrow_schema()
    column = next((f.name for f in arrow if (f.metadata or {}).get(b"PARQUET:field_id") == str(field_id).encode()), name)
    with io.new_input(path).open() as stream:
        table = pq.read_table(stream, columns=[column], coerce_int96_timestamp_unit="us")
    return list(pc.unique(table.column(0)).to_pylist())


def _spans(path: str, field: Any, source: str, first: Any, second: Any) -> ConfigurationError:
    return ConfigurationError(f"data file {path} holds rows of two partitions of field {field.name} ({field.transform}({source})): "
                              f"{first!r} and {second!r}; each data file must lie in one partition, so nothing was committed")
