"""What crashed writes leave: staging folders of jobs no process runs any more.

A staging folder is a dead job's when no live job of this catalog owns it, no unfinished commit's undo log
names it (those are undone or finished first), and no location of the table points into it (older
releases pointed replaced partitions into staging folders; a write moves them back to the table's own).
Such folders are deleted by the table's next write and by ALTER TABLE .. RECOVER PARTITIONS. Live jobs
are those of this process: a job begun through another service process on the same table is not known
here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.write import staging

if TYPE_CHECKING:
    from hms_catalog.model import ExternalCatalog

__all__ = ["remove_stale_staging"]


def remove_stale_staging(catalog: ExternalCatalog, struct: ttypes.Table, root: str) -> list[str]:
    """Delete the dead jobs' staging folders under ``root``; the folders deleted. The table's unfinished
    commits are undone or finished first: what they set aside waits in their staging folders."""
    catalog.write_jobs.finish_unfinished(catalog, (struct.dbName.lower(), struct.tableName.lower()))
    live = catalog.write_jobs.live(struct.dbName.lower(), struct.tableName.lower())
    candidates = staging.stale_staging(catalog.storage, root, live, ())
    if not candidates:
        return []
    current = [struct.sd.location] if struct.sd is not None and struct.sd.location else []
    if struct.partitionKeys:
        partitions = catalog.client.get_partitions_by_filter(struct.dbName, struct.tableName, "", fields=("sd.location",))
        current += [p.sd.location for p in partitions if p.sd is not None and p.sd.location]
    removed = [folder for folder in candidates if not any(staging.is_within(location, folder) for location in current)]
    for folder in removed:
        staging.delete_folder(catalog.storage, folder)
    return removed
