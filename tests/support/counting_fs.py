"""A local filesystem that counts what is listed and opened, to show what detection touches."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.fs as pafs

__all__ = ["CountingHandler"]


class CountingHandler(pafs.FileSystemHandler):
    """The local filesystem, counting files opened and listings made (pyarrow's own handler interface)."""

    def __init__(self) -> None:
        self.local = pafs.LocalFileSystem()
        self.opened: list[str] = []
        self.listings = 0

    def get_type_name(self) -> str:
        return "counting"

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        self.listings += 1
        return self.local.get_file_info(selector)

    def open_input_file(self, path: str) -> pa.NativeFile:
        self.opened.append(path)
        return self.local.open_input_file(path)

    def open_input_stream(self, path: str) -> pa.NativeFile:
        self.opened.append(path)
        return self.local.open_input_stream(path)

    def _refused(self, *args: object) -> None:
        raise NotImplementedError("detection only reads")

    create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = delete_file = _refused
    move = copy_file = open_output_stream = open_append_stream = _refused

    def normalize_path(self, path: str) -> str:
        return path
