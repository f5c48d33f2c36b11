"""Schemas of Hive tables: the metastore's columns, or Spark's own schema for Spark data source tables.

Spark keeps a data source table's real schema in table parameters (``spark.sql.sources.schema``, split
into numbered parts when long) and leaves a placeholder column in the metastore (``col array<string>``
for ``USING csv``), so for those the parameters are the truth. For Hive-format tables Spark also stores
its schema; the metastore's types stay authoritative there and Spark's copy only restores the case of
column names, which the metastore lower-cases.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import SchemaError
from hms_catalog.formats.detect import Detection
from hms_catalog.formats.schema import Column, TableSchema
from hms_catalog.types import StringType, from_spark_type, parse_hive_type

__all__ = ["hive_schema", "spark_stored_schema"]

_SCHEMA = "spark.sql.sources.schema"
_CHAR_VARCHAR = "__CHAR_VARCHAR_TYPE_STRING"


def spark_stored_schema(parameters: dict[str, str]) -> tuple[list[dict[str, object]], list[str]] | None:
    """Spark's JSON schema fields and partition column names from table parameters, if Spark wrote them."""
    text = parameters.get(_SCHEMA)
    try:
        if text is None and f"{_SCHEMA}.numParts" in parameters:
            parts = int(parameters[f"{_SCHEMA}.numParts"])
            text = "".join(parameters.get(f"{_SCHEMA}.part.{i}", "") for i in range(parts))
        if not text:
            return None
        fields = list(json.loads(text)["fields"])
        count = int(parameters.get(f"{_SCHEMA}.numPartCols", "0"))
    except (ValueError, KeyError, TypeError) as error:
        raise SchemaError(f"table parameters {_SCHEMA}* do not hold a Spark schema: {error}") from error
    partition_names = [parameters.get(f"{_SCHEMA}.partCol.{i}", "") for i in range(count)]
    return fields, partition_names


def _hive_column(schema: ttypes.FieldSchema, *, partition: bool, as_string: bool = False) -> Column:
    source = schema.type or ""
    if as_string:
        return Column(schema.name, StringType(), source, comment=schema.comment or "", partition=partition)
    try:
        parsed = parse_hive_type(source, column=schema.name)
    except SchemaError as error:
        return Column(schema.name, None, source, comment=schema.comment or "", partition=partition, problem=error.reason)
    return Column(schema.name, parsed, source, comment=schema.comment or "", partition=partition)


def _spark_column(spec: dict[str, object], *, partition: bool) -> Column:
    from pyspark.sql.types import StructField

    name = str(spec["name"])
    metadata = spec.get("metadata") or {}
    comment = str(metadata.get("comment", "")) if isinstance(metadata, dict) else ""
    declared = metadata.get(_CHAR_VARCHAR) if isinstance(metadata, dict) else None
    try:
        if declared:
            parsed = parse_hive_type(str(declared), column=name)
            source = str(declared)
        else:
            spark_field = StructField.fromJson(spec)
            parsed = from_spark_type(spark_field.dataType)
            source = spark_field.dataType.simpleString()
    except (SchemaError, ValueError, KeyError, TypeError) as error:
        return Column(name, None, json.dumps(spec.get("type")), comment=comment, partition=partition, problem=str(error))
    return Column(name, parsed, source, nullable=bool(spec.get("nullable", True)), comment=comment, partition=partition)


def _restore_case(columns: Sequence[Column], stored: list[dict[str, object]] | None) -> list[Column]:
    if not stored:
        return list(columns)
    by_lower = {str(spec["name"]).lower(): str(spec["name"]) for spec in stored}
    if set(by_lower) != {c.name.lower() for c in columns}:
        return list(columns)
    return [Column(**{**c.__dict__, "name": by_lower[c.name.lower()]}) for c in columns]


def hive_schema(table: ttypes.Table, detection: Detection) -> TableSchema:
    """The schema of a Hive (or Spark data source, or unknown-format) table from its metastore entry."""
    parameters = {str(k): str(v) for k, v in (table.parameters or {}).items()}
    stored = spark_stored_schema(parameters)
    if detection.spark_provider and stored is not None:
        fields, partition_names = stored
        partitions = {name.lower() for name in partition_names}
        columns = [_spark_column(spec, partition=str(spec["name"]).lower() in partitions) for spec in fields]
        return TableSchema(tuple(columns), source=f"{_SCHEMA} (Spark data source, provider {detection.spark_provider})")
    as_string = bool(detection.text and detection.text.all_columns_string)
    data = [_hive_column(c, partition=False, as_string=as_string) for c in (table.sd.cols if table.sd else None) or []]
    keys = [_hive_column(k, partition=True) for k in table.partitionKeys or []]
    columns = _restore_case(data + keys, stored[0] if stored else None)
    source = "metastore columns" + (" (OpenCSVSerde reads every column as string)" if as_string else "")
    return TableSchema(tuple(columns), source=source)
