"""The embedded metastore's Derby database, prepared before its server starts (``PrepareDatabase.java``).

A new directory starts from a copy of a database prepared before (the preparer's JVM is most of a first
start); one that has a database is prepared in place (an upgrade keeps its content). The level a directory's
database was prepared at is kept beside it, so a database prepared at an older level, or never, is prepared
again, in place, on its next start.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from hms_catalog.errors import EmbeddedMetastoreError
from hms_catalog.metastore import _setup

__all__ = ["DATABASE_FOLDER", "PREPARED_MARKER", "SCHEMA_LEVEL", "prepare"]

DATABASE_FOLDER = "metastore_db"
# The preparer's level: 2: the notification log's MESSAGE is a CLOB; 3: every column Hive's Derby schema
# declares CLOB or wider than autoCreateAll makes it has its production type.
PREPARED_MARKER = "metastore_db.prepared"
SCHEMA_LEVEL = "3"


def prepare(directory: Path, jars: Path, java: list[str], classpath: str, env: dict[str, str],
            log_tail: Callable[[], str]) -> None:
    """Make ``directory``'s Derby database one the preparer made at the current level (``java``: the command
    that starts a JVM, before its classpath; ``log_tail``: the server log's end, for errors)."""
    db_dir = directory / DATABASE_FOLDER
    marker = directory / PREPARED_MARKER
    if _prepared_at_current_level(db_dir, marker):
        return
    if not _setup.copy_prepared_database(db_dir, jars, SCHEMA_LEVEL):
        fresh = not db_dir.exists()
        result = subprocess.run(
            [*java, "-cp", classpath, _setup.PREPARER_CLASS],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, check=False, cwd=directory,
        )
        if result.returncode != 0:
            raise EmbeddedMetastoreError(
                f"could not prepare the metastore database in {db_dir}:\n{result.stderr[-2000:]}\n{log_tail()}"
            )
        if fresh:
            _setup.keep_prepared_database(db_dir, jars, SCHEMA_LEVEL)
    marker.write_text(SCHEMA_LEVEL, encoding="utf-8")


def _prepared_at_current_level(db_dir: Path, marker: Path) -> bool:
    if not db_dir.exists() or not marker.exists():
        return False
    return marker.read_text(encoding="utf-8").strip() == SCHEMA_LEVEL
