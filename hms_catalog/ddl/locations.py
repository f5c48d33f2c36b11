"""Locations a DDL names or leaves behind: checked before the metastore is asked, looked at after a drop."""

from __future__ import annotations

import pyarrow.fs as pafs

from hms_catalog.errors import ConfigurationError
from hms_catalog.formats._paths import resolve

__all__ = ["check_location", "remaining_files"]


def check_location(location: str, owner: str) -> None:
    """A location this process can reach (its filesystem opens, and its parent exists or it does), or a
    ConfigurationError naming the owner, the location and the reason; nothing is asked of the metastore."""
    try:
        filesystem, path = resolve(location)
        info = filesystem.get_file_info(path)
        if info.type == pafs.FileType.File:
            raise ConfigurationError(f"LOCATION '{location}' of {owner} is a file, not a folder")
    except ConfigurationError:
        raise
    except (OSError, ValueError) as error:  # pyarrow's errors are OSErrors and ValueErrors
        raise ConfigurationError(f"LOCATION '{location}' of {owner} cannot be reached: {error}") from error


def remaining_files(location: str | None, limit: int = 5) -> list[str]:
    """Files still under ``location`` (at most ``limit``), for a drop that should have deleted them."""
    if not location:
        return []
    try:
        filesystem, path = resolve(location)
        found = filesystem.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    except (OSError, ValueError):
        return []
    return [entry.path for entry in found if entry.type == pafs.FileType.File][:limit]
