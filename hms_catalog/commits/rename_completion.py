"""A RENAME that a killed process left unfinished, completed by the next to look.

A RENAME is one ``alter_table`` that gives the table its new name (the metastore moves a managed table's folder
and its partitions' locations with it, inside the call), then for a Spark data source table a second one that
points its ``path`` at the moved folder. Undone after a kill, it is named back only if the new name exists
when the undo looks; a rename still running in the metastore lands after that look and leaves the table
renamed, its ``path`` at a folder that is gone and the change in no log. So the whole of it, both names, is
written down first (:func:`rename_intent`) and a restart completes it (see :mod:`.completion`):

- the new name taken already (by this rename: the table made at the same moment) is the rename landed;
- otherwise, while the table has its old name, it is renamed as the statement meant. The abandoned rename is
  in the way until it ends: it has moved the folder before it commits, and the metastore refuses to move a
  table onto a folder that exists; the completion tries again until it finds the new name or its own call
  goes through. Once one of the two has landed the other is refused (the old name is gone, the new one taken);
- the ``path`` then follows the folder, as the statement's second call does (the abandoned one writes the same).

The table under neither name, or a table of its own under the new one while the old one is still there, leaves
nothing to complete: the rename cannot land any more.
"""

from __future__ import annotations

import logging
import time
from typing import Any, cast

from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.writes import MetastoreWrites
from hms_catalog.commits._patience import deadline, patiently
from hms_catalog.errors import AlreadyExistsError, MetastoreError, MetastoreUnavailableError, NotFoundError
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["complete_rename", "follow_path", "rename_intent"]

_log = logging.getLogger(__name__)
_PAUSE = 0.2  # seconds between looks while the abandoned rename is under way


def rename_intent(table: ttypes.Table, new_database: str, new_table: str, *, follow: bool) -> dict[str, Any]:
    """The rename of ``table`` to ``new_database.new_table``; ``follow``: its ``path`` follows the folder."""
    return {"database": table.dbName.lower(), "table": table.tableName.lower(), "new_database": new_database,
            "new_table": new_table, "created": table.createTime, "follow": follow}


def complete_rename(client: MetastoreWrites, intent: dict[str, Any], storage: StorageResolver) -> bool:
    """Rename the table if it still has its old name, then let its ``path`` follow (the module's docstring says
    why); False when the rename cannot land any more."""
    reads = cast(MetastoreCalls, client)  # a catalog's client reads as well as writes
    old, new = (intent["database"], intent["table"]), (intent["new_database"], intent["new_table"])
    until = deadline()
    while True:
        before = _found(reads, *old)  # the old name first: a rename landing between the two looks is seen landed
        renamed = _found(reads, *new)
        if renamed is not None and renamed.createTime == intent["created"]:
            break
        if before is None or renamed is not None:
            _log.warning("the unfinished RENAME of %s.%s to %s.%s is not completed: %s", *old, *new,
                         "the table is gone" if before is None else "another table has the new name")
            return False
        try:
            client.alter_table(*old, ttypes.Table(**{**before.__dict__, "dbName": new[0], "tableName": new[1]}))
            break
        except MetastoreUnavailableError:
            raise
        except (NotFoundError, AlreadyExistsError, MetastoreError):  # the abandoned rename under way, or landed
            if time.monotonic() > until:
                raise
            time.sleep(_PAUSE)
    if intent["follow"]:
        patiently(lambda: follow_path(client, *new), until)
    return True


def follow_path(client: MetastoreWrites, database: str, table: str) -> None:
    """A Spark data source table's ``path`` pointed at its folder, where the metastore moved it."""
    moved = cast(MetastoreCalls, client).get_table(database, table)
    serde = moved.sd.serdeInfo if moved.sd is not None else None
    if serde is None or "path" not in (serde.parameters or {}) or serde.parameters["path"] == moved.sd.location:
        return
    serde.parameters = {**serde.parameters, "path": moved.sd.location}
    client.alter_table(database, table, moved)


def _found(reads: MetastoreCalls, database: str, table: str) -> ttypes.Table | None:
    try:
        return reads.get_table(database, table)
    except NotFoundError:
        return None
