"""Locations a DDL names or leaves behind: resolved and checked before the metastore is asked, looked at after a drop.

A relative LOCATION (no scheme, no leading ``/``) is resolved as Spark resolves it, never handed to the
metastore as written (which stores it as given, or fails on it): a table's under its database's location, a
partition's under its table's, a database's under the warehouse (the ``default`` database's location). An empty
LOCATION ``''`` is refused, as Spark refuses it: resolved as a relative one it would be the parent's own folder, which
a later DROP of the table or partition would delete.
"""

from __future__ import annotations

from hms_catalog.errors import ConfigurationError, StorageError
from hms_catalog.storage import files
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["check_location", "is_relative", "resolved_location", "remaining_files", "delete_remaining"]


def is_relative(location: str) -> bool:
    """No scheme (``s3a://``, ``file:``) and no leading ``/``: a path Spark resolves against a parent's location."""
    return not ("://" in location or location.startswith("/") or ":" in location.split("/", 1)[0])


def _refuse_empty(location: str, owner: str) -> None:
    if not location:
        raise ConfigurationError(f"LOCATION of {owner} is empty (''): a location names a folder; Spark refuses an empty one too")


def resolved_location(location: str, parent: str | None, owner: str, against: str) -> str:
    """``location`` as Spark resolves it: a relative one lies under ``parent`` (the location of ``against``, which
    the error names when it has none); any other is as given."""
    _refuse_empty(location, owner)
    if not is_relative(location):
        return location
    if not parent:
        raise ConfigurationError(f"LOCATION '{location}' of {owner} is relative, and {against} has no location to resolve it against")
    return f"{parent.rstrip('/')}/{location.removeprefix('./')}"


def check_location(location: str, owner: str, storage: StorageResolver) -> None:
    """A location this process can reach (its filesystem opens, and its parent exists or it does), or a
    ConfigurationError naming the owner, the location and the reason; nothing is asked of the metastore."""
    _refuse_empty(location, owner)
    try:
        storage.check_container(location)
        if files.is_file(storage, location):
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
        return files.file_paths(storage, location)[:limit]
    except (OSError, ValueError, StorageError):
        return []


def delete_remaining(location: str | None, storage: StorageResolver) -> list[str]:
    """Delete what a drop left under ``location`` with the catalog's own credentials (a metastore whose
    filesystem cannot reach the store, or lacks the rights, leaves the files behind); what still remains
    after (none when it worked) is returned, for the statement to name."""
    if not location or not remaining_files(location, storage, 1):
        return []
    try:
        files.delete_folder(storage, location)
    except FileNotFoundError:
        return []
    except (OSError, ValueError, StorageError):
        pass
    return remaining_files(location, storage)
