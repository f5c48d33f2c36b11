"""Locations as the metastore records them, made usable by Arrow, pyiceberg and hudi-rs.

Metastore locations are Hadoop paths, not URL-encoded URIs: a partition value ``a/b`` lives in a
directory literally named ``label=a%2Fb``. So a location is never percent-decoded on its way to a
filesystem; :func:`resolve` is the one place that turns a location into (filesystem, path).
"""

from __future__ import annotations

import pyarrow.fs as pafs

__all__ = ["normalize_location", "resolve", "join_location", "is_hidden"]


def normalize_location(location: str) -> str:
    """``file:/x`` (Hadoop's spelling) -> ``file:///x``; other schemes and plain paths unchanged."""
    if location.startswith("file:/") and not location.startswith("file://"):
        return "file:///" + location[len("file:/"):].lstrip("/")
    if location.startswith("file://") and not location.startswith("file:///"):
        return "file:///" + location[len("file://"):].lstrip("/")
    return location


def resolve(location: str) -> tuple[pafs.FileSystem, str]:
    """The filesystem and path of a location, with no percent-decoding of the path."""
    normalized = normalize_location(location)
    if normalized.startswith("file://"):
        return pafs.LocalFileSystem(), normalized[len("file://"):]
    if "://" not in normalized:
        return pafs.LocalFileSystem(), normalized
    # from_uri decodes %XX: protect literal percent signs and spaces so they reach the filesystem as written.
    filesystem, path = pafs.FileSystem.from_uri(normalized.replace("%", "%25").replace(" ", "%20"))
    return filesystem, path


def join_location(location: str, path: str) -> str:
    """The location of ``path`` (as a filesystem returned it for :func:`resolve` of ``location``)."""
    normalized = normalize_location(location)
    if normalized.startswith("file://") or "://" not in normalized:
        return "file://" + path
    scheme, rest = normalized.split("://", 1)
    authority = rest.split("/", 1)[0]
    if path.startswith(authority + "/") or path == authority:  # object stores: bucket/key
        return f"{scheme}://{path}"
    container = authority.split("@", 1)[0]  # Azure: container@account.dfs.core.windows.net, paths container/key
    if "@" in authority and (path.startswith(container + "/") or path == container):
        return f"{scheme}://{authority}{path[len(container):]}"
    return f"{scheme}://{authority}{path if path.startswith('/') else '/' + path}"


def is_hidden(relative: str) -> bool:
    """Whether a path (relative to a table's location) is hidden from readers, as Hadoop's and Spark's
    listings hide it: any part starting with ``.`` or ``_`` (``_SUCCESS``, ``.crc`` files, ``_temporary``)."""
    return any(part.startswith((".", "_")) for part in relative.split("/") if part)
