"""Locations as the metastore records them, made usable by Arrow, pyiceberg and hudi-rs."""

from __future__ import annotations

__all__ = ["normalize_location"]


def normalize_location(location: str) -> str:
    """``file:/x`` (Hadoop's spelling) -> ``file:///x``; other schemes and plain paths unchanged."""
    if location.startswith("file:/") and not location.startswith("file://"):
        return "file:///" + location[len("file:/"):].lstrip("/")
    if location.startswith("file://") and not location.startswith("file:///"):
        return "file:///" + location[len("file://"):].lstrip("/")
    return location
