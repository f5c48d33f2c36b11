"""A pyiceberg FileIO that keeps a table's manifest lists and manifests, as bytes, in the catalog's
``iceberg_manifests`` cache.

Why: planning a scan reads the snapshot's manifest list and every manifest its partition summaries keep. On an
object store that is a request per file at every plan, and a plan with a new filter (or a new snapshot that
shares most manifests with the last) reads them all again. Iceberg never rewrites these files (a commit writes
new ones under new names), so their bytes are kept by location, never go stale, and need no invalidation; the
memory budget weighs and evicts them like any entry. Only Avro files under a ``metadata`` folder are kept:
metadata JSON has a cache of its own (parsed), and data files, deletes and writes go to the wrapped IO as they are.
"""

from __future__ import annotations

import io as _io
from collections.abc import Callable
from typing import Any

from pyiceberg.io import FileIO, InputFile, InputStream, OutputFile

from hms_catalog.cache.metadata_cache import MetadataCache

__all__ = ["ManifestCachingIO", "is_manifest_file"]


def is_manifest_file(location: str) -> bool:
    """A manifest list or manifest as Iceberg writes them: Avro under the table's ``metadata`` folder."""
    return location.endswith(".avro") and "/metadata/" in location


class _CachedInput(InputFile):
    """A manifest read whole, once per location, when it is first opened or measured (as pyiceberg's inputs do,
    a missing file raises FileNotFoundError there, not when the input is made)."""

    def __init__(self, location: str, content: Callable[[], bytes], exists: Callable[[], bool]) -> None:
        super().__init__(location)
        self._content = content
        self._exists = exists

    def __len__(self) -> int:
        return len(self._content())

    def exists(self) -> bool:
        return self._exists()

    def open(self, seekable: bool = True) -> InputStream:
        return _io.BytesIO(self._content())


class ManifestCachingIO(FileIO):
    """``io`` with its manifest reads served from ``cache`` (loaded once per location, whoever asks)."""

    def __init__(self, io: FileIO, cache: MetadataCache[str, bytes]) -> None:
        super().__init__(properties=io.properties)
        self._io = io
        self._cache = cache

    def new_input(self, location: str) -> InputFile:
        if not is_manifest_file(location) or not self._cache.enabled:
            return self._io.new_input(location)
        return _CachedInput(location, lambda: self._cache.get(location, lambda: self._read(location)),
                            lambda: self._cache.peek(location) is not None or self._io.new_input(location).exists())

    def _read(self, location: str) -> bytes:
        with self._io.new_input(location).open(seekable=False) as stream:
            return stream.read()

    def new_output(self, location: str) -> OutputFile:
        return self._io.new_output(location)

    def delete(self, location: str | InputFile | OutputFile) -> None:
        self._io.delete(location)

    def __getattr__(self, name: str) -> Any:  # what else the wrapped IO offers (pyarrow's filesystem, ...)
        if name.startswith("_"):  # never the wrapper's own fields (a copy or an unpickling asks before they are set)
            raise AttributeError(name)
        return getattr(self._io, name)
