"""Properties of a filesystem catalog: where its root is and whether folders become tables on first use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hms_catalog._property_values import property_as_bool, property_as_int
from hms_catalog.errors import ConfigurationError, StorageError

if TYPE_CHECKING:
    from hms_catalog.storage.resolver import StorageResolver

__all__ = ["CATALOG_TYPE", "ROOT", "AUTO_PROMOTE", "SAMPLE_FILES", "SAMPLE_FILES_DEFAULT", "FilesystemConfig"]

CATALOG_TYPE = "filesystem"
ROOT = "root"
AUTO_PROMOTE = "auto_promote"
SAMPLE_FILES = "format.sample.files"
SAMPLE_FILES_DEFAULT = 8


@dataclass(frozen=True)
class FilesystemConfig:
    """``root``: any URI pyarrow.fs opens (``file:///data/lake``, ``s3://bucket/lake``, ``hdfs://nn/lake``).

    ``auto_promote``: a table's format is detected and kept on its first use (else only tables promoted
    with ``ALTER TABLE ... PROMOTE`` are served). ``sample_files``: how many files detection opens.
    """

    root: str
    auto_promote: bool = True
    sample_files: int = SAMPLE_FILES_DEFAULT

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> FilesystemConfig:
        root = (props.get(ROOT) or "").strip()
        if not root:
            raise ConfigurationError(f"property '{ROOT}' is required for a filesystem catalog, e.g. 'file:///data/lake'")
        if "://" not in root and not root.startswith("/"):
            raise ConfigurationError(f"property '{ROOT}' must be a URI or an absolute path, got '{root}'")
        return cls(
            root=root.rstrip("/") or "/",
            auto_promote=property_as_bool(props, AUTO_PROMOTE, True),
            sample_files=property_as_int(props, SAMPLE_FILES, SAMPLE_FILES_DEFAULT, minimum=1),
        )

    def check_root(self, storage: StorageResolver) -> None:
        """The root must be a folder that can be listed (checked at CREATE and ALTER)."""
        import pyarrow.fs as pafs

        try:
            filesystem, path = storage.resolve(self.root)
            info = filesystem.get_file_info(path)
        except (OSError, ValueError, StorageError) as error:
            raise ConfigurationError(f"property '{ROOT}': cannot open {self.root}: {error}") from None
        if info.type == pafs.FileType.NotFound:
            raise ConfigurationError(f"property '{ROOT}': {self.root} does not exist")
        if info.type != pafs.FileType.Directory:
            raise ConfigurationError(f"property '{ROOT}': {self.root} is not a folder")
