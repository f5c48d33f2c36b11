"""Where a write's files wait for their commit, and what crashed writes leave there.

Each job writes under ``<table root>/.hms-staging-<job id>/`` (``k=v/...`` folders as Hive lays them out).
The leading dot hides the folder from every listing of the table, this project's and Hadoop's and
Spark's. A commit renames the job's folders and files out of it to the table's own locations, and sets
aside what it replaces into it until it is done. (Older releases pointed replaced partitions into a
staging folder and marked it committed: the table's root is its location with any staging folder taken
off, and a write moves such a location back to the table's own folder.)

The layout lives here, with the commits, because the write path (which fills staging folders), the commits
(whose undo logs name them) and RECOVER PARTITIONS (which deletes dead jobs' folders) all need it, and the
commits are the one of these the other two import. The file operations are :mod:`hms_catalog.storage.files`.

A staging folder is a dead job's when no live job of this catalog owns it, no unfinished commit's undo log
names it (those are undone or finished first), and no location of the table points into it. Such folders
are deleted by the table's next write and by ALTER TABLE .. RECOVER PARTITIONS. Live jobs are those of this
process: a job begun through another service process on the same table is not known here.
Locations are Hadoop paths: nothing here percent-decodes them (see :mod:`hms_catalog.storage.locations`).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from typing import Protocol

import pyarrow.fs as pafs

from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.commits.recovery import RecoveringCatalog
from hms_catalog.storage import files
from hms_catalog.storage.locations import join_location, normalize_location
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["STAGING_PREFIX", "new_job_id", "valid_job_id", "table_root", "staging_folder", "staging_ancestor",
           "is_within", "normalized", "stale_staging", "remove_stale_staging", "StagingCatalog"]

STAGING_PREFIX = ".hms-staging-"
_JOB_ID = re.compile(r"^[0-9a-z-]{8,64}$")
_STAGED_TAIL = re.compile(r"/" + re.escape(STAGING_PREFIX) + r"[0-9a-z-]+(/.*)?$")


def new_job_id() -> str:
    return secrets.token_hex(8)


def valid_job_id(job: str) -> bool:
    return bool(_JOB_ID.match(job))


def table_root(location: str) -> str:
    """``location`` without a staging folder it points into (an unpartitioned table replaced by a write)."""
    return _STAGED_TAIL.sub("", location.rstrip("/"))


def staging_folder(root: str, job: str) -> str:
    return f"{root.rstrip('/')}/{STAGING_PREFIX}{job}"


def normalized(location: str) -> str:
    return normalize_location(location).rstrip("/")


def is_within(location: str, folder: str) -> bool:
    location, folder = normalize_location(location).rstrip("/"), normalize_location(folder).rstrip("/")
    return location == folder or location.startswith(folder + "/")


def staging_ancestor(root: str, location: str) -> str | None:
    """The staging folder of ``root`` that ``location`` is in, if any."""
    relative = normalized(location)[len(normalized(root)) + 1:]
    first = relative.split("/", 1)[0]
    return f"{root.rstrip('/')}/{first}" if first.startswith(STAGING_PREFIX) else None


def stale_staging(storage: StorageResolver, root: str, live: Iterable[str], current: Iterable[str]) -> list[str]:
    """The staging folders under ``root`` of no live job that hold no current location (a crashed job's)."""
    filesystem, path = storage.resolve(root)
    infos = filesystem.get_file_info(pafs.FileSelector(path, recursive=False, allow_not_found=True))
    keep = set(live)
    locations = list(current)
    stale = []
    for info in infos:
        if info.type != pafs.FileType.Directory or not info.base_name.startswith(STAGING_PREFIX):
            continue
        folder = join_location(root, info.path)
        if info.base_name[len(STAGING_PREFIX):] in keep or any(is_within(loc, folder) for loc in locations):
            continue
        stale.append(folder)
    return stale


class _Jobs(Protocol):
    """What the clean-up asks of a catalog's write jobs (a :class:`hms_catalog.write.jobs.WriteJobs`)."""

    def finish_unfinished(self, catalog: RecoveringCatalog, table: tuple[str, str] | None = None) -> int: ...
    def live(self, database: str, table: str) -> list[str]: ...


class StagingCatalog(RecoveringCatalog, Protocol):
    """What the clean-up needs of a catalog (an ExternalCatalog): its write jobs and metastore besides
    what recovery needs (the catalog's model is not imported here: the model sits below the commits)."""

    @property
    def client(self) -> MetastoreCalls: ...
    @property
    def write_jobs(self) -> _Jobs: ...


def remove_stale_staging(catalog: StagingCatalog, struct: ttypes.Table, root: str) -> list[str]:
    """Delete the dead jobs' staging folders under ``root``; the folders deleted. The table's unfinished
    commits are undone or finished first: what they set aside waits in their staging folders."""
    catalog.write_jobs.finish_unfinished(catalog, (struct.dbName.lower(), struct.tableName.lower()))
    live = catalog.write_jobs.live(struct.dbName.lower(), struct.tableName.lower())
    candidates = stale_staging(catalog.storage, root, live, ())
    if not candidates:
        return []
    current = [struct.sd.location] if struct.sd is not None and struct.sd.location else []
    if struct.partitionKeys:
        partitions = catalog.client.get_partitions_by_filter(struct.dbName, struct.tableName, "", fields=("sd.location",))
        current += [p.sd.location for p in partitions if p.sd is not None and p.sd.location]
    removed = [folder for folder in candidates if not any(is_within(location, folder) for location in current)]
    for folder in removed:
        files.delete_folder(catalog.storage, folder)
    return removed
