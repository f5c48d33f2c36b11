"""The embedded metastore's refusals to start that a caller can act on: one already running, a port taken."""

from __future__ import annotations

from pathlib import Path

from hms_catalog.errors import EmbeddedMetastoreError, ErrorKind

__all__ = ["MetastoreAlreadyRunning", "MetastorePortInUse"]


class MetastoreAlreadyRunning(EmbeddedMetastoreError):
    """``start`` was asked of a directory whose metastore is running; ``uri`` says where."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, directory: Path, uri: str, pid: int) -> None:
        self.uri = uri
        self.pid = pid
        super().__init__(f"a metastore is already running for {directory} at {uri} (pid {pid})")


class MetastorePortInUse(EmbeddedMetastoreError):
    """The port a start was to take is in use; ``remembered`` when it is the one the directory's metastore
    listened on before (the one its catalogs name), so the message says how to move them too."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, directory: Path, port: int, *, remembered: bool) -> None:
        self.port = port
        self.remembered = remembered
        message = f"port {port} is already in use; stop what listens there or pick another with --port"
        if remembered:
            message = (
                f"port {port} is already in use; the metastore of {directory} listened there before, and catalogs "
                f"defined over it name thrift://127.0.0.1:{port}. Stop what listens there, or start on another port "
                f"with --port N (0 picks a free one; EmbeddedMetastore(..., port=N) in Python) and point those "
                f"catalogs at it: ALTER CATALOG <name> SET PROPERTIES ('hive.metastore.uris'='thrift://127.0.0.1:N')"
            )
        super().__init__(message)

