"""Iceberg tables created, changed and dropped through pyiceberg's Hive catalog on the catalog's metastore.

An Iceberg table's truth is its metadata file, not the metastore's columns: creating one writes the first
metadata file and registers the table (``table_type=ICEBERG``, ``metadata_location``); a schema change
is a new metadata file committed with the metastore's lock, which pyiceberg does. Columns are matched by
field id, so a rename or a widening reads old data files right. Partitioning is Iceberg's own:
``PARTITIONED BY (days(ts), bucket(16, id))`` becomes partition fields with those transforms.

pyiceberg opens its own connection to the first metastore URI; Hive 2 and 3 metastores need its
``hive.hive2-compatible`` mode, which is on unless the catalog sets ``hive.hive2-compatible`` to false
(a Hive 4 metastore). Kerberos metastores are not supported for Iceberg DDL yet: the error says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hms_catalog.ddl.specs import ColumnSpec, TableSpec
from hms_catalog.errors import ConfigurationError, NotFoundError
from hms_catalog.types import StructField, parse_hive_type
from hms_catalog.types.arrow import to_arrow_schema

if TYPE_CHECKING:
    from hms_catalog.model import ExternalCatalog

__all__ = ["iceberg_catalog", "create_iceberg_table", "partition_transform", "arrow_schema_of"]

_TRANSFORM = re.compile(r"^\s*(?:(?P<name>\w+)\s*\(\s*(?:(?P<width>\d+)\s*,\s*)?(?P<arg>\w+)\s*\)|(?P<column>\w+))\s*$")
_TRANSFORMS = {"identity": "identity", "years": "year", "year": "year", "months": "month", "month": "month",
               "days": "day", "day": "day", "hours": "hour", "hour": "hour", "bucket": "bucket", "truncate": "truncate"}


def iceberg_catalog(catalog: ExternalCatalog) -> Any:
    """pyiceberg's Hive catalog over the catalog's metastore, with the catalog's file IO properties; one that
    writes format version 3 too (:mod:`hms_catalog.ddl._hive_v3`)."""
    from hms_catalog.ddl._hive_v3 import HiveCatalogV3

    config = catalog.config
    if config.client.kerberos is not None:
        raise ConfigurationError(f"catalog '{catalog.name}': Iceberg DDL on a Kerberos metastore is not supported yet; "
                                 "create the table with pyiceberg or Spark's Iceberg catalog, and it is read here")
    uri = config.client.uris[0]
    # the FileIO names of the catalog's storage settings, however the user spelled them
    properties = {key: value for key, value in catalog.io_properties.items()
                  if key.startswith(("s3.", "gcs.", "adls.", "hdfs.", "py-io"))}
    properties["hive.hive2-compatible"] = config.raw.get("hive.hive2-compatible", "true")
    return HiveCatalogV3(catalog.name, uri=f"thrift://{uri.host}:{uri.port}", **properties)


def arrow_schema_of(columns: Sequence[ColumnSpec]) -> Any:
    return to_arrow_schema([StructField(c.name, parse_hive_type(c.type, column=c.name), True, c.comment or None) for c in columns])


def partition_transform(text: str) -> tuple[str, str, int | None]:
    """``days(ts)`` as (source column, Iceberg transform name, width); ``col`` alone is identity."""
    match = _TRANSFORM.match(text)
    if match is None:
        raise ConfigurationError(f"partition transform '{text}' is not of the form col, days(col), bucket(16, col), ...")
    if match.group("column"):
        return match.group("column"), "identity", None
    name = match.group("name").lower()
    if name not in _TRANSFORMS:
        raise ConfigurationError(f"unknown partition transform '{name}'; expected one of {', '.join(sorted(set(_TRANSFORMS)))}")
    width = match.group("width")
    transform = _TRANSFORMS[name]
    if transform in ("bucket", "truncate") and width is None:
        raise ConfigurationError(f"{name}(n, column) needs its width, e.g. {name}(16, {match.group('arg')})")
    return match.group("arg"), transform, int(width) if width else None


def _transform(name: str, width: int | None) -> Any:
    from pyiceberg.transforms import (
        BucketTransform,
        DayTransform,
        HourTransform,
        IdentityTransform,
        MonthTransform,
        TruncateTransform,
        YearTransform,
    )

    simple = {"identity": IdentityTransform, "year": YearTransform, "month": MonthTransform, "day": DayTransform,
              "hour": HourTransform}
    if name in simple:
        return simple[name]()
    assert width is not None  # partition_transform requires it for these two
    return BucketTransform(width) if name == "bucket" else TruncateTransform(width)


def create_iceberg_table(catalog: ExternalCatalog, spec: TableSpec, location: str | None) -> Any:
    """Create ``spec`` as an Iceberg table; dropped again if its partitioning cannot be set."""
    from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchNamespaceError, TableAlreadyExistsError

    if spec.partition_columns:
        raise ConfigurationError("an Iceberg table is partitioned by its own columns: PARTITIONED BY (col, days(ts), ...)")
    fields = [partition_transform(text) for text in spec.partition_transforms]
    names = {c.name.lower(): c.name for c in spec.columns}
    for source, _, _ in fields:
        if source.lower() not in names:
            raise ConfigurationError(f"PARTITIONED BY names '{source}', which is not a column of the table")
    iceberg = iceberg_catalog(catalog)
    identifier = (spec.database.lower(), spec.name.lower())
    properties = dict(spec.properties)
    if spec.comment:
        properties["comment"] = spec.comment
    try:
        table = iceberg.create_table(identifier, schema=arrow_schema_of(spec.columns), location=location, properties=properties)
    except TableAlreadyExistsError as error:
        from hms_catalog.errors import AlreadyExistsError

        raise AlreadyExistsError("table", f"{catalog.name}.{identifier[0]}.{identifier[1]}") from error
    except (NoSuchNamespaceError, NamespaceAlreadyExistsError) as error:
        raise NotFoundError("database", identifier[0]) from error
    if fields:
        try:
            with table.update_spec() as update:
                for source, transform, width in fields:
                    update.add_field(names[source.lower()], _transform(transform, width))
        except Exception as error:
            iceberg.purge_table(identifier)
            raise ConfigurationError(f"cannot partition {identifier[0]}.{identifier[1]} by {', '.join(spec.partition_transforms)}: "
                                     f"{error}; the table was not created") from error
    return table


_SPARK_TRANSFORMS = {"year": "years", "month": "months", "day": "days", "hour": "hours"}


def partitioning_text(metadata_location: str, io_properties: dict[str, str]) -> str | None:
    """An Iceberg table's current partition spec as ``PARTITIONED BY`` writes it (``days(ts), bucket(16, id)``)."""
    from pyiceberg.table import StaticTable

    from hms_catalog.storage.locations import normalize_location

    static = StaticTable.from_metadata(normalize_location(metadata_location), properties=io_properties)
    schema = static.schema()
    parts = []
    for field in static.spec().fields:
        source = schema.find_column_name(field.source_id)
        transform = str(field.transform)
        if transform == "identity":
            parts.append(source)
        elif transform in _SPARK_TRANSFORMS:
            parts.append(f"{_SPARK_TRANSFORMS[transform]}({source})")
        elif transform.startswith(("bucket[", "truncate[")):
            name, width = transform[:-1].split("[")
            parts.append(f"{name}({width}, {source})")
    return ", ".join(str(p) for p in parts) or None
