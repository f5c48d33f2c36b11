"""Asking for partitions with a projection (``get_partitions_with_specs``) and reading the answer.

A planner needs five things of a partition: its values, location, input format, serde and parameters
(the statistics Hive keeps there). A whole ``Partition`` also carries the columns of its storage
descriptor, skew information and serde parameters, repeated for every partition: most of the bytes on
the wire and most of the decoding time. Hive 4's ``get_partitions_with_specs`` takes a
``GetPartitionsRequest`` with a projection (the field names to fill) and a filter (by names, or by a
filter expression in the grammar of ``get_partitions_by_filter``, several of them AND-ed), and answers
``PartitionSpec`` groups: partitions under the table's folder share one storage descriptor whose
location is the table's, each with its path relative to it; the others come whole.

Older metastores do not know the method; the client asks the classic calls after it (see
:mod:`hms_catalog.client.versions`), which return whole partitions, so callers must accept either.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from hms_catalog.client.hive_thrift import ttypes

__all__ = ["PLANNING_FIELDS", "partitions_request", "partitions_of"]

# What a split planner reads of a partition (Partition's thrift field paths, as Hive's projection names them).
PLANNING_FIELDS: tuple[str, ...] = (
    "values", "sd.location", "sd.inputFormat", "sd.serdeInfo.serializationLib", "parameters",
)


def partitions_request(database: str, table: str, catalog: str | None, fields: Sequence[str], *,
                       names: Sequence[str] | None = None, expression: str | None = None) -> ttypes.GetPartitionsRequest:
    """A request for ``fields`` of the partitions named ``names``, or matching the filter ``expression``,
    or (neither given) every partition of the table."""
    if names is not None and expression is not None:
        raise ValueError("ask partitions by names or by filter expression, not both")
    if names is not None:
        spec = ttypes.GetPartitionsFilterSpec(filterMode=ttypes.PartitionFilterMode.BY_NAMES, filters=list(names))
    elif expression is not None:
        spec = ttypes.GetPartitionsFilterSpec(filterMode=ttypes.PartitionFilterMode.BY_EXPR, filters=[expression])
    else:
        spec = ttypes.GetPartitionsFilterSpec()  # no mode: every partition
    return ttypes.GetPartitionsRequest(
        catName=catalog, dbName=database, tblName=table,
        projectionSpec=ttypes.GetProjectionsSpec(fieldList=list(fields)), filterSpec=spec,
    )


def partitions_of(response: ttypes.GetPartitionsResponse) -> list[ttypes.Partition]:
    """The partitions of a ``get_partitions_with_specs`` answer, as ``Partition`` structs (filled as far as
    the projection asked: a shared storage descriptor is copied onto each partition with its location)."""
    found: list[ttypes.Partition] = []
    for spec in response.partitionSpec or ():
        if spec.partitionList is not None:
            for partition in spec.partitionList.partitions or ():
                partition.dbName = partition.dbName or spec.dbName
                partition.tableName = partition.tableName or spec.tableName
                found.append(partition)
        shared = spec.sharedSDPartitionSpec
        if shared is None:
            continue
        base = shared.sd or ttypes.StorageDescriptor()
        root = base.location
        for member in shared.partitions or ():
            sd = copy.copy(base)
            relative = member.relativePath
            sd.location = root + relative if root is not None and relative is not None else None
            found.append(ttypes.Partition(
                values=member.values, dbName=spec.dbName, tableName=spec.tableName, createTime=member.createTime,
                lastAccessTime=member.lastAccessTime, sd=sd, parameters=member.parameters, catName=spec.catName,
            ))
    return found
