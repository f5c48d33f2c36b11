"""A pyarrow filesystem over the Hadoop helper, so every part that reads through ``pyarrow.fs`` (listing,
footers, pyarrow.parquet and pyarrow.dataset reads, DROP PURGE) reaches HDFS and other Hadoop filesystems
the way it reaches local disk.

Paths are absolute paths within one ``scheme://authority`` (``/wh/t/part-0.parquet``), the form pyarrow's own
HadoopFileSystem takes. Files are read in ranges through the helper, a few MiB per request, kept in one
buffer so pyarrow's small reads (a footer, page headers) cost no request each. Writes are not offered.

    fs = hadoop_filesystem(HadoopHelper(settings, name="hive"), "hdfs://ns1")
    pq.read_table("/wh/t/part-0.parquet", filesystem=fs)
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from hms_catalog.storage.hadoop.helper import HadoopFile, HadoopHelper

__all__ = ["hadoop_filesystem", "HadoopFileSystemHandler", "READ_BUFFER_DEFAULT"]

READ_BUFFER_DEFAULT = 4 << 20  # one request per 4 MiB read: a Parquet column chunk, or a whole small file
_READ_CHUNK = 32 << 20  # the most asked of the helper in one request (it answers at most 64 MiB)


def hadoop_filesystem(helper: HadoopHelper, root_uri: str, *, read_buffer: int = READ_BUFFER_DEFAULT) -> pafs.PyFileSystem:
    """A pyarrow filesystem for ``root_uri``'s scheme and authority (``hdfs://ns1``, ``viewfs://cluster``)."""
    return pafs.PyFileSystem(HadoopFileSystemHandler(helper, root_uri, read_buffer=read_buffer))


class HadoopFileSystemHandler(pafs.FileSystemHandler):
    """pyarrow's filesystem interface answered by the helper, for one ``scheme://authority``."""

    def __init__(self, helper: HadoopHelper, root_uri: str, *, read_buffer: int = READ_BUFFER_DEFAULT) -> None:
        scheme, _, rest = root_uri.partition("://")
        if not scheme or not _:
            raise ValueError(f"a Hadoop filesystem's root is scheme://authority, not {root_uri!r}")
        self.helper = helper
        self.root = f"{scheme.lower()}://{rest.split('/', 1)[0]}"
        self.read_buffer = read_buffer

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HadoopFileSystemHandler) and other.helper is self.helper and other.root == self.root

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((id(self.helper), self.root))

    def uri(self, path: str) -> str:
        """The full location of ``path`` (``/wh/t`` -> ``hdfs://ns1/wh/t``)."""
        return self.root + _absolute(path)

    def get_type_name(self) -> str:
        return "hadoop"

    def normalize_path(self, path: str) -> str:
        return _absolute(path)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        infos = []
        for path in paths:
            try:
                infos.append(_info(self.helper.stat(self.uri(path)), _absolute(path)))
            except FileNotFoundError:
                infos.append(pafs.FileInfo(path, pafs.FileType.NotFound))
        return infos

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        base = _absolute(selector.base_dir)
        try:
            entries = self.helper.list(self.uri(base), recursive=selector.recursive)
        except FileNotFoundError:
            if selector.allow_not_found:
                return []
            raise
        if len(entries) == 1 and not entries[0].is_dir and entries[0].path.rstrip("/") == base.rstrip("/"):
            raise NotADirectoryError(f"cannot list {self.uri(base)}: it is a file")
        return [_info(entry) for entry in entries]

    def create_dir(self, path: str, recursive: bool) -> None:
        if not recursive:
            parent = _absolute(path).rstrip("/").rsplit("/", 1)[0] or "/"
            if not self.helper.stat(self.uri(parent)).is_dir:
                raise NotADirectoryError(f"cannot create {self.uri(path)}: {parent} is a file")
        if not self.helper.mkdirs(self.uri(path)):
            raise OSError(f"cannot create the folder {self.uri(path)}")

    def delete_dir(self, path: str) -> None:
        if not self.helper.stat(self.uri(path)).is_dir:
            raise NotADirectoryError(f"cannot delete {self.uri(path)} as a folder: it is a file")
        self.helper.delete(self.uri(path), recursive=True)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        if _absolute(path).rstrip("/") == "":
            self.delete_root_dir_contents()
        try:
            entries = self.helper.list(self.uri(path))
        except FileNotFoundError:
            if missing_dir_ok:
                return
            raise
        for entry in entries:
            self.helper.delete(self.uri(entry.path), recursive=True)

    def delete_root_dir_contents(self) -> None:
        raise OSError(f"refusing to delete everything in {self.root}/")

    def delete_file(self, path: str) -> None:
        if self.helper.stat(self.uri(path)).is_dir:
            raise IsADirectoryError(f"cannot delete {self.uri(path)} as a file: it is a folder")
        self.helper.delete(self.uri(path))

    def move(self, src: str, dest: str) -> None:
        """pyarrow's move: an existing file at ``dest`` is replaced, an existing folder is an error."""
        try:
            existing = self.helper.stat(self.uri(dest))
        except FileNotFoundError:
            existing = None
        if existing is not None and existing.is_dir:
            raise FileExistsError(f"cannot move {self.uri(src)} to {self.uri(dest)}: the target is a folder")
        if existing is not None:
            self.helper.delete(self.uri(dest))
        if not self.helper.rename(self.uri(src), self.uri(dest)):
            raise OSError(f"Hadoop declined to rename {self.uri(src)} to {self.uri(dest)} (does the target's folder exist?)")

    def copy_file(self, src: str, dest: str) -> None:
        raise NotImplementedError(f"copying files on {self.root} through the Hadoop helper is not supported (read-only)")

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self.open_input_file(path)

    def open_input_file(self, path: str) -> pa.NativeFile:
        status = self.helper.stat(self.uri(path))
        if status.is_dir:
            raise IsADirectoryError(f"cannot open {self.uri(path)}: it is a folder")
        return pa.PythonFile(_RangeReader(self.helper, self.uri(path), status.size, self.read_buffer), mode="r")

    def open_output_stream(self, path: str, metadata: Any) -> pa.NativeFile:
        raise NotImplementedError(f"writing {self.uri(path)}: the Hadoop helper reads, lists and deletes;"
                                  " it does not write files")

    def open_append_stream(self, path: str, metadata: Any) -> pa.NativeFile:
        return self.open_output_stream(path, metadata)


class _RangeReader:
    """A seekable, read-only file object (what ``pa.PythonFile`` wraps) reading ranges through the helper.

    One buffer of ``buffer`` bytes from the last position read: a read inside it costs no request; a read
    larger than it goes straight to the helper."""

    def __init__(self, helper: HadoopHelper, uri: str, size: int, buffer: int) -> None:
        self._helper = helper
        self._uri = uri
        self._size = size
        self._buffer_size = max(buffer, 1)
        self._position = 0
        self._buffer = b""
        self._buffer_start = 0
        self.closed = False
        self.requests = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def size(self) -> int:
        return self._size

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._position, 2: self._size}[whence]
        if base + offset < 0:
            raise ValueError(f"cannot seek to {base + offset} in {self._uri}")
        self._position = base + offset
        return self._position

    def read(self, nbytes: int | None = -1) -> bytes:
        if self.closed:
            raise ValueError(f"read of {self._uri} after close")
        wanted = self._size - self._position if nbytes is None or nbytes < 0 else min(nbytes, self._size - self._position)
        if wanted <= 0:
            return b""
        start = self._position - self._buffer_start
        if start >= 0 and start + wanted <= len(self._buffer):
            data = self._buffer[start:start + wanted]
        elif wanted >= self._buffer_size:
            data = self._fetch(self._position, wanted)
        else:
            self._buffer = self._fetch(self._position, min(self._buffer_size, self._size - self._position))
            self._buffer_start = self._position
            data = self._buffer[:wanted]
        self._position += len(data)
        return data

    def close(self) -> None:
        self.closed = True
        self._buffer = b""

    def _fetch(self, offset: int, length: int) -> bytes:
        parts = []
        while length > 0:
            self.requests += 1
            part = self._helper.read(self._uri, offset, min(length, _READ_CHUNK))
            if not part:
                break
            parts.append(part)
            offset += len(part)
            length -= len(part)
        return b"".join(parts)


def _absolute(path: str) -> str:
    return path if path.startswith("/") else "/" + path


def _info(entry: HadoopFile, path: str | None = None) -> pafs.FileInfo:
    kind = pafs.FileType.Directory if entry.is_dir else pafs.FileType.File if entry.type == "file" else pafs.FileType.Unknown
    return pafs.FileInfo(path or entry.path, kind, mtime_ns=entry.mtime_ms * 1_000_000,
                         size=entry.size if kind == pafs.FileType.File else None)
