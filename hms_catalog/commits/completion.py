"""Changes a restart completes rather than undoes.

A killed process's last metastore call may still be running in the metastore when the next start looks: the
metastore finishes a call whose client went away, and nothing tells when. An undo could run before that call
lands and the call land after it: the partitions an undo dropped added back, the definitions it restored
replaced again, the partitions it re-added dropped, the table it named back renamed. So a change whose whole
intent is written down before its first step is completed instead, with calls that are the abandoned call's
twins: whichever of the two lands first, the other then changes nothing (an add skips or fails on what exists,
an alter writes the same definition, a drop finds nothing left, a rename finds the table renamed). What a
completion does whatever the abandoned call does, and when it does it, is the change as the statement meant it.

Three changes are completed this way: ADD PARTITION's partitions (here), a write's commit
(:mod:`.write_completion`) and a RENAME (:mod:`.rename_completion`). A completion answers whether the change
happened; one that cannot happen any more (its table dropped since) is left out of the catalog's log.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, cast

from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.writes import MetastoreWrites
from hms_catalog.commits._patience import COMPLETE_PATIENCE, add_missing, deadline
from hms_catalog.commits.rename_completion import complete_rename
from hms_catalog.commits.structs import partitions_from_text, partitions_text
from hms_catalog.commits.write_completion import complete_write
from hms_catalog.errors import NotFoundError
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name
from hms_catalog.storage import files
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["COMPLETIONS", "COMPLETE_PATIENCE", "partitions_intent"]

_log = logging.getLogger(__name__)

_COMPLETE_BATCH = 1000  # partitions per add_partitions call of a completion
FOLDER_CHECKS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)  # seconds between the looks of _Folders.keep


def partitions_intent(keys: list[str], partitions: list[ttypes.Partition]) -> dict[str, Any]:
    """The intent of adding ``partitions`` of one table (none of them existing when it began)."""
    return {"keys": list(keys), **partitions_text(partitions)}


def _complete_added_partitions(client: MetastoreWrites, intent: dict[str, Any], storage: StorageResolver, *,
                               patience: float = COMPLETE_PATIENCE) -> bool:
    """Add whichever of the intended partitions are missing (:func:`add_missing`). Every partition's folder is
    then made if it is missing, and looked after for a while (:meth:`_Folders.keep`). A table that is gone has
    nothing left to complete."""
    partitions = partitions_from_text(intent)
    template = partitions[0] if partitions else ttypes.Partition()
    try:
        add_missing(client, partitions, deadline(patience))
    except NotFoundError:
        _log.warning("the table %s.%s is gone: its unfinished ADD PARTITION is not completed", template.dbName, template.tableName)
        return False
    folders = _Folders(cast(MetastoreCalls, client), storage, template, intent.get("keys") or [], partitions)
    folders.make_missing()
    threading.Thread(target=folders.keep, name="hms-catalog-partition-folders", daemon=True).start()
    return True


class _Folders:
    """The completed partitions' folders, made again where they went missing while the partition is still
    the metastore's, at the location the statement gave it."""

    def __init__(self, reads: MetastoreCalls, storage: StorageResolver, template: ttypes.Partition, keys: list[str],
                 partitions: list[ttypes.Partition]) -> None:
        self.reads = reads
        self.storage = storage
        self.database, self.table = template.dbName, template.tableName
        self.wanted = {make_partition_name(keys, [None if v == DEFAULT_PARTITION else v for v in p.values]): p.sd.location
                       for p in partitions if p.sd is not None and p.sd.location}

    def make_missing(self) -> None:
        missing = {name: location for name, location in self.wanted.items() if not files.exists(self.storage, location)}
        if not missing:
            return
        locations = set(missing.values())
        for start in range(0, len(missing), _COMPLETE_BATCH):
            names = list(missing)[start : start + _COMPLETE_BATCH]
            for partition in self.reads.get_partitions_by_names(self.database, self.table, names):
                location = partition.sd.location if partition.sd is not None else None
                if location is not None and location in locations and not files.exists(self.storage, location):
                    files.make_folder(self.storage, location)

    def keep(self) -> None:
        """Look again a few times over about a minute. The abandoned call fails once the completion has added its
        partitions, and the metastore then takes away the folders that call made, which are now the completed
        partitions' (an empty partition is a folder: engines such as Trino refuse a partition whose location is
        missing). It fails within its own running time, so a few looks spread over a minute find it; a
        partition dropped since is not looked after."""
        for pause in FOLDER_CHECKS:
            time.sleep(pause)
            try:
                self.make_missing()
            except Exception as error:  # noqa: BLE001 - a background look; the next one tries again
                _log.warning("could not make the folders of completed partitions of %s.%s again: %s", self.database, self.table, error)


COMPLETIONS: dict[str, Callable[[MetastoreWrites, dict[str, Any], StorageResolver], bool]] = {
    "add_partitions": _complete_added_partitions,
    "write": complete_write,
    "rename_table": complete_rename,
}
