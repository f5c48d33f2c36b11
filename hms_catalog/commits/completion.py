"""Changes a restart completes rather than undoes: the metastore may still be running a killed process's last
call, so an undo that dropped what the call adds could run before it commits (see :mod:`.undo`). Adding what is
missing converges whatever that call does. Today one change: ADD PARTITION's partitions.
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
from hms_catalog.commits.structs import decode_struct, encode_struct
from hms_catalog.errors import AlreadyExistsError, MetastoreError, MetastoreUnavailableError, NotFoundError
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name
from hms_catalog.storage.resolver import StorageResolver
from hms_catalog.write import staging

__all__ = ["COMPLETIONS", "partitions_intent"]

_log = logging.getLogger(__name__)

COMPLETE_PATIENCE = 60.0  # seconds a completion keeps trying while an abandoned call holds its partitions
_COMPLETE_BATCH = 1000  # partitions per add_partitions call of a completion
FOLDER_CHECKS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)  # seconds between the looks of _keep_folders


def partitions_intent(keys: list[str], partitions: list[ttypes.Partition]) -> dict[str, Any]:
    """The intent of adding ``partitions`` of one table (made alike, differing in values and location only, as
    a statement makes them; none of them existing when it began): one struct as the template and each
    partition's values and location, so that ten thousand partitions are a few hundred kilobytes of log, not
    their structs over and over."""
    template = partitions[0] if partitions else ttypes.Partition()
    return {"keys": list(keys), "template": encode_struct(template),
            "partitions": [[list(p.values), p.sd.location if p.sd is not None else None] for p in partitions]}


def _complete_added_partitions(client: MetastoreWrites, intent: dict[str, Any], storage: StorageResolver, *,
                               patience: float = COMPLETE_PATIENCE) -> None:
    """Add whichever of the intended partitions are missing. While the abandoned call's transaction holds
    some of their names (the metastore keeps a table's partition names unique), an add fails once it commits;
    the next try finds them and skips them. A metastore out of reach is not waited for: the log stays for the
    next look. Every partition's folder is then made if it is missing, and looked after for a while
    (:func:`_keep_folders`). A table that is gone has nothing left to complete."""
    template = decode_struct(intent["template"], ttypes.Partition)
    partitions = [_from_template(template, values, location) for values, location in intent["partitions"]]
    deadline = time.monotonic() + patience
    try:
        for start in range(0, len(partitions), _COMPLETE_BATCH):
            batch = partitions[start : start + _COMPLETE_BATCH]
            while True:
                try:
                    client.add_partitions(batch, if_not_exists=True)
                    break
                except MetastoreUnavailableError:
                    raise
                except (MetastoreError, AlreadyExistsError):
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
    except NotFoundError:
        _log.warning("the table %s.%s is gone: its unfinished ADD PARTITION is not completed", template.dbName, template.tableName)
        return
    folders = _Folders(cast(MetastoreCalls, client), storage, template, intent.get("keys") or [], partitions)
    folders.make_missing()
    threading.Thread(target=folders.keep, name="hms-catalog-partition-folders", daemon=True).start()


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
        missing = {name: location for name, location in self.wanted.items() if not staging.exists(self.storage, location)}
        if not missing:
            return
        locations = set(missing.values())
        for start in range(0, len(missing), _COMPLETE_BATCH):
            names = list(missing)[start : start + _COMPLETE_BATCH]
            for partition in self.reads.get_partitions_by_names(self.database, self.table, names):
                location = partition.sd.location if partition.sd is not None else None
                if location is not None and location in locations and not staging.exists(self.storage, location):
                    staging.make_folder(self.storage, location)

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


def _from_template(template: ttypes.Partition, values: list[str], location: str | None) -> ttypes.Partition:
    sd = None if template.sd is None else ttypes.StorageDescriptor(**{**template.sd.__dict__, "location": location})
    return ttypes.Partition(**{**template.__dict__, "values": list(values), "sd": sd})


COMPLETIONS: dict[str, Callable[[MetastoreWrites, dict[str, Any], StorageResolver], None]] = {
    "add_partitions": _complete_added_partitions,
}
