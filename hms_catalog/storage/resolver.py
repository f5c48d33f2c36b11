"""The one place a location becomes a filesystem: a catalog's storage settings applied to its scheme.

Every part that touches files (planning, detection, filesystem catalogs and promotion, Iceberg and Hudi
reads, writes' staging and commits, RECOVER and MSCK, DROP PURGE) asks its catalog's resolver, so a
catalog on MinIO and one on HDFS can live in one process, each reaching its own store. Filesystems are
built once per (scheme, authority) and kept for the resolver's life; a catalog whose properties change is
rebuilt with a new resolver, so nothing stale survives an ALTER CATALOG.

Locations are Hadoop paths, never percent-decoded (see :mod:`hms_catalog.storage.locations`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import fields, is_dataclass, replace
from datetime import UTC
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pyarrow.fs as pafs

from hms_catalog.errors import ConfigurationError, StorageError, StorageUnavailableError
from hms_catalog.storage.locations import normalize_location
from hms_catalog.storage.properties import S3_COMPATIBLE_SCHEMES, S3_SCHEMES, S3Settings, StorageConfig
from hms_catalog.storage.timeouts import is_timeout, is_unreachable, s3_attempts

if TYPE_CHECKING:
    from hms_catalog.storage.hadoop.helper import HadoopHelper
    from hms_catalog.storage.vending import CredentialVendor

__all__ = ["StorageResolver", "split_location", "LOCAL_SCHEMES", "AZURE_SCHEMES"]

LOCAL_SCHEMES = ("", "file")
AZURE_SCHEMES = ("abfs", "abfss", "wasb", "wasbs")
_GCS_SCHEMES = ("gs", "gcs")
_GCS_S3_HOST = "storage.googleapis.com"  # gs:// with HMAC keys: GCS's S3-compatible API
_S3_OPERATION = re.compile(r"during (\w+) operation")


def split_location(location: str) -> tuple[str, str, str]:
    """(scheme, authority, path) of a location; a plain path or ``file:`` location has the scheme ``file``
    and no authority. The path keeps its percent signs as written."""
    normalized = normalize_location(location)
    if "://" not in normalized:
        return "file", "", normalized
    scheme, rest = normalized.split("://", 1)
    authority, _, path = rest.partition("/")
    return scheme.lower(), authority, "/" + path


class StorageResolver:
    """Filesystems for a catalog's locations, built from its storage settings and kept per store.

    ``name``: the catalog's, for error messages. ``hadoop``: makes the Java helper that serves HDFS and
    other Hadoop filesystems (passed in so tests and services share one; built on first need otherwise).
    """

    def __init__(self, config: StorageConfig | None = None, *, name: str = "",
                 hadoop: HadoopHelper | None = None) -> None:
        self.config = config if config is not None else StorageConfig()
        self.name = name
        self._hadoop = hadoop
        self._filesystems: dict[tuple[str, str], pafs.FileSystem] = {}
        self._lock = threading.Lock()
        self._local = pafs.LocalFileSystem()
        self._buckets: set[str] = set()
        self._hadoop_lock = threading.Lock()  # apart: the helper is made while _lock is held (building a filesystem)
        self._vendor: CredentialVendor | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Only the settings and the name travel (to Spark's Python workers, say): filesystems, the lock
        and the Java helper belong to one process and are built again on the other side when first needed."""
        return {"config": _portable(self.config), "name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(_sealed(state["config"]), name=state["name"])  # type: ignore[misc]

    @classmethod
    def from_properties(cls, properties: Mapping[str, str], *, name: str = "") -> StorageResolver:
        return cls(StorageConfig.from_properties(properties), name=name)

    def resolve(self, location: str) -> tuple[pafs.FileSystem, str]:
        """The filesystem of ``location`` and the path to give it (``bucket/key`` for object stores,
        ``/path`` for local and Hadoop filesystems)."""
        scheme, authority, path = split_location(location)
        if scheme in LOCAL_SCHEMES:
            return self._local, path
        filesystem = self.filesystem(scheme, authority, location)
        kind = self._kind(scheme)
        if kind == "hadoop":
            return filesystem, path
        bucket = authority.split("@", 1)[0] if kind == "azure" else authority  # container@account -> container
        return filesystem, f"{bucket}{path}".rstrip("/") or bucket

    def filesystem(self, scheme: str, authority: str, location: str = "") -> pafs.FileSystem:
        """The (cached) filesystem serving ``scheme://authority``."""
        kind = self._kind(scheme)
        # every S3 scheme of one store shares a filesystem (s3, s3a, s3n); others are one per authority
        key = ("s3", S3_COMPATIBLE_SCHEMES.get(scheme, "s3")) if kind == "s3" else (scheme, authority)
        with self._lock:
            found = self._filesystems.get(key)
            if found is None:
                found = self._build(scheme, authority, location or f"{scheme}://{authority}/")
                self._filesystems[key] = found
            return found

    def hadoop_helper(self) -> HadoopHelper:
        """The Java helper serving Hadoop filesystems for this catalog (started on first use)."""
        with self._hadoop_lock:  # listing threads ask at once: one helper, one JVM
            if self._hadoop is None:
                from hms_catalog.storage.hadoop.helper import HadoopHelper

                self._hadoop = HadoopHelper(dict(self.config.hadoop.conf), name=self.name)
            return self._hadoop

    def vendor(self) -> CredentialVendor:
        """The catalog's vending of storage credentials to clients (made on first use, kept with its sessions
        for the resolver's life: a catalog whose properties change gets a new resolver, and a new vendor)."""
        with self._lock:
            if self._vendor is None:
                from hms_catalog.storage.vending import CredentialVendor

                self._vendor = CredentialVendor(self.config, name=self.name)
            return self._vendor

    def is_hadoop(self, location: str) -> bool:
        """Whether ``location`` is served by Hadoop's own client (the Java helper), which knows block hosts."""
        scheme = split_location(location)[0]
        return scheme not in LOCAL_SCHEMES and self._kind(scheme) == "hadoop"

    def is_object_store(self, location: str) -> bool:
        """Whether ``location`` is on an object store (S3 and compatible, GCS, Azure), where a listing is a
        request per page of keys under a prefix, and one prefix holds the keys of every folder below it."""
        scheme = split_location(location)[0]
        return scheme not in LOCAL_SCHEMES and self._kind(scheme) != "hadoop"

    def check_container(self, location: str) -> None:
        """On an object store, a StorageError naming the catalog and ``location`` when its bucket (or
        container) does not exist: there a missing bucket lists as an empty folder, which would pass for a
        table with no files. Buckets found are remembered for the resolver's life."""
        if not self.is_object_store(location):
            return
        scheme, authority, _ = split_location(location)
        bucket = authority.split("@", 1)[0]
        with self._lock:
            if bucket in self._buckets:
                return
        try:
            found = self.filesystem(scheme, authority, location).get_file_info(bucket).type != pafs.FileType.NotFound
        except (OSError, ValueError) as error:
            raise self.error(location, error) from None
        if not found:
            raise StorageError(f"{self._named()}cannot reach {location}: bucket '{bucket}' does not exist")
        with self._lock:
            self._buckets.add(bucket)

    def s3_settings(self, location: str) -> S3Settings | None:
        """The settings of the S3 (or S3-compatible) store serving ``location``, or None for a location this
        resolver reaches otherwise (local disk, GCS, Azure, Hadoop): what another engine reading the location
        is given for its timeouts."""
        scheme = split_location(location)[0]
        if scheme in LOCAL_SCHEMES or self._kind(scheme) != "s3":
            return None
        return self.config.s3_for(scheme)

    def answers(self, location: str, *, named: str = "", doing: str = "reach") -> None:
        """Ask the store for ``location`` (one HEAD request; a missing file is an answer too). A store that does
        not answer within its request timeout, or refuses, raises the catalog's StorageError naming ``named``
        (``location`` by default) and what was being done: how a call into another engine that cannot be held
        to the timeout is watched (:mod:`hms_catalog.storage.bounded`)."""
        filesystem, path = self.resolve(location)
        try:
            filesystem.get_file_info(path)
        except (OSError, ValueError) as error:
            raise self.error(named or location, error, doing) from None

    def close(self) -> None:
        with self._lock:
            self._filesystems.clear()
        if self._hadoop is not None:
            self._hadoop.close()

    def error(self, location: str, error: BaseException, doing: str = "reach") -> StorageError:
        """A StorageError naming the catalog and the location, with the first line of the store's own message
        (which carries no credential); callers raise it ``from None``, so no deeper trace repeats it.

        A request to an S3 store that timed out says so in the catalog's terms instead: which endpoint, which
        request, and the timeout it was given (the engine's own text names a per-attempt share of it). A store that
        could not be reached is a StorageUnavailableError."""
        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        scheme = split_location(location)[0]
        # A store that could not be reached is worth a retry later (503); one that answered and refused is not (502).
        kind = StorageUnavailableError if is_unreachable(text) else StorageError
        if is_timeout(text) and scheme not in LOCAL_SCHEMES and self._kind(scheme) == "s3":
            text = _timed_out(self.config.s3_for(scheme), scheme, text)
        return kind(f"{self._named()}cannot {doing} {location}: {text}")

    def _named(self) -> str:
        return f"catalog '{self.name}': " if self.name else ""

    def _kind(self, scheme: str) -> str:
        if scheme in S3_SCHEMES or (scheme in S3_COMPATIBLE_SCHEMES and self._s3_compatible(scheme)):
            return "s3"
        if scheme in _GCS_SCHEMES:
            return "gcs"
        if scheme in AZURE_SCHEMES:
            return "azure"
        return "hadoop"

    def _s3_compatible(self, scheme: str) -> bool:
        """``gs://`` is S3-compatible only when HMAC keys are given (``gs.access_key``); the other
        compatible schemes always are."""
        if scheme != "gs":
            return True
        settings = self.config.s3_compatible.get("gs")
        return settings is not None and settings.has_credentials

    def _build(self, scheme: str, authority: str, location: str) -> pafs.FileSystem:
        kind = self._kind(scheme)
        try:
            if kind == "s3":
                return _s3_filesystem(self.config.s3_for(scheme), scheme)
            if kind == "gcs":
                return _gcs_filesystem(self.config.gcs)
            if kind == "azure":
                return _azure_filesystem(self.config.azure, authority, location, self.name)
        except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
            raise self.error(location, error, "open a filesystem for") from None
        from hms_catalog.storage.hadoop.filesystem import hadoop_filesystem

        return hadoop_filesystem(self.hadoop_helper(), f"{scheme}://{authority}")


def _portable(value: Any) -> Any:
    """``value`` with its read-only mappings (which pickle cannot carry) as dicts, through nested settings."""
    if isinstance(value, Mapping):
        return {key: _portable(item) for key, item in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: _portable(getattr(value, f.name)) for f in fields(value) if f.init})
    return value


def _sealed(value: Any) -> Any:
    """The inverse of :func:`_portable`: mappings read-only again, as the settings are made."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: _sealed(item) for key, item in value.items()})
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: _sealed(getattr(value, f.name)) for f in fields(value) if f.init})
    return value


def _timed_out(settings: S3Settings, scheme: str, text: str) -> str:
    """What a request that timed out was, and which timeout it was given, for the catalog's error."""
    found = _S3_OPERATION.search(text)
    request = f"a {found.group(1)} request" if found else "a request"
    endpoint = settings.endpoint or (_GCS_S3_HOST if scheme == "gs" else None)
    store = f"the store at {endpoint}" if endpoint else f"S3 (region {settings.region or 'us-east-1'})"
    if "Connection timed out" in text or "Connection time-out" in text:
        what = f"{store} did not complete a connection (TCP and TLS) for {request}"
    else:
        what = f"{store} did not answer {request}"
    attempts = s3_attempts(settings.request_timeout, settings.connect_timeout).attempts
    tries = "one attempt" if attempts == 1 else f"{attempts} attempts"
    return f"{what} within {settings.request_timeout:g} s, the request timeout ('{settings.request_timeout_key}', {tries})"


def _s3_filesystem(settings: S3Settings, scheme: str) -> pafs.FileSystem:
    # The request timeout is the whole wait for a request, retries included (see storage/timeouts.py).
    attempts = s3_attempts(settings.request_timeout, settings.connect_timeout)
    options: dict[str, Any] = {
        "connect_timeout": attempts.connect_timeout,
        "request_timeout": attempts.silence,
        "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=attempts.attempts),
    }
    if settings.has_credentials:
        options.update(access_key=settings.access_key, secret_key=settings.secret_key,
                       session_token=settings.session_token)
    host = settings.endpoint_host
    if scheme == "gs" and host is None:
        host = _GCS_S3_HOST
    if host is not None:
        options.update(endpoint_override=host, scheme=settings.scheme,
                       force_virtual_addressing=not settings.path_style)
        options["region"] = settings.region or "us-east-1"  # a custom endpoint: never ask AWS for the region
    elif settings.region:
        options["region"] = settings.region
    else:
        options["region"] = "us-east-1"  # no network lookup of a bucket's region; AWS redirects otherwise
    return pafs.S3FileSystem(**options)


def _gcs_filesystem(settings: Any) -> pafs.FileSystem:
    options: dict[str, Any] = {"anonymous": settings.anonymous}
    if settings.access_token:
        from datetime import datetime, timedelta

        options.update(access_token=settings.access_token,
                       credential_token_expiration=datetime.now(UTC) + timedelta(hours=1))
    if settings.endpoint:
        endpoint = settings.endpoint
        options["scheme"] = endpoint.split("://", 1)[0] if "://" in endpoint else "https"
        options["endpoint_override"] = endpoint.split("://", 1)[-1].rstrip("/")
    if settings.project_id:
        options["project_id"] = settings.project_id
    return pafs.GcsFileSystem(**options)


def _azure_filesystem(settings: Any, authority: str, location: str, catalog: str) -> pafs.FileSystem:
    account = settings.account_name or (authority.split("@", 1)[1].split(".", 1)[0] if "@" in authority else None)
    if not account:
        raise ConfigurationError(
            f"catalog '{catalog}': {location} names no storage account (container@account.dfs.core.windows.net);"
            " set 'adls.account-name'"
        )
    options: dict[str, Any] = {"account_name": account}
    key = settings.key_of(account)
    if key:
        options["account_key"] = key
    elif settings.sas_token:
        options["sas_token"] = settings.sas_token
    elif settings.client_secret:
        options.update(tenant_id=settings.tenant_id, client_id=settings.client_id, client_secret=settings.client_secret)
    if settings.endpoint:
        endpoint = settings.endpoint
        scheme = endpoint.split("://", 1)[0] if "://" in endpoint else "https"
        host = endpoint.split("://", 1)[-1].rstrip("/")
        options.update(blob_storage_authority=host, dfs_storage_authority=host,
                       blob_storage_scheme=scheme, dfs_storage_scheme=scheme)
    return pafs.AzureFileSystem(**options)
