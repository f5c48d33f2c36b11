"""The file operations of the core: make a folder, move, delete, look whether something exists, list what a
folder holds; each a function of a catalog's :class:`~hms_catalog.storage.resolver.StorageResolver`.

They live with the resolver, not with their callers, so that the write path, the commits that undo or
complete it, DDL and the Iceberg REST endpoint all reach files the same way without importing one another
(a commit undoes a write's moves, and a write takes the commit's steps: both need the moves, and neither
may need the other back). Locations are Hadoop paths: nothing here percent-decodes them (see
:mod:`hms_catalog.storage.locations`). What the folders mean (a write's staging folder) is the callers'.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow.fs as pafs

from hms_catalog.storage.locations import is_hidden, join_location
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["FolderStats", "folder_stats", "files_under", "file_paths", "visible_children", "exists", "is_file",
           "is_empty_folder", "make_folder", "move", "object_moves", "move_objects", "move_object", "delete_any",
           "delete_if_no_objects", "delete_folder", "delete_files"]


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


def file_paths(storage: StorageResolver, location: str) -> list[str]:
    """Every file under ``location``, recursively, hidden ones too, as the filesystem names them (for a
    message: what a drop left behind)."""
    filesystem, path = storage.resolve(location)
    found = filesystem.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    return [entry.path for entry in found if entry.type == pafs.FileType.File]


def visible_children(storage: StorageResolver, location: str) -> list[str]:
    """The visible files and folders directly under ``location``, as locations."""
    filesystem, path = storage.resolve(location)
    infos = filesystem.get_file_info(pafs.FileSelector(path, recursive=False, allow_not_found=True))
    return [join_location(location, info.path) for info in infos if not is_hidden(info.base_name)]


def exists(storage: StorageResolver, location: str) -> bool:
    filesystem, path = storage.resolve(location)
    return filesystem.get_file_info(path).type != pafs.FileType.NotFound


def is_file(storage: StorageResolver, location: str) -> bool:
    """Whether ``location`` is a file (where a folder is wanted, say)."""
    filesystem, path = storage.resolve(location)
    return filesystem.get_file_info(path).type == pafs.FileType.File


def is_empty_folder(storage: StorageResolver, location: str) -> bool:
    """Whether ``location`` is a folder with nothing in it (hidden entries count)."""
    filesystem, path = storage.resolve(location)
    if filesystem.get_file_info(path).type != pafs.FileType.Directory:
        return False
    return not filesystem.get_file_info(pafs.FileSelector(path, recursive=False))


def make_folder(storage: StorageResolver, location: str) -> None:
    """Make ``location`` a folder, with its parents (nothing to do where it is one already)."""
    filesystem, path = storage.resolve(location)
    filesystem.create_dir(path, recursive=True)


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


def delete_any(storage: StorageResolver, location: str) -> None:
    """Delete the file or folder ``location``; nothing there, nothing to do."""
    filesystem, path = storage.resolve(location)
    info = filesystem.get_file_info(path)
    if info.type == pafs.FileType.Directory:
        filesystem.delete_dir(path)
    elif info.type == pafs.FileType.File:
        filesystem.delete_file(path)


def delete_if_no_objects(storage: StorageResolver, location: str) -> None:
    """Delete the folder ``location`` when no file is under it: the markers an object store keeps of a folder
    whose objects were all moved away."""
    filesystem, path = storage.resolve(location)
    if filesystem.get_file_info(path).type != pafs.FileType.Directory:
        return
    if not any(info.type == pafs.FileType.File for info in filesystem.get_file_info(pafs.FileSelector(path, recursive=True))):
        filesystem.delete_dir(path)


def delete_folder(storage: StorageResolver, location: str) -> None:
    """Delete the folder ``location`` and all it holds; nothing to do where there is no folder."""
    filesystem, path = storage.resolve(location)
    if filesystem.get_file_info(path).type == pafs.FileType.Directory:
        filesystem.delete_dir(path)


def delete_files(storage: StorageResolver, locations: Iterable[str]) -> None:
    """Delete each file of ``locations``; one already gone is no error."""
    for location in locations:
        filesystem, path = storage.resolve(location)
        with contextlib.suppress(FileNotFoundError):
            filesystem.delete_file(path)
