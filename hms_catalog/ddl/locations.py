"""Locations a DDL names or leaves behind: checked before the metastore is asked, looked at after a drop."""

from __future__ import annotations

import pyarrow.fs as pafs

from hms_catalog.errors import ConfigurationError, StorageError
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["check_location", "remaining_files", "delete_remaining"]


def check_location(location: str, owner: str, storage: StorageResolver) -> None:
    """A location this process can reach (its filesystem opens, and its parent exists or it does), or a
    ConfigurationError naming the owner, the location and the reason; nothing is asked of the metastore."""
    try:
        storage.check_container(location)
        filesystem, path = storage.resolve(location)
        info = filesystem.get_file_info(path)
        if info.type == pafs.FileType.File:
            raise ConfigurationError(f"LOCATION '{location}' of {owner} is a file, not a folder")
    except ConfigurationError:
        raise
    except (OSError, ValueError, StorageError) as error:  # pyarrow's errors are OSErrors and ValueErrors
        raise ConfigurationError(f"LOCATION '{location}' of {owner} cannot be reached: {error}") from None


def remaining_files(location: str | None, storage: StorageResolver, limit: int = 5) -> list[str]:
    """Files still under ``location`` (at most ``limit``), for a drop that should have deleted them."""
    if not location:
        return []
    try:
        filesystem, path = storage.resolve(location)
        found = filesystem.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    except (OSError, ValueError, StorageError):
        return []
    return [entry.path for entry in found if entry.type == pafs.FileType.File][:limit]


def delete_remaining(location: str | None, storage: StorageResolver) -> list[str]:
    """Delete what a drop left under ``location`` with the catalog's own credentials (a metastore whose
    filesystem cannot reach the store, or lacks the rights, leaves the files behind); what still remains
    after (none when it worked) is returned, for the statement to name."""
    if not location or not remaining_files(location, storage, 1):
        return []
    try:
        filesystem, path = storage.resolve(location)
        filesystem.delete_dir(path)
    except FileNotFoundError:
        return []
    except (OSError, ValueError, StorageError):
        pass
    return remaining_files(location, storage)
