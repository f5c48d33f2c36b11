"""A file removed between the reader's check and its open is the stale-plan error naming it, for data
files and for Iceberg delete files alike (not a bare FileNotFoundError from inside Arrow)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from hms_catalog.storage.resolver import StorageResolver
from planner.plan import DeleteFile, Split
from planner.readers import FileChangedError, _common, iceberg_deletes
from planner.readers.iceberg_deletes import POSITION_DELETES


class VanishingFileSystem:
    """The local filesystem, where a file is removed right after it was found (a cleaner in between)."""

    def __init__(self) -> None:
        self._local = pafs.LocalFileSystem()

    def get_file_info(self, path: str) -> pafs.FileInfo:
        info = self._local.get_file_info(path)
        Path(path).unlink()
        return info

    def open_input_file(self, path: str) -> pa.NativeFile:
        return self._local.open_input_file(path)


class VanishingStorage(StorageResolver):
    """A catalog's storage whose every location is ``path`` on a :class:`VanishingFileSystem`."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def resolve(self, location: str) -> tuple[pafs.FileSystem, str]:
        return VanishingFileSystem(), str(self.path)


@pytest.fixture
def parquet_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.parquet"
    pq.write_table(pa.table({"file_path": ["x"], "pos": pa.array([0], pa.int64())}), path)
    return path


def test_a_data_file_that_vanishes_before_its_open(parquet_file: Path) -> None:
    size = parquet_file.stat().st_size
    split = Split(f"file://{parquet_file}", 0, size, size, 0, (), (), "parquet")
    with pytest.raises(FileChangedError, match=f"file://{parquet_file} no longer exists; the plan is stale") as raised:
        _common.open_split_file(split, VanishingStorage(parquet_file))
    assert isinstance(raised.value.__cause__, FileNotFoundError)


def test_a_delete_file_that_vanishes_before_its_open(parquet_file: Path) -> None:
    delete = DeleteFile(f"file://{parquet_file}", POSITION_DELETES, "parquet", parquet_file.stat().st_size)
    with pytest.raises(FileChangedError, match=f"delete file file://{parquet_file} is gone or changed since planning"):
        iceberg_deletes._open(delete, VanishingStorage(parquet_file))
