"""What a write's driver sends to commit (the files its committed tasks wrote, the mode, an overwrite's
static spec), what a commit answers, and the checks of the list against the job's staging folder that
every kind of commit makes first."""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field

from hms_catalog.errors import ConfigurationError
from hms_catalog.formats.partition_names import make_partition_name
from hms_catalog.storage.files import delete_files, files_under
from hms_catalog.storage.locations import is_hidden
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["WrittenFile", "CommitRequest", "WriteOutcome", "WrittenPartition", "drop_unlisted", "group_files", "MODES"]

MODES = ("append", "overwrite", "dynamic")


@dataclass(frozen=True)
class WrittenFile:
    """One file a committed task wrote: its path under the staging folder (``k=v/part-...``), its
    partition's values (None for NULL) and what the writer counted."""

    path: str
    values: tuple[str | None, ...] = ()
    bytes: int = 0
    rows: int = 0


@dataclass(frozen=True)
class CommitRequest:
    """``mode``: append; overwrite (Spark's overwrite by filter: the rows of the partitions ``static``
    names are deleted, every partition's when it is empty, then every written row is appended); dynamic
    (the partitions written are replaced)."""

    mode: str
    files: tuple[WrittenFile, ...] = ()
    static: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigurationError(f"write mode must be one of {', '.join(MODES)}, got '{self.mode}'")


@dataclass(frozen=True)
class WriteOutcome:
    message: str
    version: int
    files: int
    rows: int
    added: int = 0
    replaced: int = 0
    appended: int = 0
    dropped: int = 0


@dataclass
class WrittenPartition:
    """The files a write made for one partition, and their folder relative to the staging folder."""

    values: tuple[str | None, ...]
    folder: str
    files: list[WrittenFile] = field(default_factory=list)


def drop_unlisted(storage: StorageResolver, folder: str, request: CommitRequest) -> CommitRequest:
    """Delete the files of failed or speculative task attempts (what is under the staging folder but not
    listed); the request with each file's size as the folder has it."""
    listed = {posixpath.normpath(f.path): f for f in request.files}
    for relative in listed:
        if relative.startswith(("/", "..")) or is_hidden(relative):
            raise ConfigurationError(f"written file '{relative}' is not a visible file under the job's staging folder")
    present = files_under(storage, folder)
    delete_files(storage, (location for relative, (location, _) in present.items() if relative not in listed))
    missing = sorted(set(listed) - set(present))
    if missing:
        raise ConfigurationError(f"{len(missing)} written file(s) are not in the job's staging folder {folder} "
                                 f"(first: {missing[0]}): nothing was committed")
    files = tuple(dataclasses.replace(f, path=relative, bytes=present[relative][1]) for relative, f in listed.items())
    return dataclasses.replace(request, files=files)


def group_files(keys: Sequence[str], files: Sequence[WrittenFile]) -> dict[str, WrittenPartition]:
    """The written files by partition name (Hive's escaped ``k=v/k2=v2``)."""
    groups: dict[str, WrittenPartition] = {}
    for written in files:
        if len(written.values) != len(keys):
            raise ConfigurationError(f"written file '{written.path}' has {len(written.values)} partition value(s); "
                                     f"the table has {len(keys)} partition column(s)")
        name = make_partition_name(keys, list(written.values))
        group = groups.setdefault(name, WrittenPartition(written.values, posixpath.dirname(posixpath.normpath(written.path))))
        group.files.append(written)
    return groups
