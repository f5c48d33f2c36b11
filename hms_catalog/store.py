"""Persistent catalog definitions: one JSON document under the home directory.

Every change is a read-modify-write under an exclusive ``flock`` on a lock file beside the document,
so two processes creating or altering catalogs at once cannot lose each other's update, and the new
document replaces the old with ``os.replace`` after an fsync, so a crash leaves either the old or the
new document, never half of one. The home is private to its owner (0700) and so is every file in it
(0600), whatever the umask: properties may hold secrets.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from hms_catalog._private import private_directory, private_file
from hms_catalog.errors import (
    AlreadyExistsError,
    ConfigurationError,
    HmsCatalogError,
    NotFoundError,
    VersionMismatchError,
)

__all__ = ["CatalogDefinition", "CatalogStore", "DefinitionStore", "default_home", "expect_version", "HOME_ENV"]

HOME_ENV = "HMS_CATALOG_HOME"
_DOCUMENT = "catalogs.json"
_LOCK = "catalogs.lock"
_TEMPORARY_PREFIX = ".catalogs-"
_TEMPORARY_SUFFIX = ".tmp"
_FORMAT_VERSION = 1


def default_home() -> Path:
    """``$HMS_CATALOG_HOME`` when set, else ``~/.hms-catalog``."""
    env = os.environ.get(HOME_ENV)
    return Path(env).expanduser() if env else Path.home() / ".hms-catalog"


@dataclass(frozen=True)
class CatalogDefinition:
    """A catalog as stored: what CREATE CATALOG said, plus identity and change tracking."""

    name: str
    properties: Mapping[str, str]
    comment: str = ""
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    version: int = 1
    created_at: float = field(default_factory=time.time)
    updated_at: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "properties", MappingProxyType(dict(self.properties)))
        if not self.updated_at:
            object.__setattr__(self, "updated_at", self.created_at)

    @property
    def type(self) -> str:
        return self.properties.get("type", "")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "comment": self.comment,
            "properties": dict(self.properties),
            "version": self.version,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CatalogDefinition:
        return cls(
            name=str(data["name"]),
            properties={str(k): str(v) for k, v in dict(data["properties"]).items()},
            comment=str(data.get("comment", "")),
            id=str(data["id"]),
            version=int(data["version"]),
            created_at=float(data["created_at"]),
            updated_at=float(data["updated_at"]),
        )


class DefinitionStore(Protocol):
    """Where catalog definitions are kept: this JSON document, or the SQL catalog store."""

    home: Path

    def list(self) -> list[CatalogDefinition]: ...

    def get(self, name: str) -> CatalogDefinition: ...

    def find(self, name: str) -> CatalogDefinition | None: ...

    def create(self, definition: CatalogDefinition, *, if_not_exists: bool = False) -> CatalogDefinition | None: ...

    def update(self, name: str, change: Callable[[CatalogDefinition], CatalogDefinition], *,
               expected_version: int | None = None) -> CatalogDefinition: ...

    def rename(self, name: str, new_name: str, *, expected_version: int | None = None) -> CatalogDefinition: ...

    def drop(self, name: str, *, if_exists: bool = False, expected_version: int | None = None) -> CatalogDefinition | None: ...


class CatalogStore:
    """Catalog definitions under ``home``; names are case-insensitive and stored lower-case."""

    def __init__(self, home: str | os.PathLike[str]) -> None:
        self.home = Path(home).expanduser()
        self.path = self.home / _DOCUMENT
        self._parsed: tuple[tuple[int, int, int], dict[str, CatalogDefinition]] | None = None

    def list(self) -> list[CatalogDefinition]:
        """All definitions, sorted by name."""
        return sorted(self._read().values(), key=lambda d: d.name)

    def get(self, name: str) -> CatalogDefinition:
        found = self._read().get(name.lower())
        if found is None:
            raise NotFoundError("catalog", name.lower())
        return found

    def find(self, name: str) -> CatalogDefinition | None:
        return self._read().get(name.lower())

    def create(self, definition: CatalogDefinition, *, if_not_exists: bool = False) -> CatalogDefinition | None:
        """Store a new catalog; returns it, or None when it existed and ``if_not_exists`` was given."""
        name = definition.name.lower()
        with self._transaction() as catalogs:
            if name in catalogs:
                if if_not_exists:
                    return None
                raise AlreadyExistsError("catalog", name)
            stored = replace(definition, name=name)
            catalogs[name] = stored
            return stored

    def update(
        self, name: str, change: Callable[[CatalogDefinition], CatalogDefinition], *, expected_version: int | None = None
    ) -> CatalogDefinition:
        """Apply ``change`` to the stored definition and bump its version, all under the lock.

        ``expected_version``: compare-and-set; VersionMismatchError unless the stored version is that one.
        """
        key = name.lower()
        with self._transaction() as catalogs:
            current = expect_version(catalogs.get(key), key, expected_version)
            changed = change(current)
            stored = replace(
                changed, name=key, id=current.id, version=current.version + 1,
                created_at=current.created_at, updated_at=time.time(),
            )
            catalogs[key] = stored
            return stored

    def rename(self, name: str, new_name: str, *, expected_version: int | None = None) -> CatalogDefinition:
        old, new = name.lower(), new_name.lower()
        with self._transaction() as catalogs:
            current = expect_version(catalogs.get(old), old, expected_version)
            if new in catalogs:
                raise AlreadyExistsError("catalog", new)
            stored = replace(current, name=new, version=current.version + 1, updated_at=time.time())
            del catalogs[old]
            catalogs[new] = stored
            return stored

    def drop(self, name: str, *, if_exists: bool = False, expected_version: int | None = None) -> CatalogDefinition | None:
        key = name.lower()
        with self._transaction() as catalogs:
            if expected_version is not None:
                expect_version(catalogs.get(key), key, expected_version)
            current = catalogs.pop(key, None)
            if current is None and not if_exists:
                raise NotFoundError("catalog", key)
            return current

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[dict[str, CatalogDefinition]]:
        """Yield the catalogs for change; write them back only if the block finishes without error."""
        private_directory(self.home, tighten_existing=self.path.exists() or (self.home / _LOCK).exists())
        with os.fdopen(private_file(self.home / _LOCK), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._remove_dead_writers_files()
                catalogs = self._read()
                yield catalogs
                self._write(catalogs)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _read(self) -> dict[str, CatalogDefinition]:
        """The stored catalogs (a fresh dict: callers may change it).

        Every lookup reads the store, since another process may have changed it; the parsed document is
        kept while the file's identity, size and modification time stay the same (a write replaces the
        file), so a lookup that finds nothing new costs one ``stat``.
        """
        try:
            status = os.stat(self.path)
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise HmsCatalogError(f"cannot read the catalog store {self.path}: {error}") from error
        key = (status.st_ino, status.st_size, status.st_mtime_ns)
        cached = self._parsed
        if cached is not None and cached[0] == key:
            return dict(cached[1])
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise HmsCatalogError(f"cannot read the catalog store {self.path}: {error}") from error
        try:
            document = json.loads(text)
            catalogs = {entry["name"]: CatalogDefinition.from_json(entry) for entry in document["catalogs"]}
        except (ValueError, KeyError, TypeError) as error:
            raise ConfigurationError(f"the catalog store {self.path} is not valid: {error}") from error
        self._parsed = (key, catalogs)
        return dict(catalogs)

    def _write(self, catalogs: Mapping[str, CatalogDefinition]) -> None:
        document = {
            "format": _FORMAT_VERSION,
            "catalogs": [catalogs[name].to_json() for name in sorted(catalogs)],
        }
        descriptor, temporary = tempfile.mkstemp(prefix=_TEMPORARY_PREFIX, suffix=_TEMPORARY_SUFFIX, dir=self.home)
        try:
            os.fchmod(descriptor, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(document, handle, indent=2, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        _fsync_directory(self.home)

    def _remove_dead_writers_files(self) -> None:
        """Delete temporary documents left by writers killed before their rename (called under the lock)."""
        for leftover in self.home.glob(f"{_TEMPORARY_PREFIX}*{_TEMPORARY_SUFFIX}"):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def expect_version(current: CatalogDefinition | None, name: str, expected_version: int | None) -> CatalogDefinition:
    """``current``, checked to exist and (when asked) to be at ``expected_version``."""
    if current is None:
        raise NotFoundError("catalog", name)
    if expected_version is not None and current.version != expected_version:
        raise VersionMismatchError(
            f"catalog '{name}' is at version {current.version}, not {expected_version}: it changed since it was read"
        )
    return current


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable: until the directory is synced, a power loss may bring the old document back."""
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
