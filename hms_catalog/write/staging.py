"""Where a write's files wait for their commit, and the file operations of a commit.

Each job writes under ``<table root>/.hms-staging-<job id>/`` (``k=v/...`` folders as Hive lays them out).
The leading dot hides the folder from every listing of the table, this project's and Hadoop's and
Spark's. A commit renames the job's folders and files out of it to the table's own locations, and sets
aside what it replaces into it until it is done. (Older releases pointed replaced partitions into a
staging folder and marked it committed: the table's root is its location with any staging folder taken
off, and a write moves such a location back to the table's own folder.)
Locations are Hadoop paths: nothing here percent-decodes them (see :mod:`hms_catalog.storage.locations`).
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow.fs as pafs

from hms_catalog.storage.locations import is_hidden, join_location, normalize_location
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["is_hidden", "files_under", "normalized", "staging_ancestor", "make_folder",
           "delete_any", "object_moves", "move_objects", "move_object", "delete_if_no_objects",
           "is_empty_folder", "STAGING_PREFIX", "FolderStats", "new_job_id", "table_root", "staging_folder", "folder_stats", "move",
           "delete_folder", "delete_files", "stale_staging", "exists", "is_within", "valid_job_id", "visible_children"]

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


def is_within(location: str, folder: str) -> bool:
    location, folder = normalize_location(location).rstrip("/"), normalize_location(folder).rstrip("/")
    return location == folder or location.startswith(folder + "/")


@dataclass(frozen=True)
class FolderStats:
    """The visible files under a location (names starting with ``.`` or ``_`` skipped, counted recursively)."""

    files: int
    bytes: int


def folder_stats(storage: StorageResolver, location: str) -> FolderStats:
    filesystem, path = storage.resolve(location)
    infos = filesystem.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    root = path.rstrip("/")
    files = [info for info in infos if info.type == pafs.FileType.File and not is_hidden(info.path[len(root):])]
    return FolderStats(len(files), sum(info.size or 0 for info in files))


def files_under(storage: StorageResolver, location: str) -> dict[str, tuple[str, int]]:
    """The visible files under ``location``, recursively: relative path -> (location, size)."""
    filesystem, path = storage.resolve(location)
    infos = filesystem.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    root = path.rstrip("/") + "/"
    found = {}
    for info in infos:
        relative = info.path[len(root):] if info.path.startswith(root) else info.path
        if info.type == pafs.FileType.File and not is_hidden(relative):
            found[relative] = (join_location(location, info.path), info.size or 0)
    return found


def normalized(location: str) -> str:
    return normalize_location(location).rstrip("/")


def staging_ancestor(root: str, location: str) -> str | None:
    """The staging folder of ``root`` that ``location`` is in, if any."""
    relative = normalized(location)[len(normalized(root)) + 1:]
    first = relative.split("/", 1)[0]
    return f"{root.rstrip('/')}/{first}" if first.startswith(STAGING_PREFIX) else None


def make_folder(storage: StorageResolver, location: str) -> None:
    filesystem, path = storage.resolve(location)
    filesystem.create_dir(path, recursive=True)




def delete_any(storage: StorageResolver, location: str) -> None:
    filesystem, path = storage.resolve(location)
    info = filesystem.get_file_info(path)
    if info.type == pafs.FileType.Directory:
        filesystem.delete_dir(path)
    elif info.type == pafs.FileType.File:
        filesystem.delete_file(path)


def exists(storage: StorageResolver, location: str) -> bool:
    filesystem, path = storage.resolve(location)
    return filesystem.get_file_info(path).type != pafs.FileType.NotFound


def is_empty_folder(storage: StorageResolver, location: str) -> bool:
    """Whether ``location`` is a folder with nothing in it (hidden entries count)."""
    filesystem, path = storage.resolve(location)
    if filesystem.get_file_info(path).type != pafs.FileType.Directory:
        return False
    return not filesystem.get_file_info(pafs.FileSelector(path, recursive=False))


def move(storage: StorageResolver, source: str, target: str) -> None:
    """Rename a file or folder (one rename: atomic on HDFS and local disks), making the target's parent; a
    folder on an object store, which has no folders to rename, object by object."""
    objects = object_moves(storage, source, target)
    if objects is not None:
        move_objects(storage, source, objects)
        return
    filesystem, source_path = storage.resolve(source)
    _, target_path = storage.resolve(target)
    parent = target_path.rstrip("/").rsplit("/", 1)[0]
    if parent:
        filesystem.create_dir(parent, recursive=True)
    filesystem.move(source_path, target_path)


def object_moves(storage: StorageResolver, source: str, target: str) -> list[tuple[str, str]] | None:
    """The moves of a folder's objects one by one, on an object store (None for a file, or where a folder
    is renamed in one step): there a folder's move is a copy and a delete of each object, and one that fails
    half-way leaves the objects split between both places, so an undo log writes down each object's move."""
    if not storage.is_object_store(source):
        return None
    filesystem, path = storage.resolve(source)
    if filesystem.get_file_info(path).type != pafs.FileType.Directory:
        return None
    root = path.rstrip("/")
    infos = filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
    return [(source.rstrip("/") + info.path[len(root):], target.rstrip("/") + info.path[len(root):])
            for info in infos if info.type == pafs.FileType.File]


def move_objects(storage: StorageResolver, source: str, objects: Iterable[tuple[str, str]]) -> None:
    """Take the moves :func:`object_moves` listed for the folder ``source``, then its emptied marker away
    (copy, then delete, each: not atomic, as no rename on an object store is; an undo log that wrote them
    down moves them back after a failure)."""
    for each in objects:
        move_object(storage, *each)
    delete_if_no_objects(storage, source)


def move_object(storage: StorageResolver, source: str, target: str) -> None:
    """Move one object (an object store needs no parent folder made first)."""
    filesystem, source_path = storage.resolve(source)
    _, target_path = storage.resolve(target)
    filesystem.move(source_path, target_path)


def delete_if_no_objects(storage: StorageResolver, location: str) -> None:
    """Delete the folder ``location`` when no file is under it: the markers an object store keeps of a folder
    whose objects were all moved away."""
    filesystem, path = storage.resolve(location)
    if filesystem.get_file_info(path).type != pafs.FileType.Directory:
        return
    if not any(info.type == pafs.FileType.File for info in filesystem.get_file_info(pafs.FileSelector(path, recursive=True))):
        filesystem.delete_dir(path)


def delete_folder(storage: StorageResolver, location: str) -> None:
    filesystem, path = storage.resolve(location)
    if filesystem.get_file_info(path).type == pafs.FileType.Directory:
        filesystem.delete_dir(path)


def delete_files(storage: StorageResolver, locations: Iterable[str]) -> None:
    for location in locations:
        filesystem, path = storage.resolve(location)
        with contextlib.suppress(FileNotFoundError):
            filesystem.delete_file(path)


def visible_children(storage: StorageResolver, location: str) -> list[str]:
    """The visible files and folders directly under ``location``, as locations."""
    filesystem, path = storage.resolve(location)
    infos = filesystem.get_file_info(pafs.FileSelector(path, recursive=False, allow_not_found=True))
    return [join_location(location, info.path) for info in infos if not is_hidden(info.base_name)]


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
