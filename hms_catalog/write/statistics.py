"""The statistics Hive keeps of a table or partition, as a write leaves them: exact file counts and sizes
of what is visible under its location, the row count where the writers counted every row, and no claim
that column statistics are accurate (the write did not gather them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.storage.files import folder_stats
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["written_parameters", "appended_parameters"]

_STALE = ("numFiles", "totalSize", "numRows", "rawDataSize", "COLUMN_STATS_ACCURATE", "numFilesErasureCoded")
_SPARK_STATISTICS = "spark.sql.statistics."


class _Counted(Protocol):
    @property
    def bytes(self) -> int: ...
    @property
    def rows(self) -> int: ...


def _kept(parameters: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in parameters.items() if k not in _STALE and not k.startswith(_SPARK_STATISTICS)}


def written_parameters(parameters: Mapping[str, str], files: Sequence[_Counted]) -> dict[str, str]:
    """``parameters`` of a table or partition whose files are now exactly ``files``."""
    return {**_kept(parameters), "numFiles": str(len(files)), "totalSize": str(sum(f.bytes for f in files)),
            "numRows": str(sum(f.rows for f in files))}


def appended_parameters(storage: StorageResolver, owner: ttypes.Partition | ttypes.Table,
                        files: Sequence[_Counted]) -> dict[str, str]:
    """``owner``'s parameters once ``files`` are added to what its location holds now; the row count only
    when the one recorded before was a count."""
    parameters = {str(k): str(v) for k, v in (owner.parameters or {}).items()}
    before = folder_stats(storage, owner.sd.location) if owner.sd is not None and owner.sd.location else None
    updated = _kept(parameters)
    updated["numFiles"] = str((before.files if before else 0) + len(files))
    updated["totalSize"] = str((before.bytes if before else 0) + sum(f.bytes for f in files))
    rows = parameters.get("numRows", "")
    if rows.isdigit() and (before is None or before.files == 0 or int(rows) > 0):
        updated["numRows"] = str(int(rows) + sum(f.rows for f in files))
    return updated
